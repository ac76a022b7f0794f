/* The reader's md.0 window and the two passes that fill the index (format/index.h). */
#include "engine/scan.h"

#include "engine/bp5read.h"
#include "engine/dataset.h"

#include "compress/blosczlib.h"
#include "format/bp4_index.h"
#include "memspace/box.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- open and the index ------------------------------------------------------------------- */

#define GBP_MD0_WINDOW ((size_t)4 << 20)

/* Sanity bounds against files that claim huge sizes: checked before anything is allocated. */
#define GBP_MAX_STEP_METADATA ((uint64_t)256 << 20)

static int gbp_scan_window_over(gpubp_file *f, const bp4_idx_record *r, const char *what);

/* The streaming pass: md.0 is read through a window of a few MiB (or one step, if larger), and
 * each step is parsed into the index once. */
int gbp_scan_until(gpubp_file *f, size_t nsteps)
{
    if (f->rd.bp5) return gbp_bp5_parse_until(f, nsteps);
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    f->rd.ix.steps_hint = nsteps;
    while (f->rd.ix.nsteps < nsteps) {
        const bp4_idx_record *r = &f->rd.records[f->rd.ix.nsteps];
        GBP_FORWARD_IF_ERROR(gbp_scan_window_over(f, r, what));
        GBP_FORWARD_IF_ERROR(
            bp4_index_add_step(&f->rd.ix, f->rd.md0, f->rd.md0_base, f->rd.md0_len, r, what));
    }
    return GPUBP_OK;
}

/* Positions the md.0 window over the step of record r. */
static int gbp_scan_window_over(gpubp_file *f, const bp4_idx_record *r, const char *what)
{
    {
        if (r->end - r->pg_off > GBP_MAX_STEP_METADATA)
            return gbp_error(GPUBP_ERR_FORMAT, 0,
                             "%s: step %llu claims %llu bytes of metadata (limit %llu)", what,
                             (unsigned long long)r->step,
                             (unsigned long long)(r->end - r->pg_off),
                             (unsigned long long)GBP_MAX_STEP_METADATA);
        if (r->pg_off < f->rd.md0_base || r->end > f->rd.md0_base + f->rd.md0_len) {
            size_t need = (size_t)(r->end - r->pg_off);
            size_t want = need > GBP_MD0_WINDOW ? need : GBP_MD0_WINDOW;
            if (want > f->md0_size - r->pg_off) want = (size_t)(f->md0_size - r->pg_off);
            if (want > f->rd.md0_cap) {
                uint8_t *w = gbp_realloc(f->rd.md0, want);
                if (!w) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes of md.0)", want);
                f->rd.md0 = w;
                f->rd.md0_cap = want;
            }
            f->rd.md0_len = 0;
            GBP_FORWARD_IF_ERROR(gbp_reader_md0(f, r->pg_off, want, f->rd.md0));
            f->rd.md0_base = r->pg_off;
            f->rd.md0_len = want;
            /* read ahead of the next window while this one is parsed */
            if (!f->rd.remote && r->pg_off + want < f->md0_size)
                posix_fadvise(f->md0_fd, (off_t)(r->pg_off + want), (off_t)GBP_MD0_WINDOW,
                              POSIX_FADV_WILLNEED);
        }
    }
    return GPUBP_OK;
}

/* After a light pass (random-access open): the second pass that gives every step's shapes and
 * min/max over all steps, run once, the first time a listing needs them. */
int gbp_scan_summary(gpubp_file *f)
{
    if (f->rd.ix.summarized || f->rd.ix.nsteps == 0) return GPUBP_OK;
    if (f->rd.bp5) return gbp_bp5_summary(f);
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    while (f->rd.ix.sum_steps < f->rd.ix.nsteps) {
        const bp4_idx_record *r = &f->rd.records[f->rd.ix.sum_steps];
        GBP_FORWARD_IF_ERROR(gbp_scan_window_over(f, r, what));
        GBP_FORWARD_IF_ERROR(bp4_index_summarize_step(&f->rd.ix, f->rd.md0, f->rd.md0_base,
                                                      f->rd.md0_len, r, what));
    }
    gbp_scan_drop_window(f);
    return GPUBP_OK;
}

void gbp_scan_drop_window(gpubp_file *f)
{
    gbp_free(f->rd.md0);
    f->rd.md0 = NULL;
    f->rd.md0_len = f->rd.md0_cap = 0;
    f->rd.md0_base = 0;
}
