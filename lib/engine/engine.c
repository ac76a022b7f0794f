/* The engine's front: open and free of a file, and the one place that chooses between the
 * reader, the serial writer and the parallel writer (begin, end, perform, put, close). */
#include "engine/engine.h"

#include "engine/collective.h"
#include "engine/commit.h"
#include "engine/dataset.h"
#include "engine/handles.h"
#include "engine/pwriter.h"
#include "engine/reader.h"
#include "engine/writer.h"

#include "compress/blosczlib.h"
#include "compress/bzip2_op.h"
#include "format/bp4_index.h"
#include "gpubp/cuda.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

unsigned gbp_engine_features(void)
{
    unsigned f = gbp_blosc_features();
    if (gbp_bzip2_available()) f |= GPUBP_FEATURE_BZIP2;
    /* a query: this thread's last error stays what it was (the probe's open and close record and
     * clear their own; a caller that asks the features while reporting a failure keeps it) */
    gbp_saved_error e;
    gbp_error_save(&e, GPUBP_ERR_INTERNAL, sizeof e.msg);
    gbp_params p;
    gbp_params_parse(&p, NULL);
    gbp_mem *m = NULL;
    if (gbp_mem_open(&m, &p) == GPUBP_OK) {
        if (gbp_mem_has_device(m)) f |= GPUBP_FEATURE_CUDA;
        gbp_mem_close(m);
    }
    (void)gbp_error_restore(&e, GPUBP_OK);
    return f;
}

const char *gbp_engine_codec_versions(void) { return gbp_codec_lib_versions(); }

void gbp_engine_free(gpubp_file *f)
{
    for (size_t i = 0; i < f->nvars; i++) {
        gbp_free(f->vars[i]->name);
        gbp_free(f->vars[i]);
    }
    gbp_free(f->vars);
    gbp_free(f->names);
    gbp_free(f->anames);
    if (gbp_is_write_mode(f)) {
        if (f->comm) gbp_pwriter_free(f);
        gbp_writer_free(f);
    } else {
        gbp_reader_free(f);
    }
    gbp_mem_close(f->mem);
    gbp_comm_free(f->pw.group);
    gbp_comm_free(f->comm);
    gbp_free(f->path);
    gbp_free(f);
}

/* The writer's open: the serial one, or the parallel one (which commits in end_step). */
static int open_writer(gpubp_file *f)
{
    gbp_writer_layout(f);
    if (f->comm) return gbp_pwriter_open(f);
    return gbp_writer_open(f);
}

/* Opens a file; a parallel open (comm set; owned by the file from here on) agrees on the outcome
 * of each phase across ranks, so that every rank fails together. */
int gbp_engine_open(gpubp_file **out, const char *path, gpubp_mode mode, const char *params,
                     gbp_comm *comm)
{
    int rc = GPUBP_OK;
    if (!path) rc = gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_open: argument 'path' is NULL");
    else if (!*path) rc = gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_open: empty path");
    else if (mode < GPUBP_MODE_WRITE || mode > GPUBP_MODE_READ_RANDOM_ACCESS)
        rc = gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_open: invalid mode %d", (int)mode);
    else if (gbp_is_remote_url(path) && gbp_is_write_mode_value(mode))
        rc = gbp_error(GPUBP_ERR_WRONG_MODE, 0, "gpubp_open: %s: remote datasets are read only",
                       path);
    else if (comm && gbp_is_remote_url(path))
        rc = gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                       "gpubp_open_comm: %s: remote datasets are opened serially", path);
    gpubp_file *f = rc == GPUBP_OK ? gbp_calloc(1, sizeof *f) : NULL;
    if (rc == GPUBP_OK && !f) rc = gbp_nomem();
    if (rc != GPUBP_OK) {
        if (comm) {
            rc = gbp_comm_agree_all(comm, rc, "gpubp_open");
            gbp_comm_free(comm);
        }
        return rc;
    }
    f->comm = comm;
    f->mode = mode;
    f->md0_fd = f->wr.idx_fd = -1;
    /* keep a path without trailing slashes */
    size_t pl = strlen(path);
    while (pl > 1 && path[pl - 1] == '/') pl--;
    f->path = gbp_strndup(path, pl);
    rc = f->path ? GPUBP_OK : gbp_nomem();
    if (rc == GPUBP_OK) rc = gbp_params_parse(&f->params, params);
    /* compress=CODEC this build cannot write: refused here, not at the first write */
    if (rc == GPUBP_OK && f->params.compress && gbp_is_write_mode(f))
        rc = gbp_blosc_check_codec(f->params.compress_codec);
    if (rc == GPUBP_OK) rc = gbp_mem_open(&f->mem, &f->params);
    if (comm) rc = gbp_comm_agree_all(comm, rc, "gpubp_open");
    if (rc == GPUBP_OK) {
        f->rd.md0_src.read = gbp_reader_md0;
        f->rd.md0_src.ctx = f;
        bp4_index_init(&f->rd.ix, &f->rd.md0_src);
        rc = gbp_is_write_mode(f) ? open_writer(f) : gbp_reader_open(f);
    }
    if (rc != GPUBP_OK) {
        gbp_engine_free(f);
        return rc;
    }
    *out = f;
    return GPUBP_OK;
}

