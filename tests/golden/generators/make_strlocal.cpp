/* Writes tests/golden/strlocal: a string local value (LocalValueDim) "s" put twice in each of 2
 * steps ("abS", then "x"), with the engine named (BP3, BP4 or BP5). bpls -laD prints each block's
 * value as its min and max (= "ab0" / "ab0"; BP5: = "(null)" / "(null)"). Built outside the
 * project against ADIOS2 (C++ API):
 *   c++ -std=c++17 make_strlocal.cpp -ladios2_cxx -ladios2_core -o make_strlocal
 *   ./make_strlocal OUTDIR/strlocal_bp3.bp BP3   (and _bp4 BP4, _bp5 BP5)
 * Every value is fixed. Profile=Off: no profiling.json. */
#include <adios2.h>
#include <string>

int main(int argc, char **argv)
{
    adios2::ADIOS adios;
    auto io = adios.DeclareIO("io");
    io.SetEngine(argc > 2 ? argv[2] : "BP3");
    io.SetParameter("Profile", "Off");
    auto v = io.DefineVariable<std::string>("s", {adios2::LocalValueDim});
    auto e = io.Open(argv[1], adios2::Mode::Write);
    for (int s = 0; s < 2; s++) {
        e.BeginStep();
        e.Put(v, std::string("ab") + std::to_string(s), adios2::Mode::Sync);
        e.Put(v, std::string("x"), adios2::Mode::Sync);
        e.EndStep();
    }
    e.Close();
    return 0;
}
