/* The name.bp/ directory, local or remote: subfile names and opening (subfiles=auto), append
 * recovery, md.0 / md.idx / data.K access, the writer-active flag. */
#include "engine/dataset.h"

#include "compress/blosczlib.h"
#include "format/bp4_decode.h"
#include "memspace/box.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *gbp_sub_name(const gpubp_file *f, int k, char *buf, size_t n)
{
    snprintf(buf, n, "%s/data.%d", f->path, f->wr.sub_base + k);
    return buf;
}

/* Opens subfile k (creating it; emptied when trunc), its size giving where the next PG goes. */
static int gbp_dataset_open_subfile(gpubp_file *f, int k, int trunc)
{
    char p[4200];
    gbp_sub_name(f, k, p, sizeof p);
    GBP_FORWARD_IF_ERROR(
        gbp_open_file(&f->wr.data_fd[k], p, O_RDWR | O_CREAT | (trunc ? O_TRUNC : 0), 0666));
    uint64_t size;
    GBP_FORWARD_IF_ERROR(gbp_file_size(f->wr.data_fd[k], &size, p));
    f->wr.data_has_header[k] = size >= BP4_HEADER_SIZE;
    f->wr.data_size[k] = size >= BP4_HEADER_SIZE ? size : BP4_HEADER_SIZE;
    return GPUBP_OK;
}

/* subfiles=auto, a new dataset: data.1… are created when a block first goes there, so that a
 * dataset of small blocks is data.0 alone, as ADIOS2 writes it; those of an earlier dataset of
 * the same name are removed (they would be read as this one's). Appending: those that exist are
 * opened now (their sizes are where the next PGs go); the others are created when first used. */
static int gbp_dataset_open_subfile_auto(gpubp_file *f, int k, int trunc)
{
    char p[4200];
    gbp_sub_name(f, k, p, sizeof p);
    f->wr.data_size[k] = BP4_HEADER_SIZE;
    if (trunc) {
        if (unlink(p) < 0 && errno != ENOENT)
            return gbp_error(GPUBP_ERR_IO, errno, "cannot remove %s: %s", p, strerror(errno));
        return GPUBP_OK;
    }
    if (access(p, F_OK) < 0) return GPUBP_OK;
    return gbp_dataset_open_subfile(f, k, 0);
}

/* Subfile k opened (created) for a block, when subfiles=auto left it closed. */
int gbp_dataset_use_subfile(gpubp_file *f, int k)
{
    return f->wr.data_fd[k] >= 0 ? GPUBP_OK : gbp_dataset_open_subfile(f, k, 1);
}

int gbp_open_subfiles(gpubp_file *f, int trunc, int open)
{
    int n = f->wr.nsub;
    f->wr.data_fd = gbp_malloc((size_t)n * sizeof(int));
    f->wr.data_size = gbp_calloc((size_t)n, sizeof(uint64_t));
    f->wr.pg_start = gbp_calloc((size_t)n, sizeof(uint64_t));
    f->wr.cursor = gbp_calloc((size_t)n, sizeof(uint64_t));
    f->wr.pg_nvars = gbp_calloc((size_t)n, sizeof(uint32_t));
    f->wr.data_has_header = gbp_calloc((size_t)n, sizeof(int));
    for (int k = 0; f->wr.data_fd && k < n; k++) f->wr.data_fd[k] = -1;
    if (!f->wr.data_fd || !f->wr.data_size || !f->wr.pg_start || !f->wr.cursor || !f->wr.pg_nvars ||
        !f->wr.data_has_header)
        return gbp_nomem();
    for (int k = 0; open && k < n; k++)
        GBP_FORWARD_IF_ERROR(k > 0 && f->wr.sub_auto ? gbp_dataset_open_subfile_auto(f, k, trunc)
                                                  : gbp_dataset_open_subfile(f, k, trunc));
    return GPUBP_OK;
}

/* Append: continue after the last committed step. Metadata past the last record's end (a
 * writer killed mid-commit) is cut off; data past it is simply never referenced. */
static int gbp_dataset_load_for_append(gpubp_file *f, const char *idxp, const char *md0p, int *have)
{
    uint8_t *idx = NULL;
    size_t len = 0;
    *have = 0;
    int rc = gbp_read_file(idxp, &idx, &len, 0);
    if (rc == GPUBP_ERR_NOT_FOUND) return GPUBP_OK;
    GBP_FORWARD_IF_ERROR(rc);
    if (len < BP4_HEADER_SIZE + BP4_IDX_RECORD_SIZE) {
        gbp_free(idx);
        return GPUBP_OK; /* no committed step: start afresh */
    }
    rc = bp4_check_idx_header(idx, len, idxp);
    size_t n = (len - BP4_HEADER_SIZE) / BP4_IDX_RECORD_SIZE;
    uint64_t md0_size = 0;
    if (rc == GPUBP_OK) {
        int fd;
        rc = gbp_open_file(&fd, md0p, O_RDONLY, 0);
        if (rc == GPUBP_OK) {
            rc = gbp_file_size(fd, &md0_size, md0p);
            close(fd);
        }
    }
    bp4_idx_record r = {0};
    for (size_t i = 0; rc == GPUBP_OK && i < n; i++)
        rc = bp4_parse_idx_record(idx, len, i, md0_size, &r, idxp);
    gbp_free(idx);
    GBP_FORWARD_IF_ERROR(rc);
    f->wr.idx_records = n;
    f->md0_size = r.end;
    *have = 1;
    return GPUBP_OK;
}

