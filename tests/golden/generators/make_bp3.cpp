/* Writes ADIOS2 BP3 datasets (the legacy engine: io.SetEngine("BP3")) for tests/golden/bp3.
 * Built outside the project against ADIOS2 (C++ API; the blosc files need ADIOS2 with Blosc2):
 *   c++ -std=c++17 make_bp3.cpp -ladios2_cxx -ladios2_core && ./a.out OUTDIR
 * BP3 writes NAME.bp (the metadata file: PG index, variables index, attributes index, footer)
 * and NAME.bp.dir/NAME.bp.0 (the data). Writes into OUTDIR:
 *   bp3_basic.bp    3 steps: a 2-D double array of two blocks, a 1-D int32 array, an int64 value,
 *                   a local float array, a local int32 value, a string value, a uint8 array, a
 *                   complex<double> array, an array of steps 1-2 only; attributes of every kind
 *   bp3_types.bp    1 step: a 1-D global array of every numeric type (and char)
 *   bp3_zlib.bp, bp3_lz4.bp, bp3_zstd.bp   2 steps of 100000 doubles, blosc operator (clevel 1,
 *                   BLOSC_SHUFFLE); a codec the build lacks is reported and skipped. The values,
 *                   sin(k/1000 + step) rounded to multiples of 1/1024, have short mantissas so that
 *                   the files stay small (full-precision sin barely compresses: 1.2 MB a file)
 *   bp3_nostats.bp  2 steps of a global array, StatsLevel=0
 *   bp3_gap101.bp, bp3_gap0011.bp   an array put in steps 0 and 2 of 3, in steps 2 and 3 of 4:
 *                   the other steps have no put at all
 * Every value is fixed (no seed). Profile=Off: no profiling.json. */
#include <adios2.h>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

static adios2::IO newio(adios2::ADIOS &adios, const std::string &name)
{
    adios2::IO io = adios.DeclareIO(name);
    io.SetEngine("BP3");
    io.SetParameter("Profile", "Off");
    return io;
}

static void basic(adios2::ADIOS &adios, const std::string &path)
{
    adios2::IO io = newio(adios, "basic");
    auto a2 = io.DefineVariable<double>("a2d", {4, 5}, {0, 0}, {2, 5});      /* two blocks of rows */
    auto i1 = io.DefineVariable<int32_t>("i1d", {6}, {0}, {6});
    auto gv = io.DefineVariable<int64_t>("gval");                            /* global value */
    auto la = io.DefineVariable<float>("local_f", {}, {}, {3});              /* local array */
    auto lv = io.DefineVariable<int32_t>("local_v", {adios2::LocalValueDim}); /* local value */
    auto sv = io.DefineVariable<std::string>("str");
    auto u8 = io.DefineVariable<uint8_t>("u8", {5}, {0}, {5});
    auto cz = io.DefineVariable<std::complex<double>>("cplx", {3}, {0}, {3});
    auto late = io.DefineVariable<double>("late", {2}, {0}, {2});            /* steps 1, 2 only */
    io.DefineAttribute<double>("att_double", 3.25);
    const int32_t ia[4] = {-1, 2, -3, 4};
    io.DefineAttribute<int32_t>("att_ints", ia, 4);
    io.DefineAttribute<std::string>("att_str", "hello bp3");
    const std::string sa[3] = {"one", "two", "three"};
    io.DefineAttribute<std::string>("att_strs", sa, 3);
    io.DefineAttribute<std::string>("units", "m/s", "a2d");                  /* variable attribute */

    adios2::Engine e = io.Open(path, adios2::Mode::Write);
    for (int s = 0; s < 3; s++) {
        e.BeginStep();
        for (int blk = 0; blk < 2; blk++) {
            std::vector<double> a(10);
            for (int k = 0; k < 10; k++) a[k] = 100 * s + 10 * blk + k + 0.5;
            a2.SetSelection({{(size_t)(2 * blk), 0}, {2, 5}});
            e.Put(a2, a.data(), adios2::Mode::Sync);
        }
        std::vector<int32_t> iv(6);
        for (int k = 0; k < 6; k++) iv[k] = 1000 * s - 7 * k;
        e.Put(i1, iv.data(), adios2::Mode::Sync);
        e.Put(gv, (int64_t)((s - 1) * 10000000000LL));
        std::vector<float> f(3);
        for (int k = 0; k < 3; k++) f[k] = 0.25f * k - s;
        e.Put(la, f.data(), adios2::Mode::Sync);
        e.Put(lv, (int32_t)(42 + s));
        e.Put(sv, std::string("step ") + std::to_string(s));
        std::vector<uint8_t> u(5);
        for (int k = 0; k < 5; k++) u[k] = (uint8_t)(250 + k - s);
        e.Put(u8, u.data(), adios2::Mode::Sync);
        std::vector<std::complex<double>> z(3);
        for (int k = 0; k < 3; k++) z[k] = {k + 0.5 * s, -1.0 * k};
        e.Put(cz, z.data(), adios2::Mode::Sync);
        if (s >= 1) {
            double l[2] = {s * 1.5, -s * 1.5};
            e.Put(late, l, adios2::Mode::Sync);
        }
        e.EndStep();
    }
    e.Close();
}

