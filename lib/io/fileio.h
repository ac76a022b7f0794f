/* lib/io: files and directories. Every function reports failures through gbp_error with the
 * path and errno, and retries short reads/writes and EINTR. */
#ifndef GBP_FILEIO_H
#define GBP_FILEIO_H

#include <stdint.h>
#include <sys/types.h>

#include "common.h"

/* Writes all n bytes at off (retrying short writes). `what` names the file in messages. */
int gbp_pwrite_all(int fd, const void *p, size_t n, uint64_t off, const char *what);
/* Reads exactly n bytes at off; a file that ends first is GPUBP_ERR_FORMAT ("truncated"). */
int gbp_pread_all(int fd, void *p, size_t n, uint64_t off, const char *what);
/* Reads up to n bytes; *got receives the count (short only at end of file). */
int gbp_pread_some(int fd, void *p, size_t n, uint64_t off, size_t *got, const char *what);

/* Opens path (flags as open(2)); *fd receives the descriptor. */
int gbp_open_file(int *fd, const char *path, int flags, int mode);
int gbp_close_file(int fd, const char *what);
int gbp_file_size(int fd, uint64_t *size, const char *what);
int gbp_fdatasync(int fd, const char *what);
int gbp_truncate(int fd, uint64_t size, const char *what);

/* Reads a whole file (or its first `limit` bytes when limit > 0) into a new buffer. *len gets
 * the length. ENOENT gives GPUBP_ERR_NOT_FOUND without a message being required by callers. */
int gbp_read_file(const char *path, uint8_t **data, size_t *len, size_t limit);

/* mkdir -p of a single level; an existing directory is fine. */
int gbp_mkdir(const char *path);
/* Removes the files of a BP dataset directory (md.idx, md.0, mmd.0, data.*, profiling.json) so
 * that WRITE mode replaces it. Other files are left alone. */
int gbp_clear_dataset(const char *dir);

/* 1 if path is a directory, 0 if it does not exist; GPUBP_ERR_NOT_BP4 if it is something else. */
int gbp_is_dir(const char *path, int *is_dir);
int gbp_path_exists(const char *path);

/* path + "/" + name into a new string. */
char *gbp_path_join(const char *dir, const char *name);

#endif
