/* Files: short-write retry, errno kept in the error record, whole-file reads. */
#include "io/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- fault injection (tests) ----------------------------------------------------------------
 * One armed fault at a time; every pwrite/pread of this file goes through io_pwrite/io_pread,
 * which count the calls and fire the fault at its index. Off, the cost is two atomic loads and
 * an atomic increment per system call. */
static atomic_int fault_kind = GBP_IO_FAULT_NONE;
static atomic_long fault_at = -1;
static atomic_ulong fault_torn = 0;
static atomic_long n_writes = 0, n_reads = 0, n_fired = 0;
static atomic_int env_done = 0;
/* a fault armed for one thread: only the calls of the thread whose generation is current count */
static atomic_long fault_gen = 0;
static atomic_int fault_one_thread = 0;
static _Thread_local long thread_gen = -1;

static void inject(int kind, long n, unsigned long torn, int one_thread)
{
    atomic_store(&fault_kind, GBP_IO_FAULT_NONE);
    long g = atomic_fetch_add(&fault_gen, 1) + 1;
    thread_gen = one_thread ? g : -1;
    atomic_store(&fault_one_thread, one_thread);
    atomic_store(&n_writes, 0);
    atomic_store(&n_reads, 0);
    atomic_store(&n_fired, 0);
    atomic_store(&fault_at, n);
    atomic_store(&fault_torn, torn);
    atomic_store(&env_done, 1); /* an explicit call wins over the environment */
    atomic_store(&fault_kind, n < 0 ? GBP_IO_FAULT_NONE : kind);
}

void gbp_io_fault_inject(int kind, long n, unsigned long torn) { inject(kind, n, torn, 0); }
void gbp_io_fault_inject_thread(int kind, long n, unsigned long torn) { inject(kind, n, torn, 1); }

/* Whether this thread's calls are counted (always, unless a one-thread fault is armed). */
static int counted(void)
{
    return !atomic_load(&fault_one_thread) || thread_gen == atomic_load(&fault_gen);
}

void gbp_io_fault_reset(void) { gbp_io_fault_inject(GBP_IO_FAULT_NONE, -1, 0); }
long gbp_io_write_calls(void) { return atomic_load(&n_writes); }
long gbp_io_read_calls(void) { return atomic_load(&n_reads); }
long gbp_io_faults_fired(void) { return atomic_load(&n_fired); }

static void env_arm(void)
{
    if (atomic_load(&env_done) || atomic_exchange(&env_done, 1)) return;
    const char *s = getenv("GPUBP_IO_KILL_AT");
    if (!s || !*s) return;
    char *end;
    long n = strtol(s, &end, 10);
    unsigned long torn = *end == ':' ? strtoul(end + 1, NULL, 10) : 0;
    if (n >= 0) {
        atomic_store(&fault_at, n);
        atomic_store(&fault_torn, torn);
        atomic_store(&fault_kind, GBP_IO_FAULT_KILL);
    }
}

static ssize_t io_pwrite(int fd, const void *p, size_t n, uint64_t off)
{
    env_arm();
    if (!counted()) return pwrite(fd, p, n, (off_t)off);
    long i = atomic_fetch_add(&n_writes, 1);
    int k = atomic_load(&fault_kind);
    if (k != GBP_IO_FAULT_NONE && k != GBP_IO_FAULT_READ_EIO) {
        long at = atomic_load(&fault_at);
        if (k == GBP_IO_FAULT_SHORT_ALL ? i >= at : i == at) {
            atomic_fetch_add(&n_fired, 1);
            switch (k) {
            case GBP_IO_FAULT_ENOSPC: errno = ENOSPC; return -1;
            case GBP_IO_FAULT_EIO: errno = EIO; return -1;
            case GBP_IO_FAULT_SHORT:
            case GBP_IO_FAULT_SHORT_ALL:
                if (n > 1) n = (n + 1) / 2;
                break;
            case GBP_IO_FAULT_KILL: {
                size_t t = (size_t)(atomic_load(&fault_torn) % ((unsigned long)n + 1));
                if (t > 0 && pwrite(fd, p, t, (off_t)off) < 0) { /* the kill follows anyway */ }
                raise(SIGKILL);
                break;
            }
            default: break;
            }
        }
    }
    return pwrite(fd, p, n, (off_t)off);
}

