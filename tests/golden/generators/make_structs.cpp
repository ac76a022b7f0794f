/* Writes BP5 datasets with struct variables (ADIOS2's DefineStruct / DefineStructVariable, BP5
 * only: BP4 refuses them, and a struct single value crashes ADIOS2's writer), for
 * tests/golden/structs. Built outside the project against ADIOS2 (C++ API):
 *   c++ -std=c++17 make_structs.cpp -ladios2_cxx -ladios2_core && ./a.out OUTDIR
 * Writes OUTDIR/structs.bp (default statistics) and OUTDIR/structs_nostats.bp (StatsLevel=0). */
#include <adios2.h>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

struct particle { int8_t a; int32_t b[4]; double c; };       /* 32 bytes, padding after a */
struct pair { double x; double y; };                         /* 16 bytes: a MetaArrayMM16 record */
struct small { float f; uint16_t u; char ch; };              /* 8 bytes: a MetaArrayMM8 record */
struct cplx { std::complex<float> z; int64_t n; uint8_t m[3]; }; /* 24 bytes, complex4 field */

static void write(const std::string &path, bool stats)
{
    adios2::ADIOS adios;
    adios2::IO io = adios.DeclareIO("io");
    io.SetEngine("BP5");
    if (!stats) io.SetParameter("StatsLevel", "0");
    /* the default selective metadata aggregation crashes (2.12.1) or hangs (ecf587ce8) on a step
     * with more than one struct definition */
    io.SetParameter("UseSelectiveMetadataAggregation", "false");

    auto pd = io.DefineStruct("particle", sizeof(particle));
    pd.AddField("a", offsetof(particle, a), adios2::DataType::Int8);
    pd.AddField("b", offsetof(particle, b), adios2::DataType::Int32, 4);
    pd.AddField("c", offsetof(particle, c), adios2::DataType::Double);
    auto qd = io.DefineStruct("pair", sizeof(pair));
    qd.AddField("x", offsetof(pair, x), adios2::DataType::Double);
    qd.AddField("y", offsetof(pair, y), adios2::DataType::Double);
    auto sd = io.DefineStruct("small", sizeof(small));
    sd.AddField("f", offsetof(small, f), adios2::DataType::Float);
    sd.AddField("u", offsetof(small, u), adios2::DataType::UInt16);
    sd.AddField("ch", offsetof(small, ch), adios2::DataType::Int8); /* Char: ADIOS2 cannot read it back */
    auto cd = io.DefineStruct("cplx", sizeof(cplx));
    cd.AddField("z", offsetof(cplx, z), adios2::DataType::FloatComplex);
    cd.AddField("n", offsetof(cplx, n), adios2::DataType::Int64);
    cd.AddField("m", offsetof(cplx, m), adios2::DataType::UInt8, 3);

    /* names sorted so that struct variables sit between others in bpls's listing */
    auto va = io.DefineVariable<double>("a_field", {4, 3}, {0, 0}, {4, 3});
    auto vp = io.DefineStructVariable("particles", pd, {10, 2}, {0, 0}, {5, 2});
    auto vq = io.DefineStructVariable("grp/pairs", qd, {6}, {0}, {6});
    auto vs = io.DefineStructVariable("local_small", sd, {}, {}, {3});
    auto vc = io.DefineStructVariable("cplx", cd, {2, 2}, {0, 0}, {2, 2});
    auto vz = io.DefineVariable<int32_t>("z_step");
    io.DefineAttribute<int32_t>("AttInt", 110);
    io.DefineAttribute<std::string>("units", "m", "particles");

    adios2::Engine e = io.Open(path, adios2::Mode::Write);
    for (int s = 0; s < 3; s++) {
        e.BeginStep();
        std::vector<double> a(12);
        for (int k = 0; k < 12; k++) a[k] = k + 0.5 * s;
        e.Put(va, a.data(), adios2::Mode::Sync);

        /* particles: two blocks per step (rows 0-4 and 5-9); the second left out at step 1 */
        for (int blk = 0; blk < (s == 1 ? 1 : 2); blk++) {
            std::vector<particle> p(10);
            std::memset(p.data(), 0, p.size() * sizeof(particle)); /* padding bytes are 0 */
            for (int k = 0; k < 10; k++) {
                int g = blk * 10 + k;
                p[k].a = (int8_t)(g - 3 * s);
                for (int j = 0; j < 4; j++) p[k].b[j] = 1000 * s + 10 * g + j;
                p[k].c = g * 0.25 - s;
            }
            vp.SetSelection({{(size_t)(5 * blk), 0}, {5, 2}});
            e.Put(vp, p.data(), adios2::Mode::Sync);
        }
        if (s != 2) { /* grp/pairs absent from the last step */
            std::vector<pair> q(6);
            for (int k = 0; k < 6; k++) { q[k].x = k + s; q[k].y = -k * 1.5; }
            e.Put(vq, q.data(), adios2::Mode::Sync);
        }
        /* local_small: 1 + s blocks of 3, 2 elements */
        for (int blk = 0; blk <= s; blk++) {
            std::vector<small> m(3);
            std::memset(m.data(), 0, m.size() * sizeof(small));
            for (int k = 0; k < 3; k++) {
                m[k].f = 0.5f * k + blk + s;
                m[k].u = (uint16_t)(65535 - 100 * s - 10 * blk - k);
                m[k].ch = (char)('A' + 3 * blk + k);
            }
            vs.SetSelection({{}, {(size_t)(blk == 1 ? 2 : 3)}});
            e.Put(vs, m.data(), adios2::Mode::Sync);
        }
        std::vector<cplx> c(4);
        std::memset(c.data(), 0, c.size() * sizeof(cplx));
        for (int k = 0; k < 4; k++) {
            c[k].z = std::complex<float>(k + 0.5f, -s - 0.25f);
            c[k].n = (int64_t)-1 - k - (int64_t(1) << 40) * s;
            for (int j = 0; j < 3; j++) c[k].m[j] = (uint8_t)(200 + 10 * j + k + s);
        }
        e.Put(vc, c.data(), adios2::Mode::Sync);
        e.Put(vz, s);
        e.EndStep();
    }
    e.Close();
}

int main(int argc, char **argv)
{
    std::string out = argc > 1 ? argv[1] : ".";
    write(out + "/structs.bp", true);
    write(out + "/structs_nostats.bp", false);
    return 0;
}