int gbp_engine_begin_step(gpubp_file *f)
{
    return gbp_is_write_mode(f) ? gbp_writer_begin_step(f) : gbp_reader_begin_step(f);
}

/* A writer's end_step: the serial or the parallel one. */
static int writer_end_step(gpubp_file *f)
{
    if (f->comm) return gbp_pwriter_end_step(f);
    return gbp_writer_end_step(f);
}

int gbp_engine_end_step(gpubp_file *f)
{
    return gbp_is_write_mode(f) ? writer_end_step(f) : gbp_reader_end_step(f);
}

int gbp_engine_put(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch mode)
{
    gbp_wblock *wb = NULL;
    int rc = gbp_writer_put(f, v, data, mode, &wb);
    if (rc == GPUBP_OK && mode == GPUBP_SYNC && wb)
        rc = f->comm ? gbp_pwriter_stage(f, wb) : gbp_writer_perform(f);
    /* parallel writers: a failed put fails the step on every rank (at end_step) */
    if (rc < 0 && f->comm && gbp_is_write_mode(f) && f->in_step) return gbp_writer_fail(f, rc);
    return rc;
}

int gbp_engine_perform_puts(gpubp_file *f)
{
    if (!f->comm) return gbp_writer_perform(f);
    /* parallel: offsets are known only at end_step, so the puts' data is copied aside now */
    int rc = GPUBP_OK;
    for (size_t i = 0; i < f->wr.nblocks && rc == GPUBP_OK; i++)
        rc = gbp_pwriter_stage(f, &f->wr.blocks[i]);
    return rc == GPUBP_OK ? rc : gbp_writer_fail(f, rc);
}

/* A writer's close: end the open step, commit the empty first step of a writer that never began
 * one, wait for the last commit, clear the writer-active flag; parallel writers then agree. */
static int close_writer(gpubp_file *f)
{
    int rc = GPUBP_OK;
    if (f->in_step) rc = writer_end_step(f);
    if (rc == GPUBP_OK && f->wr.idx_records == 0 && !f->wr.steps_begun) {
        /* a writer closed without ever beginning a step: commit one empty step, as ADIOS2 does,
         * so that the dataset reads as finished (an empty md.idx means "a writer may still
         * come"); after failed steps nothing is added */
        rc = gbp_writer_begin_step(f);
        if (rc == GPUBP_OK) rc = writer_end_step(f);
    }
    /* async_commit: the last step's commit is waited for (and reported); broken: again */
    int rcw = gbp_writer_commit_wait(f);
    if (rc == GPUBP_OK) rc = rcw;
    int rc2 = gbp_dataset_clear_active(f);
    if (rc == GPUBP_OK) rc = rc2;
    return f->comm ? gbp_pwriter_close_sync(f, rc) : rc;
}

int gbp_engine_close(gpubp_file *f)
{
    int rc = GPUBP_OK;
    if (gbp_is_write_mode(f)) {
        rc = close_writer(f);
    } else {
        if (f->in_step) rc = gbp_reader_end_step(f);
        /* parallel readers leave together (a failed get is that rank's own affair) */
        if (f->comm) {
            int rc2 = gbp_comm_barrier(f->comm);
            if (rc == GPUBP_OK) rc = rc2;
        }
    }
    return rc;
}
