/* lib/engine/bp5read.c: the reader's BP5 path: a dataset with mmd.0 is opened here. md.idx and mmd.0 are parsed as far
 * as they go (again, incrementally, when a READ-mode reader waits for steps), each step's md.0
 * block fills the reader's index (lib/format/bp5_index.c), and everything above the index
 * (selections, box copies, device paths, gpubpls) is shared with BP4. */
#include "engine/bp5read.h"

#include "engine/collective.h"
#include "engine/dataset.h"
#include "engine/rvar.h"

#include "format/bp5_ffs.h"
#include "format/bp5_idx.h"
#include "format/bp5_index.h"
#include "format/bp5_op.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GBP_BP5_MAX_META ((uint64_t)1 << 30)

/* md.0 bytes through the engine (local, remote, or as rank 0 broadcast them), counted. */
static int md0_read(void *ctx, uint64_t off, size_t n, uint8_t *buf)
{
    gpubp_file *f = ctx;
    f->rd.bp5->md0_bytes += n;
    return gbp_reader_md0(f, off, n, buf);
}

/* The size of a file of the dataset; *exists 0 (size 0) when it is absent. */
static int meta_size(gpubp_file *f, const char *name, uint64_t *size, int *exists)
{
    *size = 0;
    *exists = 0;
    if (f->rd.remote) {
        int rc = gbp_remote_size(f->rd.remote, name, size);
        if (rc == GPUBP_ERR_NOT_FOUND) return GPUBP_OK;
        *exists = rc == GPUBP_OK;
        return rc;
    }
    char *path = gbp_path_join(f->path, name);
    GBP_CHECK_ALLOC(path);
    struct stat st;
    if (stat(path, &st) == 0) {
        *size = (uint64_t)st.st_size;
        *exists = 1;
    }
    gbp_free(path);
    return GPUBP_OK;
}

/* n bytes at off of a file of the dataset. */
static int meta_pread(gpubp_file *f, const char *name, uint8_t *buf, size_t n, uint64_t off)
{
    if (n == 0) return GPUBP_OK;
    if (strcmp(name, "md.0")) f->rd.bp5->idx_bytes += n;
    if (f->rd.remote) return gbp_remote_pread(f->rd.remote, name, buf, n, off);
    char *path = gbp_path_join(f->path, name);
    GBP_CHECK_ALLOC(path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc = fd < 0 ? gbp_error(GPUBP_ERR_IO, errno, "%s: cannot open: %s", path, strerror(errno))
                    : gbp_pread_all(fd, buf, n, off, path);
    if (fd >= 0) close(fd);
    gbp_free(path);
    return rc;
}

/* Brings the copy of a metadata file (*buf, *len bytes) up to the file's size, reading only the
 * bytes after *len. An absent file is an error. */
static int meta_grow(gpubp_file *f, const char *name, uint8_t **buf, size_t *len)
{
    uint64_t size;
    int exists;
    GBP_FORWARD_IF_ERROR(meta_size(f, name, &size, &exists));
    if (!exists) return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: the BP5 dataset has no %s", f->path, name);
    if (size > GBP_BP5_MAX_META)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/%s: %llu bytes is larger than any BP5 metadata "
                         "file", f->path, name, (unsigned long long)size);
    if (size < *len)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/%s shrank from %zu to %llu bytes while open",
                         f->path, name, *len, (unsigned long long)size);
    size_t old = *len;
    if (size > old) {
        uint8_t *p = gbp_realloc(*buf, (size_t)size);
        if (!p) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%llu bytes of %s)",
                                 (unsigned long long)size, name);
        *buf = p;
        GBP_FORWARD_IF_ERROR(meta_pread(f, name, p + old, (size_t)size - old, old));
        *len = (size_t)size;
    }
    return GPUBP_OK;
}

/* md.idx is read in pieces of this size from the end of what is parsed (more for a larger
 * record): the index is never held whole. */
#define BP5_IDX_PIECE ((size_t)64 << 10)

/* md.idx's records after those parsed, up to isize bytes: from tail (its bytes from the parsed
 * offset, tail_len of them) or, when tail is NULL, from the file piece by piece. */