/* The dataset directory, md.0 and md.idx (WRITE: cleared; APPEND: continued after the last
 * committed step, *have set). A parallel writer runs this on rank 0 only. */
int gbp_writer_open_metadata(gpubp_file *f, int *have)
{
    int is_dir;
    *have = 0;
    GBP_FORWARD_IF_ERROR(gbp_is_dir(f->path, &is_dir));
    char *idxp = gbp_path_join(f->path, "md.idx"), *md0p = gbp_path_join(f->path, "md.0");
    char *mmdp = gbp_path_join(f->path, "mmd.0");
    int rc = (idxp && md0p && mmdp) ? GPUBP_OK : gbp_nomem();
    if (rc == GPUBP_OK && !is_dir) rc = gbp_mkdir(f->path);
    if (rc == GPUBP_OK && is_dir && f->mode == GPUBP_MODE_WRITE) rc = gbp_clear_dataset(f->path);
    if (rc == GPUBP_OK && is_dir && f->mode == GPUBP_MODE_APPEND) {
        if (gbp_path_exists(mmdp))
            rc = gbp_error(GPUBP_ERR_BP5, 0, "%s is an ADIOS2 BP5 dataset: cannot append BP4 steps",
                           f->path);
        else
            rc = gbp_dataset_load_for_append(f, idxp, md0p, have);
    }
    int trunc = !*have;
    if (rc == GPUBP_OK)
        rc = gbp_open_file(&f->wr.idx_fd, idxp, O_RDWR | O_CREAT | (trunc ? O_TRUNC : 0), 0666);
    if (rc == GPUBP_OK) rc = gbp_open_file(&f->md0_fd, md0p, O_RDWR | O_CREAT | (trunc ? O_TRUNC : 0), 0666);
    if (rc == GPUBP_OK && *have) {
        rc = gbp_truncate(f->md0_fd, f->md0_size, md0p);
        if (rc == GPUBP_OK)
            rc = gbp_truncate(f->wr.idx_fd,
                              BP4_HEADER_SIZE + f->wr.idx_records * BP4_IDX_RECORD_SIZE, idxp);
        uint8_t one = 1;
        if (rc == GPUBP_OK) rc = gbp_pwrite_all(f->wr.idx_fd, &one, 1, BP4_IDX_ACTIVE_AT, idxp);
    }
    if (!*have) {
        f->md0_size = BP4_HEADER_SIZE;
        f->wr.idx_records = 0;
    }
    f->wr.step = (uint32_t)f->wr.idx_records + 1;
    gbp_free(idxp);
    gbp_free(md0p);
    gbp_free(mmdp);
    return rc;
}

#define GBP_MAX_SUBFILES 1048576

int gbp_dataset_open_md0(gpubp_file *f)
{
    if (f->md0_fd >= 0) return GPUBP_OK;
    char *p = gbp_path_join(f->path, "md.0");
    GBP_CHECK_ALLOC(p);
    int rc = gbp_open_file(&f->md0_fd, p, O_RDONLY, 0);
    if (rc == GPUBP_ERR_NOT_FOUND)
        rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: md.idx lists steps but md.0 is missing", f->path);
    gbp_free(p);
    return rc;
}

int gbp_reader_md0(void *ctx, uint64_t off, size_t n, uint8_t *buf)
{
    gpubp_file *f = ctx;
    if (f->comm || f->rd.bp3) { /* parallel readers: md.0 as rank 0 broadcast it; BP3: made */
        if (off > f->rd.md0_all_len || n > f->rd.md0_all_len - off)
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/md.0: %zu bytes at offset %llu run past "
                             "its end (%zu)", f->path, n, (unsigned long long)off,
                             f->rd.md0_all_len);
        memcpy(buf, f->rd.md0_all + off, n);
        return GPUBP_OK;
    }
    if (!f->rd.remote) GBP_FORWARD_IF_ERROR(gbp_dataset_open_md0(f));
    if (off > f->md0_size || n > f->md0_size - off)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s/md.0: %zu bytes at offset %llu run past its end "
                         "(%llu)", f->path, n, (unsigned long long)off,
                         (unsigned long long)f->md0_size);
    if (f->rd.remote) return gbp_remote_pread(f->rd.remote, "md.0", buf, n, off);
    char what[4200];
    snprintf(what, sizeof what, "%s/md.0", f->path);
    return gbp_pread_all(f->md0_fd, buf, n, off, what);
}

