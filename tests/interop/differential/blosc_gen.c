/* Random blosc-compressed files written by ADIOS2 (C API; an ADIOS2 built with Blosc2, outside
 * the project), for bpls_cmp.sh: 1-4 variables of any numeric type, 2-D global or local arrays of
 * 1 to 600 000 rows of 1-4 columns in 1-3 blocks a step, 1-3 steps, a row- or column-major writer
 * (adios2_declare_io_order), engine BP4 or BP5, each with its own codec
 * (blosclz, lz4, lz4hc, zlib, zstd), shuffle, level 0-9, sometimes a blocksize or a threshold;
 * smooth, random, constant, zero and stepped data. Prints the engine and the order.
 *   cc -o blosc_gen blosc_gen.c -I<adios2>/include -L<adios2>/lib -ladios2_c -lm
 *   blosc_gen OUT.bp SEED */
#include <adios2_c.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CH(x) do { if (!(x)) { fprintf(stderr, "fail %d\n", __LINE__); exit(1);} } while (0)
#define CK(x) CH((x) == adios2_error_none)
static unsigned long long rs;
static unsigned rnd(void) { rs = rs * 6364136223846793005ULL + 1442695040888963407ULL; return (unsigned)(rs >> 33); }
static int R(int n) { return (int)(rnd() % (unsigned)n); }
static const adios2_type T[] = {adios2_type_int8_t, adios2_type_int16_t, adios2_type_int32_t, adios2_type_int64_t,
  adios2_type_uint8_t, adios2_type_uint16_t, adios2_type_uint32_t, adios2_type_uint64_t, adios2_type_float,
  adios2_type_double, adios2_type_float_complex, adios2_type_double_complex};
static const size_t ES[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 8, 16};
static void fill(void *p, int t, size_t n, int pat) {
  for (size_t i = 0; i < n; i++) {
    double x = pat == 0 ? sin(i * 0.01) * 1000 : pat == 1 ? (double)(rnd() % 100000) - 50000 : pat == 2 ? 7 : 0;
    if (pat == 3) x = 0;
    if (pat == 4) x = (double)(i / 50);
    switch (t) {
    case 0: ((int8_t *)p)[i] = (int8_t)x; break; case 1: ((int16_t *)p)[i] = (int16_t)x; break;
    case 2: ((int32_t *)p)[i] = (int32_t)x; break; case 3: ((int64_t *)p)[i] = (int64_t)x * 1000003; break;
    case 4: ((uint8_t *)p)[i] = (uint8_t)(int)x; break; case 5: ((uint16_t *)p)[i] = (uint16_t)(int)x; break;
    case 6: ((uint32_t *)p)[i] = (uint32_t)(int64_t)x; break; case 7: ((uint64_t *)p)[i] = (uint64_t)(int64_t)x; break;
    case 8: ((float *)p)[i] = (float)(x / 7.0); break; case 9: ((double *)p)[i] = x / 7.0; break;
    case 10: ((float *)p)[2 * i] = (float)x; ((float *)p)[2 * i + 1] = (float)(x / 3); break;
    case 11: ((double *)p)[2 * i] = x; ((double *)p)[2 * i + 1] = -x / 3; break;
    }
  }
}
int main(int argc, char **argv) {
  if (argc != 3) return 2;
  rs = (unsigned long long)atoll(argv[2]) * 7919 + 17;
  adios2_adios *ad = adios2_init_serial();
  int cm = R(2);
  adios2_io *io = adios2_declare_io_order(ad, "z", cm ? adios2_arrayordering_columnmajor : adios2_arrayordering_rowmajor);
  const char *eng = R(2) ? "BP5" : "BP4";
  CK(adios2_set_engine(io, eng));
  printf("%s %s\n", eng, cm ? "colmajor" : "rowmajor");
  const char *codecs[5] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
  const char *modes[3] = {"BLOSC_SHUFFLE", "BLOSC_BITSHUFFLE", "BLOSC_NOSHUFFLE"};
  int nv = 1 + R(4), ns = 1 + R(3);
  adios2_variable *v[8]; int vt[8], loc[8], nb[8], pat[8]; size_t n[8], c2[8];
  for (int k = 0; k < nv; k++) {
    char nm[32]; snprintf(nm, sizeof nm, "v%d", k);
    vt[k] = R(12); loc[k] = R(4) == 0; nb[k] = 1 + R(3); pat[k] = R(5);
    int big = R(4);
    n[k] = big == 0 ? 1 + R(40) : big == 1 ? 100 + R(5000) : big == 2 ? 20000 + R(100000) : 300000 + R(300000);
    c2[k] = 1 + R(4); if (n[k] > 50000) n[k] /= 4;
    size_t shape[2] = {n[k] * nb[k], c2[k]}, start[2] = {0, 0}, count[2] = {n[k], c2[k]};
    v[k] = loc[k] ? adios2_define_variable(io, nm, T[vt[k]], 2, NULL, NULL, count, adios2_constant_dims_false)
                  : adios2_define_variable(io, nm, T[vt[k]], 2, shape, start, count, adios2_constant_dims_false);
    CH(v[k]);
    char opn[32]; snprintf(opn, sizeof opn, "op%d", k);
    adios2_operator *op = adios2_define_operator(ad, opn, "blosc");
    size_t id;
    CK(adios2_add_operation(&id, v[k], op, "compressor", codecs[R(5)]));
    char lv[4]; snprintf(lv, sizeof lv, "%d", R(10));
    CK(adios2_set_operation_parameter(v[k], id, "clevel", lv));
    CK(adios2_set_operation_parameter(v[k], id, "doshuffle", modes[R(3)]));
    if (R(4) == 0) { char bs[16]; snprintf(bs, sizeof bs, "%d", 1 << (10 + R(8))); CK(adios2_set_operation_parameter(v[k], id, "blocksize", bs)); }
    if (R(5) == 0) CK(adios2_set_operation_parameter(v[k], id, "threshold", R(2) ? "0" : "1000000"));
  }
  adios2_engine *e = adios2_open(io, argv[1], adios2_mode_write);
  CH(e);
  for (int s = 0; s < ns; s++) {
    adios2_step_status st;
    CK(adios2_begin_step(e, adios2_step_mode_append, -1.0f, &st));
    for (int k = 0; k < nv; k++) {
      for (int b = 0; b < nb[k]; b++) {
        size_t cnt[2] = {loc[k] ? n[k] - (size_t)R((int)(n[k] > 2 ? n[k] / 2 : 1)) : n[k], c2[k]}, start[2] = {(size_t)b * n[k], 0};
        if (loc[k]) CK(adios2_set_selection(v[k], 2, NULL, cnt)); else CK(adios2_set_selection(v[k], 2, start, cnt));
        void *buf = malloc(cnt[0] * cnt[1] * ES[vt[k]] + 16);
        fill(buf, vt[k], cnt[0] * cnt[1], (pat[k] + b + s) % 5);
        CK(adios2_put(e, v[k], buf, adios2_mode_sync));
        free(buf);
      }
    }
    CK(adios2_end_step(e));
  }
  CK(adios2_close(e));
  adios2_finalize(ad);
  return 0;
}