static int parse_idx(gpubp_file *f, uint64_t isize, const uint8_t *tail, size_t tail_len,
                     uint64_t msize, int partial_ok, const char *what)
{
    bp5_reader *r = f->rd.bp5;
    if (tail)
        return bp5_idx_parse_at(&r->idx, tail, tail_len, r->idx.parsed, 0, msize, partial_ok, what);
    size_t piece = BP5_IDX_PIECE, cap = 0;
    uint8_t *buf = NULL;
    /* room for as many steps as the new bytes can hold (a step record has at least 41 bytes),
     * once, instead of doubling */
    size_t most = (size_t)((isize - r->idx.parsed) / 41);
    if (most > 1024)
        GBP_FORWARD_IF_ERROR(gbp_grow((void **)&r->idx.steps, &r->idx.cap_steps,
                                      r->idx.nsteps + most, sizeof *r->idx.steps));
    int rc = GPUBP_OK;
    while (rc == GPUBP_OK && r->idx.parsed < isize) {
        size_t at = r->idx.parsed, n = (size_t)(isize - at) < piece ? (size_t)(isize - at) : piece;
        if (n > cap) {
            uint8_t *nb = gbp_realloc(buf, n);
            if (!nb) {
                rc = gbp_nomem();
                break;
            }
            buf = nb;
            cap = n;
        }
        int more = at + n < isize;
        rc = meta_pread(f, "md.idx", buf, n, at);
        if (rc == GPUBP_OK) rc = bp5_idx_parse_at(&r->idx, buf, n, at, more, msize, partial_ok, what);
        if (rc == GPUBP_OK && r->idx.parsed == at) {
            if (!more) break; /* a record the writer has not finished */
            if (piece > GBP_BP5_MAX_META / 2)
                rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: offset %zu: a record larger than %llu "
                               "bytes", what, at, (unsigned long long)GBP_BP5_MAX_META);
            piece *= 2; /* a record larger than the piece */
        }
    }
    gbp_free(buf);
    return rc;
}

/* Parses what is new: md.idx's records (isize: its size; tail: see parse_idx) after its header
 * (r->hdr), and mmd.0's copy; msize: md.0's size. */
static int parse_metadata(gpubp_file *f, uint64_t isize, const uint8_t *tail, size_t tail_len,
                          uint64_t msize)
{
    bp5_reader *r = f->rd.bp5;
    char wi[4200], wm[4200];
    snprintf(wi, sizeof wi, "%s/md.idx", f->path);
    snprintf(wm, sizeof wm, "%s/mmd.0", f->path);
    if (isize < BP5_HEADER_SIZE && r->idx.parsed == 0) { /* no header yet: nothing to see */
        f->rd.writer_active = 1;
        return GPUBP_OK;
    }
    int active = r->hdr[39] != 0;
    GBP_FORWARD_IF_ERROR(parse_idx(f, isize, tail, tail_len, msize,
                                   active || f->mode == GPUBP_MODE_READ, wi));
    r->ft.big_endian = r->idx.big_endian;
    GBP_FORWARD_IF_ERROR(bp5_formats_parse(&r->ft, r->mmd_buf, r->mmd_len,
                                           active || f->mode == GPUBP_MODE_READ, wm));
    f->md0_size = msize;
    f->rd.writer_active = active;
    f->rd.nrecords = r->idx.flatten ? (r->idx.nsteps && !active ? 1 : 0) : r->idx.nsteps;
    return GPUBP_OK;
}

/* md.idx's size and header (the writer's active flag: read again at every look), what is new in
 * mmd.0 (once md.idx has its header), md.0's size. */
static int fetch_metadata(gpubp_file *f, uint64_t *isize, uint64_t *msize)
{
    bp5_reader *r = f->rd.bp5;
    int exists;
    *msize = 0;
    GBP_FORWARD_IF_ERROR(meta_size(f, "md.idx", isize, &exists));
    if (*isize > GBP_BP5_MAX_META)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/md.idx: %llu bytes is larger than any BP5 "
                         "metadata file", f->path, (unsigned long long)*isize);
    if (*isize < r->idx.parsed)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/md.idx shrank from %zu to %llu bytes while open",
                         f->path, r->idx.parsed, (unsigned long long)*isize);
    if (*isize < BP5_HEADER_SIZE && r->idx.parsed == 0) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(meta_pread(f, "md.idx", r->hdr, BP5_HEADER_SIZE, 0));
    GBP_FORWARD_IF_ERROR(meta_grow(f, "mmd.0", &r->mmd_buf, &r->mmd_len));
    GBP_FORWARD_IF_ERROR(meta_size(f, "md.0", msize, &exists));
    if (!exists && (r->idx.nsteps || *isize > BP5_HEADER_SIZE))
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: md.idx lists steps but md.0 is missing", f->path);
    return GPUBP_OK;
}

