/* A trivial ADIOS2 plugin operator (plugin interface v2, ADIOS2 2.12) for tests/golden/selsteps:
 * every byte XOR 0x5A. Built outside the project as libxorop.so, found through ADIOS2_PLUGIN_PATH:
 *   c++ -std=c++17 -shared -fPIC -I$ADIOS2/include xor_plugin.cpp -o libxorop.so */
#include <adios2/plugin/PluginOperatorInterface.h>
#include <cstring>
class XorOp : public adios2::plugin::PluginOperatorInterface
{
public:
    XorOp(const adios2::Params &p) : PluginOperatorInterface(p) {}
    size_t Operate(const char *in, const adios2::Dims &, const adios2::Dims &count,
                   const adios2::DataType type, char *out) override
    {
        size_t n = adios2::GetDataTypeSize(type);
        for (auto c : count) n *= c;
        for (size_t i = 0; i < n; i++) out[i] = in[i] ^ 0x5A;
        return n;
    }
    size_t InverseOperate(const char *in, const size_t n, char *out) override
    {
        for (size_t i = 0; i < n; i++) out[i] = in[i] ^ 0x5A;
        return n;
    }
    bool IsDataTypeValid(const adios2::DataType) const override { return true; }
};
extern "C" {
adios2::plugin::PluginOperatorInterface *OperatorCreate(const adios2::Params &p) { return new XorOp(p); }
void OperatorDestroy(adios2::plugin::PluginOperatorInterface *o) { delete o; }
}
