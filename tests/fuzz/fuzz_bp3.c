/* Fuzz target: BP3 files (lib/format/bp3.c: bp3_parse_footer, then bp3_to_bp4 and the
 * bp4_walk_sets it cuts the index of every step with), the BP4 reader over what bp3_to_bp4 makes,
 * and the whole public read path on the file. Input: NAME.bp [SEP NAME.bp.0] (the metadata file
 * and, when a separator follows it, the data sub-file NAME.bp.dir/NAME.bp.0; seeds:
 * tests/golden/bp3, make_seeds.sh).
 *   1. the format: bp3_parse_footer on the last 56 bytes, bp3_to_bp4 on the bytes from the
 *      footer's PG offset to the end (an exact copy, so that ASan sees any read past it); what it
 *      makes is parsed as the BP4 reader parses a dataset: bp4_check_idx_header,
 *      bp4_parse_idx_record for every record and one past the end, bp4_index_add_step for every
 *      step over md.0 (an exact copy), then every variable's steps and on-demand blocks.
 *   2. the API: the input written as a file NAME.bp (and its sub-file), opened through gpubp_open
 *      in random access and in step mode and read whole (fuzz_read.h, as fuzz_open).
 * Oracles beyond "no sanitizer report": every failure is a documented status with a message; on
 * success md.idx is the 64-byte header and 64 bytes a step (at least one), the writer not active,
 * every record's pointers ordered inside md.0, the steps back to back from offset 64 to md.0's end,
 * each step's PG, variable and attribute indexes exactly as long as the record says, attributes in
 * the first step only; the BP4 parser accepts each step or refuses it with a message; every
 * indexed variable is found by its own name and each step lookup returns its own entry; gpubp_open
 * refuses the file with the same status as the format path, or opens it with as many steps as
 * bp3_to_bp4 made when the BP4 parser took every step. */
#include "format/bp3.h"
#include "format/bp4_decode.h"
#include "format/bp4_index.h"
#include "fuzz/fuzz_index.h"
#include "fuzz/fuzz_read.h"
#include "fuzz/fuzz_util.h"
#include "gpubp.h"
#include "fuzz/fuzz_target.h"

#define MAX_STEPS 1024

/* a failure of the format layer: FORMAT, NOT_BP4, NOT_SUPPORTED or NOMEM, with a message */
static void check_fmt(int rc)
{
    if (rc == GPUBP_OK) return;
    if (rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_NOT_BP4 && rc != GPUBP_ERR_NOT_SUPPORTED &&
        rc != GPUBP_ERR_NOMEM)
        abort();
    if (gpubp_last_error()[0] == '\0') abort();
}

/* md.idx and md.0 as bp3_to_bp4 made them: the framing it promises, then the BP4 reader's own
 * parse of every step. Returns 1 when the BP4 parser took every step. */