/* Parallel readers: rank 0 reads what is new in md.idx, mmd.0 and md.0 (up to the end of the last
 * step md.idx lists) and broadcasts it; every rank parses the same bytes, and serves md.0 from
 * memory (f->rd.md0_all). */
static int load_metadata_comm(gpubp_file *f)
{
    gbp_comm *c = f->comm;
    bp5_reader *r = f->rd.bp5;
    size_t old_m = r->mmd_len, old_d = f->rd.md0_all_len;
    /* md.idx's size, its new bytes, mmd.0 bytes, md.0 bytes kept, md.0's size */
    uint64_t hdr[5] = {0, 0, 0, 0, 0};
    uint8_t *tail = NULL;
    int rc = GPUBP_OK;
    if (c->rank == 0) {
        uint64_t isize = 0, msize = 0;
        size_t at = r->idx.parsed;
        rc = fetch_metadata(f, &isize, &msize);
        if (rc == GPUBP_OK && isize > at && (isize >= BP5_HEADER_SIZE || at)) {
            tail = gbp_malloc((size_t)(isize - at));
            rc = tail ? meta_pread(f, "md.idx", tail, (size_t)(isize - at), at) : gbp_nomem();
            hdr[1] = isize - at;
        }
        if (rc == GPUBP_OK) rc = parse_metadata(f, isize, tail, (size_t)hdr[1], msize);
        uint64_t end = old_d;
        for (size_t s = 0; rc == GPUBP_OK && s < r->idx.nsteps; s++)
            if (r->idx.steps[s].md_pos + r->idx.steps[s].md_size > end)
                end = r->idx.steps[s].md_pos + r->idx.steps[s].md_size;
        if (rc == GPUBP_OK && end > old_d) {
            uint8_t *m = gbp_realloc(f->rd.md0_all, (size_t)end);
            if (!m) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%llu bytes of md.0)",
                                   (unsigned long long)end);
            else f->rd.md0_all = m;
            if (rc == GPUBP_OK) rc = meta_pread(f, "md.0", m + old_d, (size_t)(end - old_d), old_d);
        }
        hdr[0] = isize;
        hdr[2] = r->mmd_len;
        hdr[3] = end;
        hdr[4] = msize;
    }
    rc = gbp_comm_agree(c, rc, 0);
    if (rc == GPUBP_OK) rc = gbp_comm_bcast(c, hdr, sizeof hdr, 0);
    if (rc != GPUBP_OK) {
        gbp_free(tail);
        return rc;
    }
    if (c->rank != 0) {
        tail = hdr[1] ? gbp_malloc((size_t)hdr[1]) : NULL;
        uint8_t *pm = hdr[2] > old_m ? gbp_realloc(r->mmd_buf, (size_t)hdr[2]) : r->mmd_buf;
        if (pm) r->mmd_buf = pm;
        uint8_t *pd = hdr[3] > old_d ? gbp_realloc(f->rd.md0_all, (size_t)hdr[3]) : f->rd.md0_all;
        if (pd) f->rd.md0_all = pd;
        if ((hdr[1] && !tail) || (hdr[2] > old_m && !pm) || (hdr[3] > old_d && !pd))
            rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%llu bytes of metadata)",
                           (unsigned long long)(hdr[1] + hdr[2] + hdr[3]));
    }
    /* all ranks agree that the buffers are there before the broadcasts fill them */
    rc = gbp_comm_agree_all(c, rc, "reading the BP5 metadata");
    if (rc == GPUBP_OK) rc = gbp_comm_bcast(c, r->hdr, sizeof r->hdr, 0);
    if (rc == GPUBP_OK && hdr[1]) rc = gbp_comm_bcast(c, tail, (size_t)hdr[1], 0);
    if (rc == GPUBP_OK && hdr[2] > old_m)
        rc = gbp_comm_bcast(c, r->mmd_buf + old_m, (size_t)(hdr[2] - old_m), 0);
    if (rc == GPUBP_OK && hdr[3] > old_d)
        rc = gbp_comm_bcast(c, f->rd.md0_all + old_d, (size_t)(hdr[3] - old_d), 0);
    if (rc == GPUBP_OK && c->rank != 0) {
        r->mmd_len = (size_t)hdr[2];
        rc = parse_metadata(f, hdr[0], tail, (size_t)hdr[1], hdr[4]);
    }
    gbp_free(tail);
    if (rc == GPUBP_OK) f->rd.md0_all_len = (size_t)hdr[3];
    return gbp_comm_agree_all(c, rc, "parsing the BP5 metadata");
}

