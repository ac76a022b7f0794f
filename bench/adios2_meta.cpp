// adios2_meta: ADIOS2's side of the metadata benchmark (docs/performance.md, "Metadata at
// scale"). Built only with -DGPUBP_BENCH_ADIOS2=ON where find_package(ADIOS2) finds ADIOS2; never
// part of the tests or of CI. Two commands:
//
//   adios2_meta write PATH STEPS VARS BLOCKS ENGINE
//       writes with ADIOS2's ENGINE (BP4 or BP5) the dataset gpubp-bench --meta writes: VARS 1-D
//       global double variables var000.., 16 values per block, BLOCKS blocks per step, STEPS
//       steps, value (s + i + b + k), and the attribute unit = 1.0.
//   adios2_meta read PATH
//       ADIOS2's reader on PATH (its engine found from the dataset): open in ReadRandomAccess,
//       inquire var007, count its steps (open_inquire_s), then read it at its last step
//       (read_last_s); prints `open_inquire_s=<> read_last_s=<> rss_kb=<> open_inquire_cpu_s=<>`
//       (rss_kb: this process's peak resident set; open_inquire_cpu_s: the CPU time of the open,
//       all threads), the line meta_curve.py --compare reads.
#include <adios2.h>

#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

static double now_s()
{
    using clk = std::chrono::steady_clock;
    return std::chrono::duration<double>(clk::now().time_since_epoch()).count();
}

static int write_dataset(const std::string &path, size_t S, size_t V, size_t B,
                         const std::string &engine)
{
    adios2::ADIOS ad;
    adios2::IO io = ad.DeclareIO("meta_write");
    io.SetEngine(engine);
    std::vector<adios2::Variable<double>> vars;
    for (size_t i = 0; i < V; i++) {
        char name[32];
        std::snprintf(name, sizeof name, "var%03zu", i);
        vars.push_back(io.DefineVariable<double>(name, {16 * B}, {0}, {16}));
    }
    io.DefineAttribute<double>("unit", 1.0);
    adios2::Engine w = io.Open(path, adios2::Mode::Write);
    std::vector<double> d(16 * B);
    for (size_t s = 0; s < S; s++) {
        w.BeginStep();
        for (size_t i = 0; i < V; i++)
            for (size_t b = 0; b < B; b++) {
                for (size_t k = 0; k < 16; k++) d[16 * b + k] = static_cast<double>(s + i + b + k);
                vars[i].SetSelection({{16 * b}, {16}});
                w.Put(vars[i], d.data() + 16 * b, adios2::Mode::Sync);
            }
        w.EndStep();
    }
    w.Close();
    return 0;
}

static double cpu_s()
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

static int read_dataset(const std::string &path)
{
    double c0 = cpu_s(), t0 = now_s();
    adios2::ADIOS ad;
    adios2::IO io = ad.DeclareIO("meta_read");
    adios2::Engine r = io.Open(path, adios2::Mode::ReadRandomAccess);
    adios2::Variable<double> v = io.InquireVariable<double>("var007");
    if (!v) {
        std::fprintf(stderr, "adios2_meta: %s has no var007\n", path.c_str());
        return 1;
    }
    size_t ns = v.Steps();
    double t1 = now_s(), c1 = cpu_s() - c0;
    v.SetStepSelection({ns - 1, 1});
    std::vector<double> buf(v.Shape()[0]);
    r.Get(v, buf.data(), adios2::Mode::Sync);
    double t2 = now_s();
    r.Close();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    std::printf("open_inquire_s=%.4f read_last_s=%.5f rss_kb=%ld open_inquire_cpu_s=%.4f "
                "steps=%zu\n", t1 - t0, t2 - t1, ru.ru_maxrss, c1, ns);
    return buf.empty();
}

int main(int argc, char **argv)
{
    try {
        if (argc == 7 && std::string(argv[1]) == "write")
            return write_dataset(argv[2], std::strtoull(argv[3], nullptr, 10),
                                 std::strtoull(argv[4], nullptr, 10),
                                 std::strtoull(argv[5], nullptr, 10), argv[6]);
        if (argc == 3 && std::string(argv[1]) == "read") return read_dataset(argv[2]);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "adios2_meta: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "usage: adios2_meta write PATH STEPS VARS BLOCKS BP4|BP5\n"
                         "       adios2_meta read PATH\n");
    return 2;
}
