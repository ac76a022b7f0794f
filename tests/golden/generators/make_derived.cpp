/* Writes BP5 datasets with derived variables (IO::DefineDerivedVariable) for tests/golden/derived.
 * Needs an ADIOS2 built with -DADIOS2_USE_Derived_Variable=ON (not the default, nor the PyPI
 * wheel's); built outside the project:
 *   c++ -std=c++17 make_derived.cpp -ladios2_cxx -ladios2_core && ./a.out OUTDIR
 * derived.bp: StoreData (written as a plain array), StatsOnly (metadata and min/max only) and
 * ExpressionString (the expression only) variables over 1-D and 2-D arrays, the 2-D ones put in
 * two blocks a step, 3 steps. */
#include <adios2.h>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    std::string out = argc > 1 ? argv[1] : ".";
    adios2::ADIOS adios;
    auto io = adios.DeclareIO("io");
    io.SetEngine("BP5");
    auto x = io.DefineVariable<double>("sim/x", {6}, {0}, {6});
    auto y = io.DefineVariable<double>("sim/y", {6}, {0}, {6});
    auto z = io.DefineVariable<float>("sim/z", {2, 3}, {0, 0}, {2, 3});
    auto u = io.DefineVariable<double>("mesh/u", {4, 3}, {0, 0}, {2, 3});
    auto v = io.DefineVariable<double>("mesh/v", {4, 3}, {0, 0}, {2, 3});
    using DT = adios2::DerivedVarType;
    io.DefineDerivedVariable("derived/store", "a = sim/x\nb = sim/y\na+b", DT::StoreData);
    io.DefineDerivedVariable("derived/stats", "a = sim/x\nb = sim/y\nmagnitude(a,b)", DT::StatsOnly);
    io.DefineDerivedVariable("derived/expr", "a = sim/x\nb = sim/y\na-b", DT::ExpressionString);
    io.DefineDerivedVariable("zsq", "a = sim/z\npow(a)", DT::StoreData);
    io.DefineDerivedVariable("mesh/mag", "a = mesh/u\nb = mesh/v\nmagnitude(a,b)", DT::StatsOnly);
    io.DefineDerivedVariable("mesh/sum", "a = mesh/u\nb = mesh/v\na+b", DT::ExpressionString);
    io.DefineAttribute<std::string>("units", "m", "sim/x");
    auto e = io.Open(out + "/derived.bp", adios2::Mode::Write);
    for (int s = 0; s < 3; s++) {
        e.BeginStep();
        std::vector<double> xv(6), yv(6), uv(6), vv(6);
        std::vector<float> zv(6);
        for (int i = 0; i < 6; i++) {
            xv[i] = i + s;
            yv[i] = 2.0 * i - 3;
            zv[i] = 0.5f * i - s;
        }
        e.Put(x, xv.data(), adios2::Mode::Sync);
        e.Put(y, yv.data(), adios2::Mode::Sync);
        e.Put(z, zv.data(), adios2::Mode::Sync);
        for (int b = 0; b < 2; b++) {
            for (int i = 0; i < 6; i++) {
                uv[i] = 10 * b + i - s;
                vv[i] = 0.25 * i * (b + 1);
            }
            u.SetSelection({{(size_t)(2 * b), 0}, {2, 3}});
            v.SetSelection({{(size_t)(2 * b), 0}, {2, 3}});
            e.Put(u, uv.data(), adios2::Mode::Sync);
            e.Put(v, vv.data(), adios2::Mode::Sync);
        }
        e.EndStep();
    }
    e.Close();
    return 0;
}