/* (Re)reads what is new in md.idx and mmd.0 and parses it; md.0's size bounds the steps. */
int gbp_bp5_load_metadata(gpubp_file *f)
{
    if (f->comm) return load_metadata_comm(f);
    uint64_t isize = 0, msize = 0;
    GBP_FORWARD_IF_ERROR(fetch_metadata(f, &isize, &msize));
    return parse_metadata(f, isize, NULL, 0, msize);
}

/* Adds dataset steps to the index until it presents nsteps (flattened: every step at once). */
int gbp_bp5_parse_until(gpubp_file *f, size_t nsteps)
{
    bp5_reader *r = f->rd.bp5;
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    f->rd.ix.steps_hint = nsteps;
    size_t want = r->idx.flatten ? r->idx.nsteps : nsteps;
    int rc = GPUBP_OK;
    while (rc == GPUBP_OK && r->nadded < want && r->nadded < r->idx.nsteps) {
        const uint8_t *buf = NULL;
        rc = bp5_step_block(r, r->nadded, &buf);
        if (rc == GPUBP_OK)
            rc = bp5_index_add_step(&f->rd.ix, r, buf, (size_t)r->idx.steps[r->nadded].md_size,
                                    what);
    }
    if (rc == GPUBP_OK && f->mode == GPUBP_MODE_READ_RANDOM_ACCESS) {
        bp5_index_finish(&f->rd.ix);
        /* random access reads mmd.0 once: its copy is not needed again */
        gbp_free(r->mmd_buf);
        r->mmd_buf = NULL;
        r->mmd_len = 0; /* a refresh would fail (shrank), never misparse */
    }
    return rc;
}

size_t gbp_dataset_step(const gpubp_file *f, const gbp_var_step *st)
{
    if (!f->rd.bp5 || f->rd.bp5->idx.flatten) return st->step;
    return (size_t)st->entry_off;
}

int gbp_bp5_summary(gpubp_file *f)
{
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    return bp5_index_summarize(&f->rd.ix, f->rd.bp5, what);
}

/* select_steps: the step records the reader keeps (format/bp5.h bp5_idx.keep) */
static int keep_step(const void *params, uint64_t step)
{
    return gbp_params_step_selected(params, step);
}

int gbp_bp5_setup(gpubp_file *f)
{
    f->rd.bp5 = gbp_calloc(1, sizeof *f->rd.bp5);
    GBP_CHECK_ALLOC(f->rd.bp5);
    bp5_reader_init(f->rd.bp5, md0_read, f);
    f->rd.bp5->idx.ignore_flatten = f->params.ignore_flatten;
    if (f->params.nselect) {
        f->rd.bp5->idx.keep = keep_step;
        f->rd.bp5->idx.keep_ctx = &f->params;
    }
    gbp_index_free(&f->rd.ix);
    gbp_index_init(&f->rd.ix, bp5_index_load, f->rd.bp5);
    return GPUBP_OK;
}

int gbp_bp5_open(gpubp_file *f)
{
    GBP_FORWARD_IF_ERROR(gbp_bp5_setup(f));
    GBP_FORWARD_IF_ERROR(gbp_bp5_load_metadata(f));
    if (f->mode != GPUBP_MODE_READ_RANDOM_ACCESS) return GPUBP_OK;
    f->rd.ix.light = 1; /* block counts now, shapes and min/max when asked (gbp_bp5_summary) */
    return gbp_bp5_parse_until(f, f->rd.nrecords);
}

void gbp_bp5_free(gpubp_file *f)
{
    bp5_reader_free(f->rd.bp5);
    gbp_free(f->rd.bp5);
    f->rd.bp5 = NULL;
}

int gbp_bp5_not_found(const gpubp_file *f, const char *name)
{
    const char *what = f->rd.bp5 ? bp5_unsupported(f->rd.bp5, name) : NULL;
    if (!what) return GPUBP_ERR_NOT_FOUND;
    return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "variable '%s' of %s is %s, which libgpubp does "
                     "not read", name, f->path, what);
}

