/* lib/io: files and directories. Every function reports failures through gbp_error with the
 * path and errno, and retries short reads/writes and EINTR. */
#ifndef GBP_FILEIO_H
#define GBP_FILEIO_H

#include <stdint.h>
#include <sys/types.h>

#include "common/common.h"

/* Writes all n bytes at off (retrying short writes). `what` names the file in messages. */
int gbp_pwrite_all(int fd, const void *p, size_t n, uint64_t off, const char *what);
/* O_DIRECT writes: the alignment of offsets, lengths and buffers. gbp_pwrite_direct writes the
 * n bytes at p to fd at off, the whole GBP_DIRECT_ALIGN pages inside [off, off + n) through dfd
 * (a descriptor of the same file opened with O_DIRECT) and the unaligned head and tail through
 * fd; p must be aligned like off (p % GBP_DIRECT_ALIGN == off % GBP_DIRECT_ALIGN). dfd < 0 (no
 * O_DIRECT descriptor), or no whole page inside: all of it through fd. Messages name the file
 * "data file". */
#define GBP_DIRECT_ALIGN ((size_t)4096)
int gbp_pwrite_direct(int dfd, int fd, const uint8_t *p, size_t n, uint64_t off);
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

/* ---- fault injection (tests) ----------------------------------------------------------------
 * Process-wide and thread-safe; they act on the pwrite/pread system calls made by
 * gbp_pwrite_all, gbp_pread_all, gbp_pread_some and gbp_read_file (every data, md.0 and md.idx
 * write of the library goes through gbp_pwrite_all). Calls are counted from the last
 * gbp_io_fault_inject (or gbp_io_fault_reset), 0-based: n = 0 is the next call.
 *
 *   GBP_IO_FAULT_ENOSPC   the n-th write fails with ENOSPC, writing nothing
 *   GBP_IO_FAULT_EIO      the n-th write fails with EIO, writing nothing
 *   GBP_IO_FAULT_SHORT    the n-th write writes only part of its bytes (at least one) and returns
 *                         the short count; gbp_pwrite_all must carry on with the rest
 *   GBP_IO_FAULT_SHORT_ALL every write from the n-th on is short (a pipe-like device)
 *   GBP_IO_FAULT_KILL     the process kills itself (SIGKILL) at the n-th write: before it when
 *                         `torn` is 0, after writing a prefix of torn % size bytes otherwise
 *   GBP_IO_FAULT_READ_EIO the n-th read fails with EIO
 *
 * gbp_io_fault_inject_thread arms the same fault for the calling thread only: only its calls
 * are counted and can fail (a test's "rank" when threads are ranks); the next inject, from any
 * thread, disarms it.
 *
 * The environment variable GPUBP_IO_KILL_AT=n[:torn] arms GBP_IO_FAULT_KILL in any program
 * (read once, at the first write). */
enum {
    GBP_IO_FAULT_NONE = 0,
    GBP_IO_FAULT_ENOSPC = 1,
    GBP_IO_FAULT_EIO = 2,
    GBP_IO_FAULT_SHORT = 3,
    GBP_IO_FAULT_SHORT_ALL = 4,
    GBP_IO_FAULT_KILL = 5,
    GBP_IO_FAULT_READ_EIO = 6
};
void gbp_io_fault_inject(int kind, long n, unsigned long torn);
void gbp_io_fault_inject_thread(int kind, long n, unsigned long torn);
/* Disarms the fault and zeroes the counters. */
void gbp_io_fault_reset(void);
/* Write / read system calls (attempts) since the last inject or reset, and faults fired. */
long gbp_io_write_calls(void);
long gbp_io_read_calls(void);
long gbp_io_faults_fired(void);

#endif
