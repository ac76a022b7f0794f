/* lib/engine/bp5read.c: the reader's BP5 path: a dataset with mmd.0 is opened here. md.idx and mmd.0 are parsed as far
 * as they go (again, incrementally, when a READ-mode reader waits for steps), each step's md.0
 * block fills the reader's index (lib/format/bp5_index.c), and everything above the index
 * (selections, box copies, device paths, gpubpls) is shared with BP4. */
#include "engine/bp5read.h"

#include "engine/dataset.h"

#include "format/bp5.h"

#include <stdio.h>
#include <sys/stat.h>

#define GBP_BP5_MAX_META ((uint64_t)1 << 30)

/* The whole of a metadata file, or n = 0 when it is absent and `optional`. */
static int read_whole(gpubp_file *f, const char *name, uint8_t **p, size_t *n, int optional)
{
    char *path = gbp_path_join(f->path, name);
    GBP_CHECK_ALLOC(path);
    struct stat st;
    int rc = GPUBP_OK;
    *p = NULL;
    *n = 0;
    if (stat(path, &st) == 0 && (uint64_t)st.st_size > GBP_BP5_MAX_META)
        rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: %llu bytes is larger than any BP5 metadata file",
                       path, (unsigned long long)st.st_size);
    if (rc == GPUBP_OK) rc = gbp_read_file(path, p, n, 0);
    if (rc == GPUBP_ERR_NOT_FOUND && optional) rc = GPUBP_OK;
    else if (rc == GPUBP_ERR_NOT_FOUND)
        rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: the BP5 dataset has no %s", f->path, name);
    gbp_free(path);
    return rc;
}

/* (Re)reads md.idx and mmd.0 and parses what is new in them; md.0's size bounds the steps. */
int gbp_bp5_load_metadata(gpubp_file *f)
{
    bp5_reader *r = f->bp5;
    uint8_t *idx = NULL, *mmd = NULL;
    size_t ilen = 0, mlen = 0;
    char wi[4200], wm[4200];
    snprintf(wi, sizeof wi, "%s/md.idx", f->path);
    snprintf(wm, sizeof wm, "%s/mmd.0", f->path);
    int rc = read_whole(f, "md.idx", &idx, &ilen, 1);
    /* a writer that has not written the header yet: nothing to see */
    int early = rc == GPUBP_OK && ilen < BP5_HEADER_SIZE && r->idx.parsed == 0;
    if (rc == GPUBP_OK && !early) rc = read_whole(f, "mmd.0", &mmd, &mlen, 0);
    uint64_t msize = 0;
    if (rc == GPUBP_OK && !early) {
        char *m0 = gbp_path_join(f->path, "md.0");
        struct stat st;
        if (!m0) rc = gbp_nomem();
        else if (stat(m0, &st) == 0) msize = (uint64_t)st.st_size;
        else if (r->idx.nsteps || ilen > BP5_HEADER_SIZE)
            rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: md.idx lists steps but md.0 is missing", f->path);
        gbp_free(m0);
    }
    if (rc == GPUBP_OK && !early) {
        int active = ilen > 39 && idx[39] != 0;
        rc = bp5_idx_parse(&r->idx, idx, ilen, msize, f->mode == GPUBP_MODE_READ, wi);
        if (rc == GPUBP_OK) {
            r->ft.big_endian = r->idx.big_endian;
            rc = bp5_formats_parse(&r->ft, mmd, mlen, active || f->mode == GPUBP_MODE_READ, wm);
        }
        if (rc == GPUBP_OK) {
            f->md0_size = msize;
            f->writer_active = active;
            f->nrecords = r->idx.flatten ? (r->idx.nsteps && !active ? 1 : 0) : r->idx.nsteps;
        }
    } else if (rc == GPUBP_OK) {
        f->writer_active = 1;
    }
    gbp_free(idx);
    gbp_free(mmd);
    return rc;
}

/* Adds dataset steps to the index until it presents nsteps (flattened: every step at once). */
int gbp_bp5_parse_until(gpubp_file *f, size_t nsteps)
{
    bp5_reader *r = f->bp5;
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    f->ix.steps_hint = nsteps;
    size_t want = r->idx.flatten ? r->idx.nsteps : nsteps;
    uint8_t *buf = NULL;
    size_t cap = 0;
    int rc = GPUBP_OK;
    while (rc == GPUBP_OK && r->nadded < want && r->nadded < r->idx.nsteps) {
        const bp5_step_rec *s = &r->idx.steps[r->nadded];
        if (s->md_size > cap) {
            uint8_t *nb = gbp_realloc(buf, (size_t)s->md_size);
            if (!nb) {
                rc = gbp_nomem();
                break;
            }
            buf = nb;
            cap = (size_t)s->md_size;
        }
        rc = gbp_reader_md0(f, s->md_pos, (size_t)s->md_size, buf);
        if (rc == GPUBP_OK) rc = bp5_index_add_step(&f->ix, r, buf, (size_t)s->md_size, what);
    }
    gbp_free(buf);
    if (rc == GPUBP_OK && f->mode == GPUBP_MODE_READ_RANDOM_ACCESS) bp5_index_finish(&f->ix);
    return rc;
}

int gbp_bp5_open(gpubp_file *f)
{
    if (f->comm)
        return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                         "%s is an ADIOS2 BP5 dataset: parallel (MPI) readers read BP4 only so far",
                         f->path);
    f->bp5 = gbp_calloc(1, sizeof *f->bp5);
    GBP_CHECK_ALLOC(f->bp5);
    bp5_reader_init(f->bp5, gbp_reader_md0, f);
    gbp_index_free(&f->ix);
    gbp_index_init(&f->ix, bp5_index_load, f->bp5);
    GBP_FORWARD_IF_ERROR(gbp_bp5_load_metadata(f));
    if (f->mode == GPUBP_MODE_READ_RANDOM_ACCESS) return gbp_bp5_parse_until(f, f->nrecords);
    return GPUBP_OK;
}

void gbp_bp5_free(gpubp_file *f)
{
    bp5_reader_free(f->bp5);
    gbp_free(f->bp5);
    f->bp5 = NULL;
}

int gbp_bp5_not_found(const gpubp_file *f, const char *name)
{
    const char *what = f->bp5 ? bp5_unsupported(f->bp5, name) : NULL;
    if (!what) return GPUBP_ERR_NOT_FOUND;
    return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0, "variable '%s' of %s is %s, which libgpubp does "
                     "not read", name, f->path, what);
}

int gbp_bp5_op(const gpubp_file *f, const gpubp_variable *v, const uint8_t *z, size_t n,
               size_t raw, int *type, const uint8_t **rawp)
{
    char what[4300];
    size_t rl = 0;
    snprintf(what, sizeof what, "%s: '%s'", f->path, v->name);
    GBP_FORWARD_IF_ERROR(bp5_op_parse(z, n, raw, type, rawp, &rl, what));
    if (*type == BP5_OP_BZIP2)
        return gbp_error(GPUBP_ERR_CODEC, 0, "%s: block compressed with bzip2, which this build of "
                         "libgpubp does not decode (libbz2 was not found)", what);
    return GPUBP_OK;
}