int gbp_bp5_check_block(gpubp_file *f, const gpubp_variable *v, const gbp_block *b, int fd,
                        size_t es)
{
    uint64_t bytes = es;
    for (size_t i = 0; i < b->ndims; i++) {
        uint64_t c = GBP_COUNT(b)[i];
        bytes = c && bytes > UINT64_MAX / c ? UINT64_MAX : bytes * c;
    }
    return gbp_block_check_span(f, v->name, b, fd, bytes);
}

static void swap_bytes(uint8_t *p, size_t n)
{
    for (size_t a = 0, z = n - 1; a < z; a++, z--) {
        uint8_t t = p[a];
        p[a] = p[z];
        p[z] = t;
    }
}

static int host_big_endian(void)
{
    const uint16_t x = 1;
    uint8_t c;
    memcpy(&c, &x, 1);
    return c == 0;
}

int gbp_bp5_swapped(const gpubp_file *f)
{
    return f->rd.bp5 && f->rd.bp5->idx.big_endian != host_big_endian();
}

/* n elements of `type` at p from the other byte order (each half of a complex swapped); long
 * double only when ld128 (a big-endian writer's IEEE binary128), converted exactly, else *bad. */
static void swap_elems(uint8_t *p, size_t n, int type, int ld128, int *bad)
{
    if (type == BP5_GPUBP_LONG_DOUBLE && !ld128) return;
    size_t es = gbp_type_size(type);
    size_t unit = type == GPUBP_TYPE_FLOAT_COMPLEX || type == GPUBP_TYPE_DOUBLE_COMPLEX ? es / 2 : es;
    for (size_t i = 0; unit > 1 && i + unit <= n * es; i += unit) {
        for (size_t a = 0, z = unit - 1; a < z; a++, z--) {
            uint8_t t = p[i + a];
            p[i + a] = p[i + z];
            p[i + z] = t;
        }
        if (type == BP5_GPUBP_LONG_DOUBLE && gbp_ld_from_binary128(p + i, p + i)) *bad = 1;
    }
}

/* Elements of v (bytes at buf) from the dataset's byte order into the host's: each element (each
 * half of a complex; a struct's records member by member) swapped; long double taken as IEEE
 * binary128 when the writer was big-endian (FFS only byte-swaps it; the 16-byte IEEE format) and
 * converted exactly, or NOT_SUPPORTED. */
int gbp_bp5_to_host(const gpubp_file *f, const gpubp_variable *v, uint8_t *buf, size_t bytes)
{
    int bad = 0, ld128 = f->rd.bp5->idx.big_endian;
    if (v->type == GPUBP_TYPE_STRUCT && v->rv && v->rv->sdef) {
        /* each field of each record (the description gives offsets in the writer's layout) */
        const gbp_struct_def *d = v->rv->sdef;
        for (size_t r = 0; r + d->size <= bytes; r += d->size)
            for (size_t i = 0; i < d->nfields; i++)
                swap_elems(buf + r + d->fields[i].offset, d->fields[i].count, d->fields[i].type,
                           ld128, &bad);
    } else {
        size_t es = gbp_type_size(v->type);
        if (es) swap_elems(buf, bytes / es, v->type, ld128, &bad);
    }
    if (bad)
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "%s: '%s': a big-endian writer's long double "
                         "(IEEE binary128) has no exact x87 80-bit value", f->path, v->name);
    return GPUBP_OK;
}

/* The operator header's integer of w bytes at p in byte order be. */
static uint64_t op_int(const uint8_t *p, int w, int be)
{
    return w == 8 ? bp5_ld64(p, be) : bp5_ld32(p, be);
}

/* Whether z (n bytes) is an operator buffer whose size_t fields are w bytes in order be: its size
 * field (at 4) says raw, and what follows fits (null: exactly the raw bytes; bzip2: the first
 * batch's stream starts right after the batch table). */
static int op_layout_fits(const uint8_t *z, size_t n, size_t raw, int w, int be)
{
    if (n < 4 + (size_t)w || op_int(z + 4, w, be) != raw) return 0;
    if (z[0] == BP5_OP_NULL) return n == 4 + (size_t)w + raw;
    if (z[0] == BP5_OP_BZIP2) {
        size_t h = 4 + 2 * (size_t)w;
        if (n < h + 16) return 0;
        uint64_t nb = op_int(z + 4 + w, w, be);
        return nb >= 1 && nb <= (n - h) / 16 && bp5_ld32(z + h + 8, be) == h + 16 * nb;
    }
    return z[0] == BP5_OP_BLOSC && n >= 4 + (size_t)w + 11;
}

