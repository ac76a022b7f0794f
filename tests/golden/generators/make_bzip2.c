/* Writes a BP4 or BP5 file with ADIOS2's bzip2 operator (global 2-D doubles in two blocks over
 * two steps, a 1-D int32 array with a 100k block size, a local array), for the interop tests of
 * libgpubp's bzip2 decoder (ADIOS2 refuses blocks that bzip2 cannot shrink). usage: make_bzip2 OUTDIR SEED BP4|BP5 */
#include <adios2_c.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CH(x) do { if (!(x)) { fprintf(stderr, "fail %d\n", __LINE__); exit(1);} } while (0)
#define CK(x) CH((x) == adios2_error_none)
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    unsigned seed = (unsigned)atoi(argv[2]);
    adios2_adios *ad = adios2_init_serial();
    adios2_io *io = adios2_declare_io(ad, "bzip2");
    CK(adios2_set_engine(io, argv[3]));
    adios2_operator *op = adios2_define_operator(ad, "bz", "bzip2");
    CH(op);
    size_t shape[2] = {64, 100}, start[2] = {0, 0}, count[2] = {32, 100};
    adios2_variable *f = adios2_define_variable(io, "smooth", adios2_type_double, 2, shape, start, count, adios2_constant_dims_false);
    adios2_variable *g = adios2_define_variable(io, "ints", adios2_type_int32_t, 1, (size_t[]){1000}, (size_t[]){0}, (size_t[]){1000}, adios2_constant_dims_true);
    adios2_variable *l = adios2_define_variable(io, "local", adios2_type_float, 1, NULL, NULL, (size_t[]){300}, adios2_constant_dims_true);
    CH(f); CH(g); CH(l);
    size_t id;
    adios2_variable *vs[3] = {f, g, l};
    for (int k = 0; k < 3; k++) {
        CK(adios2_add_operation(&id, vs[k], op, "blockSize", k == 1 ? "1" : "9"));
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/bzip2.bp", argv[1]);
    adios2_engine *e = adios2_open(io, path, adios2_mode_write);
    CH(e);
    for (int s = 0; s < 2; s++) {
        adios2_step_status st;
        CK(adios2_begin_step(e, adios2_step_mode_append, -1.f, &st));
        for (int b = 0; b < 2; b++) {
            double *v = malloc(32 * 100 * sizeof *v);
            for (int i = 0; i < 32; i++)
                for (int j = 0; j < 100; j++)
                    v[i * 100 + j] = sin(0.05 * (i + 32 * b) + 0.01 * seed) * cos(0.03 * j) + s;
            size_t st2[2] = {32 * (size_t)b, 0};
            CK(adios2_set_selection(f, 2, st2, count));
            CK(adios2_put(e, f, v, adios2_mode_sync));
            free(v);
        }
        int32_t iv[1000];
        for (int i = 0; i < 1000; i++) iv[i] = (int32_t)((i * 7 + seed * 13 + s) % 97) - 40;
        CK(adios2_put(e, g, iv, adios2_mode_sync));
        float lv[300];
        for (int i = 0; i < 300; i++) lv[i] = (float)((i % 17) * 0.5 + seed + s);
        CK(adios2_put(e, l, lv, adios2_mode_sync));
        CK(adios2_end_step(e));
    }
    CK(adios2_close(e));
    CK(adios2_finalize(ad));
    return 0;
}
