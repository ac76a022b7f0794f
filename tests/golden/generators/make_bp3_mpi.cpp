/* Writes multi-writer ADIOS2 BP3 datasets (engine "BP3" run by several MPI ranks: one process
 * group (PG) per rank and step in the index, one or several data sub-files) for
 * tests/golden/bp3mpi.
 * Built and run outside the project against ADIOS2 built with MPI (C++ API; the blosc variable
 * needs ADIOS2 with Blosc2):
 *   mpicxx -std=c++17 -DADIOS2_USE_MPI -I/tmp/a2mpi/inst/include make_bp3_mpi.cpp \
 *       -L/tmp/a2mpi/inst/lib -ladios2_cxx_mpi -ladios2_cxx -ladios2_core_mpi -ladios2_core \
 *       -Wl,-rpath,/tmp/a2mpi/inst/lib -o make_bp3_mpi
 *   export LD_LIBRARY_PATH=/tmp/a2mpi/inst/lib:/tmp/b2inst/lib
 *   mpirun -n NRANKS ./make_bp3_mpi OUTDIR [VARIANT...]
 * (OpenMPI as root: mpirun --allow-run-as-root --oversubscribe.) Without -DADIOS2_USE_MPI the
 * header hides ADIOS(MPI_Comm). Writes OUTDIR/bp3mpi_nNRANKS_VARIANT.bp (NAME.bp, the metadata
 * file, and NAME.bp.dir/NAME.bp.K, the data sub-files); VARIANT (default, agg2, aggN, nostats when
 * none is named):
 *   default  no aggregation parameter: one aggregator per node, i.e. one sub-file here (.bp.0)
 *   aggK     NumAggregators=K (e.g. agg2): K sub-files of contiguous rank groups
 *   aggN     NumAggregators=NRANKS: one sub-file per rank
 *   nostats  StatsLevel=0 (no min/max characteristics), default aggregation
 * Content, 3 steps; rank r of n, step s, k the index within the rank's own block:
 *   g2d    double, global {2n, 6}: rank r puts rows [2r, 2r+2) (k row-major over its 2 x 6):
 *          1000*s + 100*r + k + 0.25
 *   i1d    int32, global {n(n+1)/2}: rank r puts r+1 values from r(r+1)/2: -(1000*s + 10*r + k)
 *   loc    float local array, count r+2: 0.5*k - 10*r + 100*s
 *   lv     int32 local value (LocalValueDim), one per rank: 10*r + s
 *   gv     int64 global value, put by rank 0 only: 1000000000000*(s+1) + 7
 *   str    string local value (LocalValueDim), one per rank: "rank R step S"
 *   some   double, global {2*W_s}: only the W_s ranks with (r + s) % 2 == 0 put, 2 values each
 *          (10*s + r, -(10*s + r)) at 2 * (the rank's index among them): no holes; the shape
 *          changes with the step when n is odd
 *   z      double, global {128n}, blosc operator (compressor zlib, clevel 1, BLOSC_SHUFFLE) when
 *          ADIOS2 has blosc (else uncompressed, said on stderr): s + r + (k / 16) * 0.5
 *   attributes, defined by rank 0 only: att_str "multi-writer bp3", att_ints {1, -2, 3},
 *          att_nranks (int32 n), units "m" on variable g2d (g2d/units)
 * Profile=Off: no profiling.json. Every value is fixed (no seed): two runs write identical
 * files. */
#include <adios2.h>
#include <mpi.h>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

static int rank, nranks;