/* The integers of an operator buffer's own header are the writer's size_t and unsigned int, in
 * its byte order (ADIOS2's PutParameter copies them from memory): 8-byte sizes from 64-bit
 * writers, 4-byte ones from 32-bit writers. libgpubp's decoders read the 64-bit layout,
 * little-endian: a buffer in another layout is rewritten into it (the size field at 4 and the
 * rest of the header tell which: null, bzip2 and blosc buffers). */
int gbp_bp5_op_layout(const gpubp_file *f, uint8_t **zp, size_t *np, size_t raw)
{
    uint8_t *z = *zp;
    size_t n = *np;
    int fbe = f->rd.bp5 && f->rd.bp5->idx.big_endian, w = 0, be = 0;
    static const int cand[4][2] = {{8, -1}, {8, -2}, {4, -1}, {4, -2}}; /* -1 file order, -2 other */
    for (int k = 0; k < 4 && !w && n >= 12; k++) {
        int o = cand[k][1] == -1 ? fbe : !fbe;
        if (op_layout_fits(z, n, raw, cand[k][0], o)) {
            w = cand[k][0];
            be = o;
        }
    }
    if (!w || (w == 8 && !be)) return GPUBP_OK; /* the decoders' layout, or their error */
    size_t grow = w == 8 ? 0 : z[0] == BP5_OP_BZIP2 ? 8 : 4, h = 4 + 2 * (size_t)w;
    uint64_t nb = z[0] == BP5_OP_BZIP2 ? op_int(z + 4 + w, w, be) : 0;
    uint8_t *o = grow ? gbp_malloc(n + grow) : z;
    GBP_CHECK_ALLOC(o);
    uint8_t hdr[24];
    uint64_t size = op_int(z + 4, w, be);
    memcpy(hdr, z, 4);
    for (int i = 0; i < 8; i++) hdr[4 + i] = (uint8_t)(size >> 8 * i);
    if (z[0] == BP5_OP_BZIP2) {
        for (int i = 0; i < 8; i++) hdr[12 + i] = (uint8_t)(nb >> 8 * i);
        memmove(o + 20, z + h, n - h); /* the batch table and the streams */
        memcpy(o, hdr, 20);
        for (uint64_t k = 0; k < nb; k++)
            for (int j = 0; j < 4; j++) {
                uint8_t *e = o + 20 + 16 * k + 4 * j;
                uint32_t v = bp5_ld32(e, be) + (j == 2 ? (uint32_t)grow : 0); /* streams moved */
                for (int i = 0; i < 4; i++) e[i] = (uint8_t)(v >> 8 * i);
            }
    } else {
        memmove(o + 12, z + 4 + w, n - 4 - (size_t)w);
        memcpy(o, hdr, 12);
        if (z[0] == BP5_OP_BLOSC && n >= 4 + (size_t)w + 11 && !(o[15] | o[16] | o[17] | o[18]) && be)
            swap_bytes(o + 19, 4); /* the chunk count of the chunked layout (Blosc2 chunks: LE) */
    }
    if (o != z) gbp_free(z);
    *zp = o;
    *np = n + grow;
    return GPUBP_OK;
}

int gbp_bp5_read_swapped(gpubp_file *f, const gpubp_variable *v, gpubp_memory_space space, int fd,
                         const gbp_block *b, const gbp_box *fbox, uint8_t *dst,
                         const gbp_box *dbox)
{
    size_t es = gbp_rvar_esize(v), n = 1, bytes;
    for (size_t i = 0; i < fbox->ndims; i++)
        if (!gbp_mul_ok(n, fbox->dims[i], &n)) return gbp_nomem();
    if (!gbp_mul_ok(n, es, &bytes)) return gbp_nomem();
    uint8_t *buf = gbp_malloc(bytes ? bytes : 1);
    GBP_CHECK_ALLOC(buf);
    int rc = gbp_dataset_pread(f, b->subfile, fd, buf, bytes, b->payload_offset);
    if (rc == GPUBP_OK) rc = gbp_bp5_to_host(f, v, buf, bytes);
    if (rc == GPUBP_OK) rc = gbp_mem_scatter(f->mem, space, buf, es, fbox, dst, dbox);
    gbp_free(buf);
    return rc;
}
