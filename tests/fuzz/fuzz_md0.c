/* Fuzz target: the md.0 step-metadata parser (bp4_parse_step through bp4_index_add_step) and the
 * index queries built on it. Input: md.idx SEP md.0 (steps are the md.idx records that check
 * out), or md.0 alone (steps are then chained as a writer lays them out: the PG index at 64, the
 * variable index after it, the attribute index after that, the next step at the end). */
#include "format/bp4_decode.h"
#include "format/bp4_index.h"
#include "fuzz/fuzz_index.h"
#include "fuzz/fuzz_util.h"
#include "gpubp.h"
#include "fuzz/fuzz_target.h"

#define MAX_STEPS 256

/* a block load that fails: any status, with a message */
static void block_failed(int rc)
{
    (void)rc;
    if (gpubp_last_error()[0] == '\0') abort();
}

static void run_records(const uint8_t *md0, size_t n, const bp4_idx_record *recs, size_t nrec)
{
    gbp_index ix;
    fz_mem src = {md0, n};
    bp4_md0 loader = {fz_mem_read, &src};
    bp4_index_init(&ix, &loader);
    for (size_t i = 0; i < nrec; i++) {
        gbp_error_clear();
        if (bp4_index_add_step(&ix, md0, 0, n, &recs[i], "md.0") != GPUBP_OK) {
            if (gpubp_last_error()[0] == '\0') abort();
            break;
        }
    }
    fz_walk_index(&ix, SIZE_MAX, block_failed);
    gbp_index_free(&ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_part parts[FZ_MAX_PARTS];
    int np = fz_split(data, size, parts);
    static bp4_idx_record recs[MAX_STEPS];
    size_t nrec = 0;
    const fz_part *md0 = np > 1 ? &parts[1] : &parts[0];
    /* copy: the parser must not read past n even where the fuzzer's buffer happens to go on */
    uint8_t *m = malloc(md0->n ? md0->n : 1);
    if (!m) return 0;
    if (md0->n) memcpy(m, md0->p, md0->n);
    if (np > 1 && bp4_check_idx_header(parts[0].p, parts[0].n, "md.idx") == GPUBP_OK) {
        size_t n = (parts[0].n - BP4_HEADER_SIZE) / BP4_IDX_RECORD_SIZE;
        for (size_t i = 0; i < n && nrec < MAX_STEPS; i++) {
            if (bp4_parse_idx_record(parts[0].p, parts[0].n, i, md0->n, &recs[nrec], "md.idx"))
                break;
            nrec++;
        }
        run_records(m, md0->n, recs, nrec);
    }
    /* chained steps, as a writer lays them out */
    nrec = 0;
    uint64_t at = BP4_HEADER_SIZE;
    while (nrec < MAX_STEPS && at + 16 <= md0->n) {
        bp4_idx_record r = {0};
        r.step = nrec + 1;
        r.pg_off = at;
        uint64_t pglen = gbp_ld64(m + at + 8);
        if (pglen > md0->n || at + 16 + pglen + 12 > md0->n) break;
        r.var_off = at + 16 + pglen;
        uint64_t vl = gbp_ld64(m + r.var_off + 4);
        if (vl > md0->n || r.var_off + 12 + vl + 12 > md0->n) break;
        r.attr_off = r.var_off + 12 + vl;
        uint64_t al = gbp_ld64(m + r.attr_off + 4);
        if (al > md0->n || r.attr_off + 12 + al > md0->n) break;
        r.end = r.attr_off + 12 + al;
        recs[nrec++] = r;
        at = r.end;
    }
    run_records(m, md0->n, recs, nrec);
    free(m);
    return 0;
}
