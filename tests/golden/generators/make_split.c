/* tests/golden/split/split.bp: a dataset written by libgpubp with a put split into sub-blocks
 * (split_mib), for the gpubpls golden tests against ADIOS2's bpls (tests/golden/README.md).
 * Not built by CMake; compiled by hand against a libgpubp build:
 *
 *   cc -o make_split make_split.c -I include -I build/include -L build/src -lgpubp
 *   ./make_split OUTDIR        (writes OUTDIR/split.bp)
 *
 * Two steps. T: a global 512 x 512 float array put whole (1 MiB: with split_mib=1 and 2 I/O
 * threads, 2 sub-blocks of 256 rows in data.0 and data.1), T(r, c) = step * 1000 + r + c / 1000;
 * U: a 4 x 6 double array put as two blocks of 2 rows (left whole), U(r, c) = step + r * 10 + c. */
#include <gpubp.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                           \
    do {                                                                   \
        if ((x) != GPUBP_OK) {                                             \
            fprintf(stderr, "%s: %s\n", #x, gpubp_last_error());           \
            return 1;                                                      \
        }                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) return fprintf(stderr, "usage: make_split OUTDIR\n"), 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/split.bp", argv[1]);
    enum { R = 512, C = 512 };
    size_t ts[2] = {R, C}, zero[2] = {0, 0}, us[2] = {4, 6}, uc[2] = {2, 6};
    static float t[R * C];
    double u[24];
    gpubp_file *f;
    gpubp_variable *vt, *vu;
    CHECK(gpubp_open(&f, path, GPUBP_MODE_WRITE, "split_mib=1,io_threads=2"));
    CHECK(gpubp_define_variable(&vt, f, "T", GPUBP_TYPE_FLOAT, 2, ts, zero, ts));
    CHECK(gpubp_define_variable(&vu, f, "U", GPUBP_TYPE_DOUBLE, 2, us, zero, uc));
    for (int s = 0; s < 2; s++) {
        for (size_t r = 0; r < R; r++)
            for (size_t c = 0; c < C; c++) t[r * C + c] = (float)(s * 1000 + r) + (float)c / 1000.0f;
        for (size_t i = 0; i < 24; i++) u[i] = s + (double)(i / 6) * 10 + (double)(i % 6);
        CHECK(gpubp_begin_step(f));
        CHECK(gpubp_put(f, vt, t, GPUBP_SYNC));
        for (size_t b = 0; b < 2; b++) {
            size_t st[2] = {2 * b, 0};
            CHECK(gpubp_set_selection(vu, 2, st, uc));
            CHECK(gpubp_put(f, vu, u + 12 * b, GPUBP_SYNC));
        }
        CHECK(gpubp_end_step(f));
    }
    CHECK(gpubp_close(f));
    return 0;
}
