/* Writes ADIOS2 datasets for tests/golden/selsteps: reader parameters that change what a reader
 * sees (BP5's SelectSteps and IgnoreFlattenSteps) and the operators a file uses.
 * Built outside the project against ADIOS2 2.12.1 with Blosc2 (C++ API):
 *   c++ -std=c++17 make_selsteps.cpp -ladios2_cxx -ladios2_core && ./a.out OUTDIR
 * Writes into OUTDIR:
 *   steps5.bp     BP5, 5 steps: g double {4, 6} (one block; 100 * step + index), l int32 local
 *                 array (count 3: (step + 1) * index), s int64 value (7 * step), str string value
 *                 ("step N"), sparse float {5} in steps 1 and 3 only, z double {64} compressed
 *                 with blosc (zstd) in every step; attribute a0 (double {1.5, 2.5}) defined
 *                 before step 0, a2 (string) defined in step 2
 *   flat5.bp      the same with FlattenSteps=on (the 5 steps read as one)
 *   steps4.bp     the same in BP4 (ADIOS2's BP4 reader has no SelectSteps)
 * Every value is fixed (no seed). Profile=Off: no profiling.json. */
#include <adios2.h>
#include <cstdint>
#include <string>
#include <vector>

static void write(adios2::ADIOS &adios, const std::string &path, const std::string &engine,
                  bool flatten)
{
    adios2::IO io = adios.DeclareIO(path);
    io.SetEngine(engine);
    io.SetParameter("Profile", "Off");
    if (flatten)
        io.SetParameter("FlattenSteps", "on");
    auto g = io.DefineVariable<double>("g", {4, 6}, {0, 0}, {4, 6});
    auto l = io.DefineVariable<int32_t>("l", {}, {}, {3});
    auto s = io.DefineVariable<int64_t>("s");
    auto str = io.DefineVariable<std::string>("str");
    auto sp = io.DefineVariable<float>("sparse", {5}, {0}, {5});
    auto z = io.DefineVariable<double>("z", {64}, {0}, {64});
    z.AddOperation("blosc", {{"compressor", "zstd"}, {"clevel", "1"}, {"doshuffle", "BLOSC_SHUFFLE"}});
    const double a0[2] = {1.5, 2.5};
    io.DefineAttribute<double>("a0", a0, 2);
    adios2::Engine e = io.Open(path, adios2::Mode::Write);
    for (int k = 0; k < 5; k++) {
        e.BeginStep();
        if (k == 2)
            io.DefineAttribute<std::string>("a2", "at step two");
        std::vector<double> gv(24), zv(64);
        for (int i = 0; i < 24; i++)
            gv[i] = 100.0 * k + i;
        for (int i = 0; i < 64; i++)
            zv[i] = 0.25 * i + k;
        std::vector<int32_t> lv = {0, k + 1, 2 * (k + 1)};
        e.Put(g, gv.data(), adios2::Mode::Sync);
        e.Put(l, lv.data(), adios2::Mode::Sync);
        e.Put(s, (int64_t)(7 * k), adios2::Mode::Sync);
        e.Put(str, "step " + std::to_string(k), adios2::Mode::Sync);
        if (k == 1 || k == 3) {
            std::vector<float> sv = {1.0f + k, 2.0f + k, 3.0f + k, 4.0f + k, 5.0f + k};
            e.Put(sp, sv.data(), adios2::Mode::Sync);
        }
        e.Put(z, zv.data(), adios2::Mode::Sync);
        e.EndStep();
    }
    e.Close();
}

int main(int argc, char **argv)
{
    std::string out = argc > 1 ? argv[1] : ".";
    adios2::ADIOS adios;
    write(adios, out + "/steps5.bp", "BP5", false);
    write(adios, out + "/flat5.bp", "BP5", true);
    write(adios, out + "/steps4.bp", "BP4", false);
    return 0;
}