static ssize_t io_pread(int fd, void *p, size_t n, uint64_t off)
{
    if (!counted()) return pread(fd, p, n, (off_t)off);
    long i = atomic_fetch_add(&n_reads, 1);
    if (atomic_load(&fault_kind) == GBP_IO_FAULT_READ_EIO && i == atomic_load(&fault_at)) {
        atomic_fetch_add(&n_fired, 1);
        errno = EIO;
        return -1;
    }
    return pread(fd, p, n, (off_t)off);
}

int gbp_pwrite_all(int fd, const void *p, size_t n, uint64_t off, const char *what)
{
    const uint8_t *c = p;
    while (n > 0) {
        size_t step = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
        ssize_t w = io_pwrite(fd, c, step, off);
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            return gbp_error(GPUBP_ERR_IO, e, "write to %s at offset %llu failed: %s", what,
                             (unsigned long long)off, strerror(e));
        }
        if (w == 0)
            return gbp_error(GPUBP_ERR_IO, EIO, "write to %s at offset %llu wrote nothing", what,
                             (unsigned long long)off);
        c += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return GPUBP_OK;
}

int gbp_pwrite_direct(int dfd, int fd, const uint8_t *p, size_t n, uint64_t off)
{
    /* p is aligned like off (p % 4096 == off % 4096): direct for the whole pages inside */
    uint64_t a = (off + GBP_DIRECT_ALIGN - 1) & ~(uint64_t)(GBP_DIRECT_ALIGN - 1);
    uint64_t e = (off + n) & ~(uint64_t)(GBP_DIRECT_ALIGN - 1);
    if (dfd < 0 || e <= a) return gbp_pwrite_all(fd, p, n, off, "data file");
    if (a > off) GBP_FORWARD_IF_ERROR(gbp_pwrite_all(fd, p, a - off, off, "data file"));
    GBP_FORWARD_IF_ERROR(gbp_pwrite_all(dfd, p + (a - off), e - a, a, "data file (O_DIRECT)"));
    if (off + n > e) GBP_FORWARD_IF_ERROR(gbp_pwrite_all(fd, p + (e - off), off + n - e, e, "data file"));
    return GPUBP_OK;
}

int gbp_pread_some(int fd, void *p, size_t n, uint64_t off, size_t *got, const char *what)
{
    uint8_t *c = p;
    size_t done = 0;
    while (done < n) {
        size_t step = n - done > ((size_t)1 << 30) ? ((size_t)1 << 30) : n - done;
        ssize_t r = io_pread(fd, c + done, step, off + done);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            return gbp_error(GPUBP_ERR_IO, e, "read of %s at offset %llu failed: %s", what,
                             (unsigned long long)(off + done), strerror(e));
        }
        if (r == 0) break;
        done += (size_t)r;
    }
    *got = done;
    return GPUBP_OK;
}

int gbp_pread_all(int fd, void *p, size_t n, uint64_t off, const char *what)
{
    size_t got = 0;
    GBP_FORWARD_IF_ERROR(gbp_pread_some(fd, p, n, off, &got, what));
    if (got != n)
        return gbp_error(GPUBP_ERR_FORMAT, 0,
                         "%s is truncated: %zu bytes needed at offset %llu, file ends at %llu",
                         what, n, (unsigned long long)off, (unsigned long long)(off + got));
    return GPUBP_OK;
}

int gbp_open_file(int *fd, const char *path, int flags, int mode)
{
    int f;
    do {
        f = open(path, flags | O_CLOEXEC, mode);
    } while (f < 0 && errno == EINTR);
    if (f < 0) {
        int e = errno;
        return gbp_error(e == ENOENT ? GPUBP_ERR_NOT_FOUND : GPUBP_ERR_IO, e, "cannot open %s: %s",
                         path, strerror(e));
    }
    *fd = f;
    return GPUBP_OK;
}

int gbp_close_file(int fd, const char *what)
{
    if (fd < 0) return GPUBP_OK;
    if (close(fd) != 0 && errno != EINTR) {
        int e = errno;
        return gbp_error(GPUBP_ERR_IO, e, "close of %s failed: %s", what, strerror(e));
    }
    return GPUBP_OK;
}