static int check_bp4(const gbp_buf *idx, const gbp_buf *md0)
{
    if (idx->len < 2 * BP4_HEADER_SIZE || (idx->len - BP4_HEADER_SIZE) % BP4_IDX_RECORD_SIZE)
        abort(); /* 64 + 64 x steps, at least one step */
    size_t nsteps = (idx->len - BP4_HEADER_SIZE) / BP4_IDX_RECORD_SIZE;
    gbp_error_clear();
    if (bp4_check_idx_header(idx->data, idx->len, "md.idx") != GPUBP_OK) abort();
    if (idx->data[BP4_IDX_ACTIVE_AT] != 0) abort(); /* a BP3 file is complete */
    if (md0->len < BP4_HEADER_SIZE ||
        bp4_check_idx_header(md0->data, md0->len, "md.0") != GPUBP_OK)
        abort();
    /* exact copies: a read past the end is an ASan report, not a read of spare capacity */
    uint8_t *m = malloc(md0->len);
    bp4_idx_record *recs = malloc(nsteps * sizeof *recs);
    if (!m || !recs) abort();
    memcpy(m, md0->data, md0->len);
    uint64_t at = BP4_HEADER_SIZE;
    for (size_t i = 0; i <= nsteps; i++) {
        bp4_idx_record r;
        gbp_error_clear();
        int rc = bp4_parse_idx_record(idx->data, idx->len, i, md0->len, &r, "md.idx");
        if (i == nsteps) { /* one past the end: refused, with a message */
            if (rc == GPUBP_OK || gpubp_last_error()[0] == '\0') abort();
            break;
        }
        if (rc != GPUBP_OK || r.pg_off != at || r.rank != 0) abort();
        /* PG index: u64 count (>= 1), u64 length, then that many bytes up to the variables */
        if (r.var_off - r.pg_off < 16 || gbp_ld64(m + r.pg_off) == 0 ||
            gbp_ld64(m + r.pg_off + 8) != r.var_off - r.pg_off - 16)
            abort();
        /* variable and attribute indexes: u32 count, u64 length, then that many bytes */
        if (r.attr_off - r.var_off < 12 || gbp_ld64(m + r.var_off + 4) != r.attr_off - r.var_off - 12)
            abort();
        if (r.end - r.attr_off < 12 || gbp_ld64(m + r.attr_off + 4) != r.end - r.attr_off - 12)
            abort();
        if (i > 0 && (gbp_ld32(m + r.attr_off) != 0 || r.end != r.attr_off + 12))
            abort(); /* attributes: in the first step only */
        recs[i] = r;
        at = r.end;
    }
    if (at != md0->len) abort(); /* the steps fill md.0 */
    /* the BP4 reader's parse of every step, and the index built from them */
    gbp_index ix;
    fz_mem src = {m, md0->len};
    bp4_md0 loader = {fz_mem_read, &src};
    bp4_index_init(&ix, &loader);
    size_t added = 0;
    for (; added < nsteps && added < MAX_STEPS; added++) {
        gbp_error_clear();
        int rc = bp4_index_add_step(&ix, m, 0, md0->len, &recs[added], "md.0");
        check_fmt(rc);
        if (rc != GPUBP_OK) break;
    }
    fz_walk_index(&ix, MAX_ITEMS, check_fmt);
    gbp_index_free(&ix);
    free(recs);
    free(m);
    return added == nsteps;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_part parts[FZ_MAX_PARTS];
    int np = fz_split(data, size, parts);
    const fz_part *meta = &parts[0];
    /* 1. the format: the footer, the index cut into steps, the BP4 reader over them */
    int fmt_rc = GPUBP_ERR_NOT_BP4; /* a file shorter than the footer */
    size_t fmt_steps = 0;
    int bp4_all = 0;
    if (meta->n >= BP3_FOOTER_SIZE) {
        bp3_footer ft;
        gbp_error_clear();
        fmt_rc = bp3_parse_footer(meta->p + meta->n - BP3_FOOTER_SIZE, meta->n, &ft, "f.bp");
        check_fmt(fmt_rc);
        if (fmt_rc == GPUBP_OK) {
            if (!(ft.pg <= ft.var && ft.var <= ft.attr && ft.attr <= meta->n - BP3_FOOTER_SIZE))
                abort();
            size_t n = meta->n - (size_t)ft.pg;
            uint8_t *m = malloc(n ? n : 1);
            if (!m) return 0;
            memcpy(m, meta->p + ft.pg, n);
            gbp_buf md0, idx;
            gbp_buf_init(&md0);
            gbp_buf_init(&idx);
            gbp_error_clear();
            fmt_rc = bp3_to_bp4(m, n, &ft, &md0, &idx, "f.bp");
            free(m); /* what it made must not point into it */
            check_fmt(fmt_rc);
            if (fmt_rc == GPUBP_ERR_NOT_BP4) abort(); /* NOT_SUPPORTED: an ADIOS 1.x path */
            if (fmt_rc == GPUBP_OK) {
                fmt_steps = (idx.len - BP4_HEADER_SIZE) / BP4_IDX_RECORD_SIZE;
                bp4_all = check_bp4(&idx, &md0);
            }
            gbp_buf_free(&md0);
            gbp_buf_free(&idx);
        }
    }
    /* 2. the API, on the input written as a BP3 file and its sub-file */
    const char *dir = fz_tmpdir();
    char path[600], sub[700];
    snprintf(path, sizeof path, "%s/b.bp", dir);
    snprintf(sub, sizeof sub, "%s/b.bp.dir", dir);
    mkdir(sub, 0777);
    fz_put_file(dir, "b.bp", meta);
    fz_put_file(sub, "b.bp.0", np > 1 ? &parts[1] : NULL);
    size_t api_steps = 0;
    int open_rc = fz_read_dataset(path, &api_steps);
    if (fmt_rc != GPUBP_OK && fmt_rc != GPUBP_ERR_NOMEM && open_rc != fmt_rc) {
        fprintf(stderr, "the format path refused the file with %d, gpubp_open gave %d: %s\n",
                fmt_rc, open_rc, gpubp_last_error());
        abort();
    }
    if (bp4_all && fmt_steps <= MAX_STEPS && (open_rc != GPUBP_OK || api_steps != fmt_steps)) {
        fprintf(stderr, "bp3_to_bp4 made %zu steps that the BP4 parser took; gpubp_open gave %d "
                "and %zu steps: %s\n", fmt_steps, open_rc, api_steps, gpubp_last_error());
        abort();
    }
    return 0;
}
