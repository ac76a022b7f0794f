// gpubp-adios2-cmp: the workload of gpubp-bench written and read with ADIOS2 (BP4 and BP5), for a
// side-by-side run on the same machine (bench/run_device.sh). Built only with
// -DGPUBP_BENCH_ADIOS2=ON when find_package(ADIOS2) finds ADIOS2; never part of the tests or CI.
//
//   gpubp-adios2-cmp --dir D --mib-per-step N --steps S --blocks B --mem gpu|host
//                    [--engines BP4,BP5] [--repeat R] [--keep]
//
// Each step is the global 2-D array of doubles of gpubp-bench (rows of 1024 doubles, N MiB,
// a[i] = i), put as B blocks of rows, one variable "field". --mem gpu: the array lives in device
// memory; an ADIOS2 with GPU support (ADIOS2_HAVE_GPU_SUPPORT) gets the device pointers
// (MemorySpace::GPU), any other ADIOS2 gets each block copied to a pinned host buffer with
// cudaMemcpy first (path=copy), as an application does; reads go to host memory and are copied to
// the device, where they are checked. A run's time covers open, every step and close. After the
// whole read, a strided half-box read (every row, its first COLS/2 columns; to the device as
// above) as gpubp-bench's sub_read. Prints, per engine, the medians of R runs (GB = 1e9 bytes
// delivered), in gpubp-bench's format:
//
//   adios2 engine=BP4 mem=gpu path=copy write_GBps=<x> read_GBps=<y> sub_read_GBps=<z>
//
// --keep: the last repetition's datasets stay (DIR/adios2-cmp-BP4.bp, ...), for gpubp-readbench
// to read the same content with libgpubp (BP4 against BP5).
//
// Exit status: 0, 1 on a failure (message on stderr), 2 on bad usage.
#include <adios2.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "bench/bench_dev.h"
#include "bench/bench_util.h"

