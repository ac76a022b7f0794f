/* Fuzz target: BP5 metadata blocks (lib/format/bp5_meta.c) and the reader's index built from them
 * (lib/format/bp5_index.c). Input: mmd.0 SEP md.idx SEP md.0, as in a dataset. md.idx and mmd.0
 * are parsed, every step's md.0 block (up to 64) is added to an index, then every variable's
 * blocks of every step are loaded back through bp5_index_load, and each block is also decoded
 * directly with a sink that touches every value it is handed. Oracle: FORMAT, NOT_SUPPORTED or OK
 * with a message on failure; never a crash, an overread (ASan) or a leak (LeakSanitizer). */
#include "fuzz/fuzz_util.h"

#include "format/bp5_ffs.h"
#include "format/bp5_idx.h"
#include "format/bp5_index.h"
#include "format/bp5_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MAX_STEPS 64

static void check_rc(int rc)
{
    if (rc != GPUBP_OK && rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_NOT_SUPPORTED &&
        rc != GPUBP_ERR_NOMEM)
        abort();
    if (rc != GPUBP_OK && gpubp_last_error()[0] == '\0') abort();
}

static volatile uint64_t sink_sum;

static int touch_var(void *ctx, uint64_t w, const bp5_var_field *f, const bp5_array_rec *a,
                     const bp5_value_rec *v)
{
    (void)ctx;
    uint64_t s = w + (uint64_t)f->kind;
    if (v) {
        if (v->str) s += strlen(v->str) + v->str_len;
        for (int i = 0; i < 16; i++) s += v->bytes[i];
    }
    if (a) {
        if (a->ndims == 0 || a->ndims > GBP_MAX_DIMS || a->nblocks == 0 || !a->count || !a->location)
            abort();
        for (uint64_t i = 0; i < a->ndims; i++) s += a->shape ? a->shape[i] : 0;
        for (uint64_t i = 0; i < a->ndims * a->nblocks; i++)
            s += a->count[i] + (a->start ? a->start[i] : 0);
        for (uint64_t i = 0; i < a->nblocks; i++) s += a->location[i] + (a->stored ? a->stored[i] : 0);
        if (a->minmax)
            for (uint64_t i = 0; i < a->nblocks * 2 * f->esize; i++) s += a->minmax[i];
    }
    sink_sum += s;
    return GPUBP_OK;
}

static int touch_attr(void *ctx, gbp_attr *a)
{
    (void)ctx;
    if (!a->name) abort();
    sink_sum += strlen(a->name) + a->n;
    for (size_t i = 0; a->strings && i < a->n; i++) sink_sum += strlen(a->strings[i]);
    gbp_attr_free(a);
    return GPUBP_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_part parts[FZ_MAX_PARTS];
    if (fz_split(data, size, parts) < 3) return 0;
    fz_mem md0 = {parts[2].p, parts[2].n};
    bp5_reader r;
    bp5_reader_init(&r, fz_mem_read, &md0);
    gbp_index ix;
    gbp_index_init(&ix, bp5_index_load, &r);
    gbp_error_clear();
    int rc = bp5_idx_parse(&r.idx, parts[1].p, parts[1].n, md0.n, 0, "md.idx");
    check_rc(rc);
    if (rc == GPUBP_OK) {
        r.ft.big_endian = r.idx.big_endian;
        gbp_error_clear();
        rc = bp5_formats_parse(&r.ft, parts[0].p, parts[0].n, 0, "mmd.0");
        check_rc(rc);
    }
    /* each step decoded directly */
    bp5_md_sink sink = {NULL, touch_var, touch_attr, NULL, NULL};
    for (size_t s = 0; rc == GPUBP_OK && s < r.idx.nsteps && s < FZ_MAX_STEPS; s++) {
        const bp5_step_rec *st = &r.idx.steps[s];
        gbp_error_clear();
        check_rc(bp5_decode_step(&r.idx, &r.ft, s, md0.p + st->md_pos, (size_t)st->md_size, &r.scr,
                                 &sink, "md.0"));
    }
    /* the index, and every block loaded back */
    while (rc == GPUBP_OK && r.nadded < r.idx.nsteps && r.nadded < FZ_MAX_STEPS) {
        const bp5_step_rec *st = &r.idx.steps[r.nadded];
        gbp_error_clear();
        rc = bp5_index_add_step(&ix, &r, md0.p + st->md_pos, (size_t)st->md_size, "md.0");
        check_rc(rc);
    }
    if (r.nadded == r.idx.nsteps) bp5_index_finish(&ix);
    for (size_t i = 0; i < ix.nvars; i++) {
        gbp_var *v = ix.vars[i];
        for (size_t k = 0; k < v->nsteps; k++) {
            const gbp_block *b = NULL;
            gbp_error_clear();
            check_rc(gbp_index_blocks(&ix, v, k, &b, "md.0"));
        }
    }
    for (size_t i = 0; i < ix.nvars; i++) (void)bp5_unsupported(&r, ix.vars[i]->name);
    gbp_index_free(&ix);
    bp5_reader_free(&r);
    return 0;
}