template <class T> static void arr(adios2::IO &io, adios2::Engine &e, const std::string &n,
                                   std::vector<T> v)
{
    auto var = io.DefineVariable<T>(n, {v.size()}, {0}, {v.size()});
    e.Put(var, v.data(), adios2::Mode::Sync);
}

static void types(adios2::ADIOS &adios, const std::string &path)
{
    adios2::IO io = newio(adios, "types");
    adios2::Engine e = io.Open(path, adios2::Mode::Write);
    e.BeginStep();
    arr<int8_t>(io, e, "i8", {-128, -1, 0, 1, 127});
    arr<int16_t>(io, e, "i16", {-32768, -1, 0, 1, 32767});
    arr<int32_t>(io, e, "i32", {INT32_MIN, -1, 0, 1, INT32_MAX});
    arr<int64_t>(io, e, "i64", {INT64_MIN, -1, 0, 1, INT64_MAX});
    arr<uint8_t>(io, e, "u8", {0, 1, 127, 128, 255});
    arr<uint16_t>(io, e, "u16", {0, 1, 32767, 32768, 65535});
    arr<uint32_t>(io, e, "u32", {0, 1, 2147483647u, 2147483648u, 4294967295u});
    arr<uint64_t>(io, e, "u64", {0, 1, 9223372036854775807ull, 9223372036854775808ull,
                                 18446744073709551615ull});
    arr<float>(io, e, "f32", {-1.5f, 0.0f, 0.25f, 3.0e10f, -1.0e-10f});
    arr<double>(io, e, "f64", {-1.5, 0.0, 0.25, 3.0e100, -1.0e-100});
    arr<long double>(io, e, "f128", {-1.5L, 0.0L, 0.25L, 3.0e100L, -1.0e-100L});
    arr<std::complex<float>>(io, e, "c64", {{1.0f, -1.0f}, {0.5f, 2.0f}, {-3.0f, 0.0f}});
    arr<std::complex<double>>(io, e, "c128", {{1.0, -1.0}, {0.5, 2.0}, {-3.0, 0.0}});
    arr<char>(io, e, "ch", {'B', 'P', '3', ' ', 'z'});
    e.EndStep();
    e.Close();
}

static bool blosc(adios2::ADIOS &adios, const std::string &path, const std::string &codec)
{
    try {
        adios2::IO io = newio(adios, "blosc_" + codec);
        auto op = adios.DefineOperator("blosc_op_" + codec, "blosc");
        auto v = io.DefineVariable<double>("sin", {100000}, {0}, {100000});
        v.AddOperation(op, {{"compressor", codec}, {"clevel", "1"}, {"doshuffle", "BLOSC_SHUFFLE"}});
        adios2::Engine e = io.Open(path, adios2::Mode::Write);
        std::vector<double> d(100000);
        for (int s = 0; s < 2; s++) {
            for (size_t k = 0; k < d.size(); k++)
                d[k] = std::round(1024 * std::sin(k * 1e-3 + s)) / 1024;
            e.BeginStep();
            e.Put(v, d.data(), adios2::Mode::Sync);
            e.EndStep();
        }
        e.Close();
        return true;
    } catch (std::exception &ex) {
        std::fprintf(stderr, "skipped %s: %s\n", path.c_str(), ex.what());
        return false;
    }
}

static void nostats(adios2::ADIOS &adios, const std::string &path)
{
    adios2::IO io = newio(adios, "nostats");
    io.SetParameter("StatsLevel", "0");
    auto v = io.DefineVariable<double>("x", {8}, {0}, {8});
    adios2::Engine e = io.Open(path, adios2::Mode::Write);
    for (int s = 0; s < 2; s++) {
        std::vector<double> d(8);
        for (int k = 0; k < 8; k++) d[k] = k * 0.5 - 10 * s;
        e.BeginStep();
        e.Put(v, d.data(), adios2::Mode::Sync);
        e.EndStep();
    }
    e.Close();
}

/* Steps without puts: "a" double {2} put in the steps whose pattern character is '1' (0011: the
 * first two steps empty; 101: the middle one). ADIOS2's BP3 writer leaves such a step out of the PG
 * index but counts it in the later blocks' time index (bpls -D numbers the blocks by it). */
static void gaps(adios2::ADIOS &adios, const std::string &path, const char *pattern)
{
    adios2::IO io = newio(adios, std::string("gaps") + pattern);
    auto a = io.DefineVariable<double>("a", {2}, {0}, {2});
    adios2::Engine e = io.Open(path, adios2::Mode::Write);
    for (size_t s = 0; pattern[s]; s++) {
        e.BeginStep();
        double d[2] = {s + 0.5, -(s + 0.5)};
        if (pattern[s] == '1') e.Put(a, d, adios2::Mode::Sync);
        e.EndStep();
    }
    e.Close();
}

int main(int argc, char **argv)
{
    std::string out = argc > 1 ? argv[1] : ".";
    adios2::ADIOS adios;
    basic(adios, out + "/bp3_basic.bp");
    types(adios, out + "/bp3_types.bp");
    for (const char *c : {"zlib", "lz4", "zstd"}) blosc(adios, out + "/bp3_" + c + ".bp", c);
    nostats(adios, out + "/bp3_nostats.bp");
    gaps(adios, out + "/bp3_gap101.bp", "101");
    gaps(adios, out + "/bp3_gap0011.bp", "0011");
    return 0;
}