int gbp_file_size(int fd, uint64_t *size, const char *what)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        return gbp_error(GPUBP_ERR_IO, e, "stat of %s failed: %s", what, strerror(e));
    }
    *size = (uint64_t)st.st_size;
    return GPUBP_OK;
}

int gbp_fdatasync(int fd, const char *what)
{
    if (fdatasync(fd) != 0) {
        int e = errno;
        return gbp_error(GPUBP_ERR_IO, e, "fdatasync of %s failed: %s", what, strerror(e));
    }
    return GPUBP_OK;
}

int gbp_truncate(int fd, uint64_t size, const char *what)
{
    if (ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        return gbp_error(GPUBP_ERR_IO, e, "truncate of %s failed: %s", what, strerror(e));
    }
    return GPUBP_OK;
}

int gbp_read_file(const char *path, uint8_t **data, size_t *len, size_t limit)
{
    /* both set on success; initialized because the compiler cannot see that gbp_error (the
     * failure path of both calls) never returns GPUBP_OK (GCC 13 -O2 -Wmaybe-uninitialized) */
    int fd = -1;
    *data = NULL;
    *len = 0;
    GBP_FORWARD_IF_ERROR(gbp_open_file(&fd, path, O_RDONLY, 0));
    uint64_t size = 0;
    int rc = gbp_file_size(fd, &size, path);
    if (rc == GPUBP_OK && limit > 0 && size > limit) size = limit;
    if (rc == GPUBP_OK && size > SIZE_MAX / 2)
        rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s is too large (%llu bytes)", path,
                       (unsigned long long)size);
    uint8_t *buf = NULL;
    if (rc == GPUBP_OK) {
        buf = gbp_malloc(size ? (size_t)size : 1);
        if (!buf) rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory reading %s", path);
    }
    size_t got = 0;
    if (rc == GPUBP_OK) rc = gbp_pread_some(fd, buf, (size_t)size, 0, &got, path);
    close(fd);
    if (rc != GPUBP_OK) {
        gbp_free(buf);
        return rc;
    }
    *data = buf;
    *len = got;
    return GPUBP_OK;
}

int gbp_mkdir(const char *path)
{
    if (mkdir(path, 0777) == 0) return GPUBP_OK;
    int e = errno;
    struct stat st;
    if (e == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return GPUBP_OK;
    if (e == EEXIST)
        return gbp_error(GPUBP_ERR_IO, ENOTDIR, "cannot create directory %s: a file is in the way",
                         path);
    return gbp_error(GPUBP_ERR_IO, e, "cannot create directory %s: %s", path, strerror(e));
}

static int is_dataset_file(const char *n)
{
    if (!strcmp(n, "md.idx") || !strcmp(n, "md.0") || !strcmp(n, "mmd.0") ||
        !strcmp(n, "profiling.json"))
        return 1;
    if (!strncmp(n, "data.", 5) && n[5]) {
        for (const char *c = n + 5; *c; c++)
            if (*c < '0' || *c > '9') return 0;
        return 1;
    }
    return 0;
}

int gbp_clear_dataset(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        int e = errno;
        return gbp_error(GPUBP_ERR_IO, e, "cannot list %s: %s", dir, strerror(e));
    }
    int rc = GPUBP_OK;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!is_dataset_file(de->d_name)) continue;
        char *p = gbp_path_join(dir, de->d_name);
        if (!p) {
            rc = gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
            break;
        }
        if (unlink(p) != 0 && errno != ENOENT) {
            int e = errno;
            rc = gbp_error(GPUBP_ERR_IO, e, "cannot remove %s: %s", p, strerror(e));
        }
        gbp_free(p);
        if (rc) break;
    }
    closedir(d);
    return rc;
}

int gbp_is_dir(const char *path, int *is_dir)
{
    struct stat st;
    *is_dir = 0;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return GPUBP_OK;
        int e = errno;
        return gbp_error(GPUBP_ERR_IO, e, "cannot stat %s: %s", path, strerror(e));
    }
    if (!S_ISDIR(st.st_mode))
        return gbp_error(GPUBP_ERR_NOT_BP4, 0, "%s is not a BP4 dataset (not a directory)", path);
    *is_dir = 1;
    return GPUBP_OK;
}

int gbp_path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

char *gbp_path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = gbp_malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}
