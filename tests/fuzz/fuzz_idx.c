/* Fuzz target: the md.idx parser (bp4_check_idx_header, bp4_parse_idx_record), on its own and
 * through the append path, which reads md.idx to find where to continue. Input: md.idx bytes, or
 * md.idx SEP md.0 (then md.0's size bounds the record pointers). */
#include "format/bp4_decode.h"
#include "fuzz/fuzz_util.h"
#include "gpubp.h"
#include "fuzz/fuzz_target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_part parts[FZ_MAX_PARTS];
    int np = fz_split(data, size, parts);
    const fz_part *idx = &parts[0];
    uint64_t md0_size = np > 1 ? parts[1].n : UINT64_MAX;
    gbp_error_clear();
    if (bp4_check_idx_header(idx->p, idx->n, "md.idx") == GPUBP_OK) {
        size_t n = (idx->n - BP4_HEADER_SIZE) / BP4_IDX_RECORD_SIZE;
        for (size_t i = 0; i < n + 1; i++) { /* one past the end: must be "truncated" */
            bp4_idx_record r;
            gbp_error_clear();
            int rc = bp4_parse_idx_record(idx->p, idx->n, i, md0_size, &r, "md.idx");
            if (rc == GPUBP_OK) {
                if (i >= n) abort(); /* a record past the end was accepted */
                if (!(r.pg_off <= r.var_off && r.var_off <= r.attr_off && r.attr_off <= r.end &&
                      r.end <= md0_size))
                    abort();
            } else if (gpubp_last_error()[0] == '\0') {
                abort(); /* every failure has a message */
            }
        }
    } else if (gpubp_last_error()[0] == '\0') {
        abort();
    }
    /* the append path: reads md.idx and md.0, truncates them to the last good step, writes one */
    if (np > 1) {
        const char *dir = fz_tmpdir();
        char ds[600];
        snprintf(ds, sizeof ds, "%s/a.bp", dir);
        mkdir(ds, 0777);
        fz_put_file(ds, "md.idx", idx);
        fz_put_file(ds, "md.0", &parts[1]);
        fz_put_file(ds, "data.0", np > 2 ? &parts[2] : NULL);
        fz_put_file(ds, "data.1", NULL);
        /* oracle: a dataset that reads cleanly before the append reads cleanly after it, with
         * one more step holding the appended value */
        size_t before = 0;
        int clean = 0;
        gpubp_file *r = NULL;
        if (gpubp_open(&r, ds, GPUBP_MODE_READ_RANDOM_ACCESS, NULL) == GPUBP_OK) {
            gpubp_variable *v;
            clean = gpubp_steps(r, &before) == GPUBP_OK &&
                    gpubp_inquire_variable(&v, r, "__fz_append__") == GPUBP_ERR_NOT_FOUND;
        }
        gpubp_close(r);
        gpubp_file *w = NULL;
        gbp_error_clear();
        int committed = 0;
        if (gpubp_open(&w, ds, GPUBP_MODE_APPEND, NULL) == GPUBP_OK) {
            gpubp_variable *v;
            int32_t x = 7;
            if (gpubp_define_variable(&v, w, "__fz_append__", GPUBP_TYPE_INT32, 0, NULL, NULL,
                                      NULL) == GPUBP_OK &&
                gpubp_begin_step(w) == GPUBP_OK && gpubp_put(w, v, &x, GPUBP_SYNC) == GPUBP_OK &&
                gpubp_end_step(w) == GPUBP_OK)
                committed = 1;
            if (gpubp_close(w) != GPUBP_OK) committed = 0;
        } else if (gpubp_last_error()[0] == '\0') {
            abort();
        }
        if (clean && committed) {
            size_t after = 0;
            int32_t got = 0;
            gpubp_variable *v;
            if (gpubp_open(&r, ds, GPUBP_MODE_READ_RANDOM_ACCESS, NULL) != GPUBP_OK) {
                fprintf(stderr, "append broke a clean dataset: %s\n", gpubp_last_error());
                abort();
            }
            if (gpubp_steps(r, &after) != GPUBP_OK || after != before + 1 ||
                gpubp_inquire_variable(&v, r, "__fz_append__") != GPUBP_OK ||
                gpubp_get(r, v, &got, GPUBP_SYNC) != GPUBP_OK || got != 7) {
                fprintf(stderr, "append: %zu -> %zu steps, value %d: %s\n", before, after,
                        (int)got, gpubp_last_error());
                abort();
            }
            gpubp_close(r);
        }
    }
    return 0;
}
