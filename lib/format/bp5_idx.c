/* BP5 md.idx: the 64-byte header, then records of u8 type, u64 length, body: 'w' writer maps and
 * 's' step records (§3). Records are parsed incrementally so that a reader following a live
 * writer re-reads only what is new. */
#include "format/bp5_idx.h"

#include <stdlib.h>

void bp5_idx_init(bp5_idx *ix)
{
    memset(ix, 0, sizeof *ix);
}

void bp5_idx_free(bp5_idx *ix)
{
    if (!ix) return;
    for (size_t i = 0; i < ix->nmaps; i++) gbp_free(ix->maps[i].subfile);
    for (size_t i = 0; i < ix->nslabs; i++) gbp_free(ix->slabs[i]);
    gbp_free(ix->slabs);
    gbp_free(ix->maps);
    gbp_free(ix->steps);
    memset(ix, 0, sizeof *ix);
}

static int parse_header(bp5_idx *ix, const uint8_t *p, size_t n, const char *what)
{
    if (n < BP5_HEADER_SIZE)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: header is truncated (%zu of 64 bytes)", what, n);
    if (p[37] != 5)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "%s: offset 37: BP version %u, expected 5", what, p[37]);
    if (p[38] != 2)
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                         "%s: offset 38: BP5 minor version %u (only 2 is known)", what, p[38]);
    if (p[36] > 1)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset 36: byte order %u", what, p[36]);
    ix->big_endian = p[36];
    ix->active = p[39] != 0;
    ix->column_major = p[40] == 'y';
    ix->flatten = p[41] != 0 && !ix->ignore_flatten;
    ix->file_id = bp5_ld32(p + 42, ix->big_endian);
    ix->parsed = BP5_HEADER_SIZE;
    return GPUBP_OK;
}

static int add_map(bp5_idx *ix, const uint8_t *b, uint64_t len, size_t at, const char *what)
{
    int be = ix->big_endian;
    if (len < 24 || len % 8)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: writer map of %llu bytes", what,
                         at, (unsigned long long)len);
    uint64_t w = bp5_ld64(b, be), na = bp5_ld64(b + 8, be), ns = bp5_ld64(b + 16, be);
    if (w == 0 || w > (len - 24) / 8 || len != 8 * (3 + w) || ns == 0)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "%s: offset %zu: writer map for %llu writers, %llu sub-files in %llu bytes",
                         what, at, (unsigned long long)w, (unsigned long long)ns,
                         (unsigned long long)len);
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->maps, &ix->cap_maps, ix->nmaps + 1, sizeof *ix->maps));
    uint64_t *sf = gbp_malloc((size_t)w * sizeof *sf);
    if (!sf) return GPUBP_ERR_NOMEM;
    for (uint64_t i = 0; i < w; i++) {
        sf[i] = bp5_ld64(b + 24 + 8 * i, be);
        if (sf[i] >= ns) {
            uint64_t bad = sf[i];
            gbp_free(sf);
            return gbp_error(GPUBP_ERR_FORMAT, 0,
                             "%s: offset %zu: writer %llu writes sub-file %llu of %llu", what,
                             at + 24 + 8 * (size_t)i, (unsigned long long)i,
                             (unsigned long long)bad, (unsigned long long)ns);
        }
    }
    bp5_map *m = &ix->maps[ix->nmaps++];
    m->nwriters = w;
    m->naggregators = na;
    m->nsubfiles = ns;
    m->subfile = sf;
    return GPUBP_OK;
}

/* n values for a step's pieces, from slabs of at least BP5_SLAB values (one malloc per slab, not
 * per step: 10,000 steps of one writer are 80 kB, not 10,000 allocations) */
#define BP5_SLAB 4096
static int slab_alloc(bp5_idx *ix, size_t n, uint64_t **out)
{
    if (n > ix->slab_cap - ix->slab_used || !ix->nslabs) {
        size_t cap = n > BP5_SLAB ? n : BP5_SLAB;
        GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->slabs, &ix->cap_slabs, ix->nslabs + 1,
                                      sizeof *ix->slabs));
        uint64_t *sl = gbp_malloc(cap * sizeof *sl);
        if (!sl) return GPUBP_ERR_NOMEM;
        ix->slabs[ix->nslabs++] = sl;
        ix->slab_cap = cap;
        ix->slab_used = 0;
    }
    *out = ix->slabs[ix->nslabs - 1] + ix->slab_used;
    ix->slab_used += n;
    return GPUBP_OK;
}

