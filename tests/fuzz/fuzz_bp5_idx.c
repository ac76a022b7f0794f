/* Fuzz target: the BP5 md.idx parser (lib/format/bp5_idx.c). Input: one flags byte (bit 0: a
 * partial last record is allowed; bit 1: parse in two calls, as a reader following a live writer
 * does; bit 2: keep only the odd step records, as select_steps does; bit 3: ignore_flatten), then
 * md.idx. The md.0 size is the input length (a bound the step records are checked
 * against). Oracle: FORMAT, NOT_SUPPORTED or OK with a message on failure, never a crash; every
 * step's block lies inside md.0; every block location bp5_locate accepts is consistent. */
#include "fuzz/fuzz_util.h"

#include "format/bp5_idx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int keep_odd(const void *ctx, uint64_t step)
{
    (void)ctx;
    return (int)(step & 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned flags = data[0];
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    uint64_t md0 = (uint64_t)size * 4;
    bp5_idx ix;
    bp5_idx_init(&ix);
    if (flags & 4) ix.keep = keep_odd;
    ix.ignore_flatten = (flags & 8) != 0;
    gbp_error_clear();
    int rc = GPUBP_OK;
    if ((flags & 2) && n / 2 >= BP5_HEADER_SIZE) rc = bp5_idx_parse(&ix, p, n / 2, md0, 1, "md.idx");
    if (rc == GPUBP_OK) rc = bp5_idx_parse(&ix, p, n, md0, flags & 1, "md.idx");
    if (rc != GPUBP_OK && rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_NOT_SUPPORTED &&
        rc != GPUBP_ERR_NOMEM)
        abort();
    if (rc != GPUBP_OK && gpubp_last_error()[0] == '\0') abort();
    if (ix.parsed > n) abort();
    if ((flags & 4) && ix.nsteps > (ix.nseen + 1) / 2) abort(); /* the odd records only */
    if ((flags & 8) && ix.flatten) abort();
    for (size_t s = 0; s < ix.nsteps; s++) {
        const bp5_step_rec *r = &ix.steps[s];
        if (r->map >= ix.nmaps || r->md_pos > md0 || r->md_size > md0 - r->md_pos) abort();
        const bp5_map *m = &ix.maps[r->map];
        for (uint64_t w = 0; w < m->nwriters && w < 8; w++) {
            const uint64_t locs[3] = {0, 1 + s, (uint64_t)1 << 40};
            for (int k = 0; k < 3; k++) {
                uint64_t sf = 0, off = 0;
                gbp_error_clear();
                rc = bp5_locate(&ix, s, w, locs[k], &sf, &off, "md.idx");
                if (rc == GPUBP_OK && sf >= m->nsubfiles) abort();
                if (rc != GPUBP_OK && rc != GPUBP_ERR_FORMAT) abort();
            }
        }
    }
    bp5_idx_free(&ix);
    return 0;
}