namespace {

const size_t COLS = 1024;

struct Opts {
    std::string dir;
    size_t mib = 256, steps = 4, blocks = 1;
    bool gpu = false;
    int repeat = 3;
    std::vector<std::string> engines{"BP4", "BP5"};
    bool keep = false;
};

size_t split_rows(size_t rows, size_t n, size_t b, size_t *first)
{
    size_t per = rows / n, extra = rows % n;
    *first = b * per + (b < extra ? b : extra);
    return per + (b < extra ? 1 : 0);
}

struct Data {
    size_t rows = 0, nel = 0;
    double *src = nullptr;  // the step array: device (gpu) or host memory
    double *back = nullptr; // the read buffer on the device (gpu) or the host
    double *host = nullptr; // gpu: the pinned host buffer blocks are copied through
};

bool use_gpu_space(const Opts &o)
{
#ifdef ADIOS2_HAVE_GPU_SUPPORT
    return o.gpu;
#else
    (void)o;
    return false;
#endif
}

void remove_tree(const std::string &path)
{
    std::string cmd = "rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "gpubp-adios2-cmp: %s failed\n", cmd.c_str());
}

double write_run(adios2::ADIOS &ad, const Opts &o, const std::string &engine, Data &d,
                 const std::string &path, int rep)
{
    double t0 = bench_now();
    adios2::IO io = ad.DeclareIO("w" + engine + std::to_string(rep));
    io.SetEngine(engine);
    auto var = io.DefineVariable<double>("field", {d.rows, COLS}, {0, 0}, {d.rows, COLS});
#ifdef ADIOS2_HAVE_GPU_SUPPORT
    if (use_gpu_space(o)) var.SetMemorySpace(adios2::MemorySpace::GPU);
#endif
    adios2::Engine e = io.Open(path, adios2::Mode::Write);
    for (size_t s = 0; s < o.steps; s++) {
        e.BeginStep();
        for (size_t b = 0; b < o.blocks; b++) {
            size_t first, n = split_rows(d.rows, o.blocks, b, &first);
            var.SetSelection({{first, 0}, {n, COLS}});
            const double *p = d.src + first * COLS;
            if (o.gpu && !use_gpu_space(o)) {
                if (bench_dev_download(d.host + first * COLS, p, n * COLS * sizeof(double)))
                    throw std::runtime_error("cudaMemcpy device to host failed");
                p = d.host + first * COLS;
            }
            e.Put(var, p, adios2::Mode::Deferred);
        }
        e.EndStep();
    }
    e.Close();
    return bench_now() - t0;
}

// half: the first COLS/2 columns of every row (a strided sub-box), checked in element samples
double read_run(adios2::ADIOS &ad, const Opts &o, const std::string &engine, Data &d,
                const std::string &path, int rep, bool half)
{
    const size_t cols = half ? COLS / 2 : COLS, n = d.rows * cols;
    double t0 = bench_now();
    adios2::IO io = ad.DeclareIO((half ? "h" : "r") + engine + std::to_string(rep));
    io.SetEngine(engine);
    adios2::Engine e = io.Open(path, adios2::Mode::Read);
    size_t steps = 0;
    while (e.BeginStep() == adios2::StepStatus::OK) {
        auto var = io.InquireVariable<double>("field");
        if (!var) throw std::runtime_error("variable field not found");
        var.SetSelection({{0, 0}, {d.rows, cols}});
        double *dst = o.gpu && !use_gpu_space(o) ? d.host : d.back;
#ifdef ADIOS2_HAVE_GPU_SUPPORT
        if (use_gpu_space(o)) var.SetMemorySpace(adios2::MemorySpace::GPU);
#endif
        e.Get(var, dst, adios2::Mode::Sync);
        e.EndStep();
        if (o.gpu && !use_gpu_space(o) &&
            bench_dev_upload(d.back, d.host, n * sizeof(double)))
            throw std::runtime_error("cudaMemcpy host to device failed");
        steps++;
    }
    e.Close();
    double secs = bench_now() - t0;
    if (steps != o.steps)
        throw std::runtime_error("read " + std::to_string(steps) + " steps, wrote " +
                                 std::to_string(o.steps));
    long bad = 0;
    if (half) {
        std::vector<double> h(n);
        const double *p = d.back;
        if (o.gpu) {
            if (bench_dev_download(h.data(), d.back, n * sizeof(double)))
                throw std::runtime_error("cudaMemcpy device to host failed");
            p = h.data();
        }
        for (size_t r = 0; r < d.rows; r += 7)
            for (size_t c = 0; c < cols; c += 31) bad += p[r * cols + c] != (double)(r * COLS + c);
    } else if (o.gpu) {
        bad = bench_dev_check(d.back, d.nel, 0.0);
    } else {
        for (size_t i = 0; i < d.nel; i += 4099) bad += d.back[i] != (double)i;
        bad += d.back[d.nel - 1] != (double)(d.nel - 1);
    }
    if (bad != 0) throw std::runtime_error("the data read back is wrong (" + std::to_string(bad) + ")");
    return secs;
}

int usage()
{
    std::fprintf(stderr, "usage: gpubp-adios2-cmp --dir D --mib-per-step N --steps S --blocks B "
                         "--mem gpu|host [--engines BP4,BP5] [--repeat R] [--keep]\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    Opts o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "--dir" && v) o.dir = argv[++i];
        else if (a == "--mib-per-step" && v) o.mib = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--steps" && v) o.steps = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--blocks" && v) o.blocks = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--repeat" && v) o.repeat = std::atoi(argv[++i]);
        else if (a == "--keep") o.keep = true;
        else if (a == "--mem" && v) {
            std::string m = argv[++i];
            if (m == "gpu") o.gpu = true;
            else if (m != "host") return usage();
        } else if (a == "--engines" && v) {
            o.engines.clear();
            std::string list = argv[++i];
            for (size_t at = 0; at <= list.size();) {
                size_t comma = list.find(',', at);
                if (comma == std::string::npos) comma = list.size();
                if (comma > at) o.engines.push_back(list.substr(at, comma - at));
                at = comma + 1;
            }
        } else return usage();
    }
    if (o.dir.empty() || o.mib == 0 || o.steps == 0 || o.blocks == 0 || o.repeat < 1 ||
        o.repeat > 64 || o.engines.empty())
        return usage();
    if (mkdir(o.dir.c_str(), 0755) < 0 && errno != EEXIST) {
        std::fprintf(stderr, "gpubp-adios2-cmp: cannot create %s: %s\n", o.dir.c_str(),
                     std::strerror(errno));
        return 1;
    }
    Data d;
    d.rows = (o.mib << 20) / (COLS * sizeof(double));
    if (d.rows < o.blocks) d.rows = o.blocks;
    d.nel = d.rows * COLS;
    size_t bytes = d.nel * sizeof(double);
    if (o.gpu) {
        const char *why = "";
        if (!bench_dev_init(&why)) {
            std::fprintf(stderr, "gpubp-adios2-cmp: --mem gpu: %s\n", why);
            return 1;
        }
        d.src = static_cast<double *>(bench_dev_alloc(bytes));
        d.back = static_cast<double *>(bench_dev_alloc(bytes));
        d.host = static_cast<double *>(bench_pinned_alloc(bytes));
        if (!d.src || !d.back || !d.host || bench_dev_fill(d.src, d.nel, 0.0)) {
            std::fprintf(stderr, "gpubp-adios2-cmp: device or pinned memory for %zu MiB\n", o.mib);
            return 1;
        }
    } else {
        d.src = static_cast<double *>(std::malloc(bytes));
        d.back = static_cast<double *>(std::malloc(bytes));
        if (!d.src || !d.back) {
            std::fprintf(stderr, "gpubp-adios2-cmp: out of memory for %zu MiB steps\n", o.mib);
            return 1;
        }
        for (size_t i = 0; i < d.nel; i++) d.src[i] = (double)i;
    }
    double total = (double)bytes * (double)o.steps;
    int rc = 0;
    try {
        adios2::ADIOS ad;
        std::vector<std::vector<double>> wr(o.engines.size()), rd(o.engines.size()),
            sub(o.engines.size());
        double half_bytes = (double)(d.rows * (COLS / 2) * sizeof(double)) * (double)o.steps;
        // repetitions interleave the engines, so that a drift of the machine touches all alike
        for (int k = 0; k < o.repeat; k++) {
            for (size_t e = 0; e < o.engines.size(); e++) {
                std::string path = o.dir + "/adios2-cmp-" + o.engines[e] + ".bp";
                remove_tree(path);
                wr[e].push_back(total / write_run(ad, o, o.engines[e], d, path, k) / 1e9);
                rd[e].push_back(total / read_run(ad, o, o.engines[e], d, path, k, false) / 1e9);
                sub[e].push_back(half_bytes / read_run(ad, o, o.engines[e], d, path, k, true) / 1e9);
                if (!o.keep || k + 1 < o.repeat) remove_tree(path);
            }
        }
        for (size_t e = 0; e < o.engines.size(); e++)
            std::printf("adios2 engine=%s mem=%s path=%s write_GBps=%.2f read_GBps=%.2f "
                        "sub_read_GBps=%.2f\n",
                        o.engines[e].c_str(), o.gpu ? "gpu" : "host",
                        use_gpu_space(o) ? "gpu" : o.gpu ? "copy" : "host",
                        bench_median(wr[e].data(), wr[e].size()),
                        bench_median(rd[e].data(), rd[e].size()),
                        bench_median(sub[e].data(), sub[e].size()));
    } catch (const std::exception &x) {
        std::fprintf(stderr, "gpubp-adios2-cmp: %s\n", x.what());
        rc = 1;
    }
    if (o.gpu) {
        bench_dev_free(d.src);
        bench_dev_free(d.back);
        bench_pinned_free(d.host);
    } else {
        std::free(d.src);
        std::free(d.back);
    }
    return rc;
}