static int add_step(bp5_idx *ix, const uint8_t *b, uint64_t len, size_t at, uint64_t md0_size,
                    const char *what)
{
    int be = ix->big_endian;
    if (ix->nmaps == 0)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: step record before any writer map",
                         what, at);
    const bp5_map *m = &ix->maps[ix->nmaps - 1];
    if (len < 24)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: step record of %llu bytes", what,
                         at, (unsigned long long)len);
    uint64_t pos = bp5_ld64(b, be), size = bp5_ld64(b + 8, be), f = bp5_ld64(b + 16, be);
    /* L = 8 (3 + W (2F + 1)), checked without overflow */
    uint64_t per = (len - 24) / 8 / m->nwriters;
    if (f > per || per != 2 * f + 1 || len != 8 * (3 + m->nwriters * per))
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "%s: offset %zu: step record of %llu bytes for %llu writers and %llu flushes",
                         what, at, (unsigned long long)len, (unsigned long long)m->nwriters,
                         (unsigned long long)f);
    if (size < 8 + 16 * m->nwriters || pos > md0_size || size > md0_size - pos)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "%s: offset %zu: step %llu's metadata [%llu, +%llu) outside md.0 (%llu bytes)",
                         what, at, (unsigned long long)ix->nseen, (unsigned long long)pos,
                         (unsigned long long)size,
                         (unsigned long long)md0_size);
    uint64_t n = ix->nseen++;
    if (ix->keep && !ix->keep(ix->keep_ctx, n)) return GPUBP_OK; /* not selected */
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&ix->steps, &ix->cap_steps, ix->nsteps + 1,
                                  sizeof *ix->steps));
    size_t np = (size_t)(m->nwriters * per);
    uint64_t *pc = NULL;
    GBP_FORWARD_IF_ERROR(slab_alloc(ix, np, &pc));
    for (size_t i = 0; i < np; i++) pc[i] = bp5_ld64(b + 24 + 8 * i, be);
    bp5_step_rec *r = &ix->steps[ix->nsteps++];
    r->md_pos = pos;
    r->md_size = size;
    r->nflush = f;
    r->pieces = pc;
    r->map = ix->nmaps - 1;
    return GPUBP_OK;
}

int bp5_idx_parse(bp5_idx *ix, const uint8_t *p, size_t n, uint64_t md0_size, int partial_ok,
                  const char *what)
{
    return bp5_idx_parse_at(ix, p, n, 0, 0, md0_size, partial_ok || (n >= 40 && p[39] != 0), what);
}

int bp5_idx_parse_at(bp5_idx *ix, const uint8_t *q, size_t n, size_t base, int more,
                     uint64_t md0_size, int partial_ok, const char *what)
{
    if (base > ix->parsed || (ix->parsed == 0 && base != 0))
        return gbp_error(GPUBP_ERR_INTERNAL, 0, "%s: bytes from %zu, parsed up to %zu", what, base,
                         ix->parsed);
    if (ix->parsed == 0) GBP_FORWARD_IF_ERROR(parse_header(ix, q, n, what));
    n += base; /* offsets below are the file's; q holds [base, n) */
    if (n < ix->parsed)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: shrank to %zu bytes (had %zu)", what, n,
                         ix->parsed);
    partial_ok = partial_ok || more;
    size_t at = ix->parsed;
    while (at < n) {
        if (n - at < 9) goto partial;
        uint8_t type = q[at - base];
        uint64_t len = bp5_ld64(q + (at - base) + 1, ix->big_endian);
        if (type != 'w' && type != 's')
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: unknown record type 0x%02x",
                             what, at, type);
        if (len > n - at - 9) {
            if (len > (uint64_t)1 << 40)
                return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: record length %llu", what,
                                 at, (unsigned long long)len);
            goto partial;
        }
        const uint8_t *b = q + (at - base) + 9;
        GBP_FORWARD_IF_ERROR(type == 'w' ? add_map(ix, b, len, at, what)
                                         : add_step(ix, b, len, at, md0_size, what));
        at += 9 + (size_t)len;
        ix->parsed = at;
    }
    return GPUBP_OK;
partial:
    if (partial_ok) return GPUBP_OK;
    return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: record is truncated (%zu bytes left)",
                     what, at, n - at);
}

int bp5_locate(const bp5_idx *ix, size_t s, uint64_t w, uint64_t loc, uint64_t *subfile,
               uint64_t *offset, const char *what)
{
    if (s >= ix->nsteps)
        return gbp_error(GPUBP_ERR_INTERNAL, 0, "%s: step %zu of %zu", what, s, ix->nsteps);
    const bp5_step_rec *r = &ix->steps[s];
    const bp5_map *m = &ix->maps[r->map];
    if (w >= m->nwriters)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: step %zu (its block at offset %llu): writer %llu "
                         "of %llu", what, s, (unsigned long long)r->md_pos, (unsigned long long)w,
                         (unsigned long long)m->nwriters);
    if (loc == BP5_NO_DATA)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: step %zu (its block at offset %llu): no data "
                         "exists for this block (statistics only)", what, s,
                         (unsigned long long)r->md_pos);
    const uint64_t *pc = r->pieces + (size_t)w * (size_t)(2 * r->nflush + 1);
    uint64_t sum = 0;
    *subfile = m->subfile[w];
    for (uint64_t i = 0; i < r->nflush; i++) {
        uint64_t pos = pc[2 * i], size = pc[2 * i + 1];
        if (loc - sum < size) {
            *offset = pos + (loc - sum);
            return GPUBP_OK;
        }
        sum += size; /* loc - sum >= size: loc stays >= sum */
    }
    *offset = pc[2 * r->nflush] + (loc - sum);
    if (*offset < loc - sum)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: step %zu (its block at offset %llu): block "
                         "location %llu overflows", what, s, (unsigned long long)r->md_pos,
                         (unsigned long long)loc);
    return GPUBP_OK;
}
