/* Writes ADIOS2 datasets whose variable x is stored through a plugin operator (xor_plugin.cpp,
 * PluginName XorOp, PluginLibrary xorop) for tests/golden/selsteps: plugin5.bp (BP5) and
 * plugin4.bp (BP4), 2 steps of x double {8} = 10 step + i + 0.5 (the operator) and plain int32
 * {3} = {step, step + 1, step + 2} (none). Built and run outside the project:
 *   c++ -std=c++17 make_plugin.cpp -ladios2_cxx -ladios2_core -o make_plugin
 *   ADIOS2_PLUGIN_PATH=DIR_OF_libxorop.so ./make_plugin OUTDIR */
#include <adios2.h>
#include <vector>
int main(int argc, char **argv)
{
    adios2::ADIOS adios;
    for (int e = 0; e < 2; e++) {
        adios2::IO io = adios.DeclareIO(e ? "b4" : "b5");
        io.SetEngine(e ? "BP4" : "BP5");
        io.SetParameter("Profile", "Off");
        auto v = io.DefineVariable<double>("x", {8}, {0}, {8});
        auto w = io.DefineVariable<int32_t>("plain", {3}, {0}, {3});
        v.AddOperation("plugin", {{"PluginName", "XorOp"}, {"PluginLibrary", "xorop"}});
        adios2::Engine en = io.Open(std::string(argv[1]) + (e ? "/plugin4.bp" : "/plugin5.bp"), adios2::Mode::Write);
        for (int s = 0; s < 2; s++) {
            en.BeginStep();
            std::vector<double> x(8);
            for (int i = 0; i < 8; i++) x[i] = 10 * s + i + 0.5;
            std::vector<int32_t> p = {s, s + 1, s + 2};
            en.Put(v, x.data(), adios2::Mode::Sync);
            en.Put(w, p.data(), adios2::Mode::Sync);
            en.EndStep();
        }
        en.Close();
    }
    return 0;
}