static void write(adios2::ADIOS &adios, const std::string &path, const std::string &variant)
{
    adios2::IO io = adios.DeclareIO("io_" + variant);
    io.SetEngine("BP3");
    io.SetParameter("Profile", "Off");
    if (variant == "aggN") io.SetParameter("NumAggregators", std::to_string(nranks));
    else if (variant.compare(0, 3, "agg") == 0)
        io.SetParameter("NumAggregators", variant.substr(3));
    else if (variant == "nostats") io.SetParameter("StatsLevel", "0");
    const size_t n = nranks, r = rank;

    auto g2d = io.DefineVariable<double>("g2d", {2 * n, 6}, {2 * r, 0}, {2, 6}, true);
    auto i1d =
        io.DefineVariable<int32_t>("i1d", {n * (n + 1) / 2}, {r * (r + 1) / 2}, {r + 1}, true);
    auto loc = io.DefineVariable<float>("loc", {}, {}, {r + 2}, true);
    auto lv = io.DefineVariable<int32_t>("lv", {adios2::LocalValueDim});
    auto gv = io.DefineVariable<int64_t>("gv");
    auto str = io.DefineVariable<std::string>("str", {adios2::LocalValueDim});
    auto some = io.DefineVariable<double>("some", {2}, {0}, {2}, false);
    auto z = io.DefineVariable<double>("z", {128 * n}, {128 * r}, {128}, true);
    bool blosc = false;
    try {
        auto op = adios.DefineOperator("blosc_" + variant, "blosc");
        z.AddOperation(op,
                       {{"compressor", "zlib"}, {"clevel", "1"}, {"doshuffle", "BLOSC_SHUFFLE"}});
        blosc = true;
    } catch (std::exception &ex) {
        if (rank == 0) std::fprintf(stderr, "no blosc (%s): z uncompressed\n", ex.what());
    }
    if (rank == 0) {
        io.DefineAttribute<std::string>("att_str", "multi-writer bp3");
        const int32_t ia[3] = {1, -2, 3};
        io.DefineAttribute<int32_t>("att_ints", ia, 3);
        io.DefineAttribute<int32_t>("att_nranks", nranks);
        io.DefineAttribute<std::string>("units", "m", "g2d");
    }

    adios2::Engine e = io.Open(path, adios2::Mode::Write);
    for (int s = 0; s < 3; s++) {
        e.BeginStep();
        std::vector<double> a(12);
        for (size_t k = 0; k < 12; k++) a[k] = 1000.0 * s + 100.0 * r + k + 0.25;
        e.Put(g2d, a.data(), adios2::Mode::Sync);
        std::vector<int32_t> iv(r + 1);
        for (size_t k = 0; k <= r; k++) iv[k] = -(int32_t)(1000 * s + 10 * r + k);
        e.Put(i1d, iv.data(), adios2::Mode::Sync);
        std::vector<float> f(r + 2);
        for (size_t k = 0; k < r + 2; k++) f[k] = 0.5f * k - 10.0f * r + 100.0f * s;
        e.Put(loc, f.data(), adios2::Mode::Sync);
        e.Put(lv, (int32_t)(10 * r + s));
        if (rank == 0) e.Put(gv, (int64_t)(1000000000000LL * (s + 1) + 7));
        e.Put(str, "rank " + std::to_string(r) + " step " + std::to_string(s));
        size_t writers = 0, idx = 0;
        for (size_t q = 0; q < n; q++)
            if ((q + s) % 2 == 0) {
                if (q < r) idx++;
                writers++;
            }
        if ((r + s) % 2 == 0) {
            some.SetShape({2 * writers});
            some.SetSelection({{2 * idx}, {2}});
            double d[2] = {10.0 * s + r, -(10.0 * s + r)};
            e.Put(some, d, adios2::Mode::Sync);
        }
        std::vector<double> zd(128);
        for (size_t k = 0; k < 128; k++) zd[k] = s + r + (k / 16) * 0.5;
        e.Put(z, zd.data(), adios2::Mode::Sync);
        e.EndStep();
    }
    e.Close();
    if (rank == 0) std::printf("%s (blosc %s)\n", path.c_str(), blosc ? "on" : "off");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    std::string out = argc > 1 ? argv[1] : ".";
    std::vector<std::string> variants;
    for (int i = 2; i < argc; i++) variants.push_back(argv[i]);
    if (variants.empty()) variants = {"default", "agg2", "aggN", "nostats"};
    {
        adios2::ADIOS adios(MPI_COMM_WORLD);
        for (auto &v : variants)
            write(adios, out + "/bp3mpi_n" + std::to_string(nranks) + "_" + v + ".bp", v);
    }
    MPI_Finalize();
    return 0;
}