const char *gbp_dataset_data_path(const gpubp_file *f, uint32_t k, char *buf, size_t n)
{
    if (!f->rd.bp3) {
        snprintf(buf, n, "%s/data.%u", f->path, k);
        return buf;
    }
    if (!f->rd.bp3_subfiles) {
        snprintf(buf, n, "%s", f->path);
        return buf;
    }
    size_t pl = strlen(f->path);
    const char *ext = pl >= 3 && !strcmp(f->path + pl - 3, ".bp") ? "" : ".bp";
    const char *slash = strrchr(f->path, '/'), *base = slash ? slash + 1 : f->path;
    snprintf(buf, n, "%s%s.dir/%s%s.%u", f->path, ext, base, ext, k);
    return buf;
}

int gbp_dataset_data_fd(gpubp_file *f, uint32_t k, int *fd)
{
    if (k >= GBP_MAX_SUBFILES)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: block in data.%u: subfile index too large",
                         f->path, k);
    if (k >= f->rd.nrfd) {
        size_t n = (size_t)k + 1;
        int *a = gbp_realloc(f->rd.rfd, n * sizeof *a);
        GBP_CHECK_ALLOC(a);
        for (size_t i = f->rd.nrfd; i < n; i++) a[i] = -1;
        f->rd.rfd = a;
        f->rd.nrfd = n;
    }
    if (f->rd.rfd[k] < 0) {
        char p[4200];
        gbp_dataset_data_path(f, k, p, sizeof p);
        int rc = gbp_open_file(&f->rd.rfd[k], p, O_RDONLY, 0);
        if (rc == GPUBP_ERR_NOT_FOUND && f->rd.bp3)
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: its index refers to %s, which is missing",
                             f->path, p);
        if (rc == GPUBP_ERR_NOT_FOUND)
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: metadata refers to data.%u, which is missing",
                             f->path, k);
        GBP_FORWARD_IF_ERROR(rc);
    }
    *fd = f->rd.rfd[k];
    return GPUBP_OK;
}

/* Bytes of data.K, from the local file or through the remote connection. */
int gbp_dataset_pread(gpubp_file *f, uint32_t k, int fd, void *buf, size_t n, uint64_t off)
{
    if (f->rd.remote) {
        char name[32];
        snprintf(name, sizeof name, "data.%u", k);
        return gbp_remote_pread(f->rd.remote, name, buf, n, off);
    }
    char what[4200];
    gbp_dataset_data_path(f, k, what, sizeof what);
    return gbp_pread_all(fd, buf, n, off, what);
}

int gbp_dataset_data_size(gpubp_file *f, uint32_t k, int fd, uint64_t *size)
{
    if (f->rd.remote) {
        char name[32];
        snprintf(name, sizeof name, "data.%u", k);
        return gbp_remote_size(f->rd.remote, name, size);
    }
    return gbp_file_size(fd, size, f->path);
}

int gbp_block_name_error(int rc, const gpubp_file *f, const char *var, const gbp_block *b)
{
    if (strstr(gbp_error_message(), f->path)) return rc; /* named already */
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof e.msg);
    char dp[4200];
    return gbp_error(rc, e.native, "%s: '%s': block at offset %llu: %s",
                     gbp_dataset_data_path(f, b->subfile, dp, sizeof dp), var,
                     (unsigned long long)b->payload_offset, e.msg);
}

int gbp_block_check_span(gpubp_file *f, const char *var, const gbp_block *b, int fd,
                         uint64_t len)
{
    uint64_t fsize = 0;
    GBP_FORWARD_IF_ERROR(gbp_dataset_data_size(f, b->subfile, fd, &fsize));
    if (b->payload_offset <= fsize && len <= fsize - b->payload_offset) return GPUBP_OK;
    gbp_error(GPUBP_ERR_FORMAT, 0, "%llu bytes run past the end of the data file (%llu bytes)",
              (unsigned long long)len, (unsigned long long)fsize);
    return gbp_block_name_error(GPUBP_ERR_FORMAT, f, var, b);
}

int gbp_dataset_clear_active(gpubp_file *f)
{
    if (f->wr.idx_records == 0 || f->wr.idx_fd < 0) return GPUBP_OK;
    uint8_t zero = 0;
    char ip[4200];
    snprintf(ip, sizeof ip, "%s/md.idx", f->path);
    int rc = gbp_pwrite_all(f->wr.idx_fd, &zero, 1, BP4_IDX_ACTIVE_AT, ip);
    if (rc == GPUBP_OK && f->params.fsync) rc = gbp_fdatasync(f->wr.idx_fd, ip);
    return rc;
}
