/* gpubp-serve's sandbox and file cache (serve_root.h): a client's path becomes a dataset below
 * the root only after realpath() and a prefix check; every file of it is checked again the same
 * way, so a symbolic link that leads out is refused wherever it sits. */
#include "serve/serve_root.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int below_root(const char *rp)
{
    if (S.rootlen == 1) return rp[0] == '/'; /* the root is "/" */
    return !strncmp(rp, S.root, S.rootlen) && (rp[S.rootlen] == '\0' || rp[S.rootlen] == '/');
}

void serve_close_dataset(conn *c)
{
    for (int i = 0; i < c->nfiles; i++) close(c->files[i].fd);
    c->nfiles = 0;
    c->next_evict = 0;
    if (c->dirfd >= 0) close(c->dirfd);
    c->dirfd = -1;
    free(c->dspath);
    free(c->dsname);
    c->dspath = c->dsname = NULL;
}

uint32_t serve_resolve_dataset(conn *c, const char *path, size_t n, char *msg, size_t msz,
                               int *native)
{
    *native = 0;
    if (n == 0 || memchr(path, '\0', n)) {
        snprintf(msg, msz, "empty path or a NUL byte in it");
        return GBPR_E_FORBIDDEN;
    }
    if (path[0] == '/') {
        snprintf(msg, msz, "an absolute path; paths are relative to the server's root");
        return GBPR_E_FORBIDDEN;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && path[j] != '/') j++;
        if (j - i == 2 && path[i] == '.' && path[i + 1] == '.') {
            snprintf(msg, msz, "'..' in the path");
            return GBPR_E_FORBIDDEN;
        }
        i = j + 1;
    }
    char full[PATH_MAX + GBPR_MAX_PATH + 2], rp[PATH_MAX];
    snprintf(full, sizeof full, "%s/%.*s", S.rootlen == 1 ? "" : S.root, (int)n, path);
    if (!realpath(full, rp)) {
        *native = errno;
        snprintf(msg, msz, "%.*s does not exist", (int)(n > 300 ? 300 : n), path);
        return errno == ENOENT || errno == ENOTDIR ? GBPR_E_NOT_FOUND : GBPR_E_FORBIDDEN;
    }
    if (!below_root(rp)) {
        snprintf(msg, msz, "%.*s resolves outside the server's root", (int)(n > 300 ? 300 : n),
                 path);
        return GBPR_E_FORBIDDEN;
    }
    int dfd = open(rp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        *native = errno;
        snprintf(msg, msz, "%.*s is not a BP4 dataset (%s)", (int)(n > 300 ? 300 : n), path,
                 errno == ENOTDIR ? "not a directory" : strerror(errno));
        return errno == ENOTDIR ? GBPR_E_NOT_BP4 : GBPR_E_FORBIDDEN;
    }
    if (faccessat(dfd, "md.idx", F_OK, 0) && faccessat(dfd, "md.0", F_OK, 0) &&
        faccessat(dfd, "data.0", F_OK, 0) && faccessat(dfd, "mmd.0", F_OK, 0)) {
        close(dfd);
        snprintf(msg, msz, "%.*s is not a BP4 dataset nor a BP5 one (no md.idx, md.0, mmd.0 or data.0)",
                 (int)(n > 300 ? 300 : n), path);
        return GBPR_E_NOT_BP4;
    }
    serve_close_dataset(c);
    c->dirfd = dfd;
    c->dspath = strdup(rp);
    c->dsname = strndup(path, n);
    if (!c->dspath || !c->dsname) {
        serve_close_dataset(c);
        snprintf(msg, msz, "out of memory");
        *native = ENOMEM;
        return GBPR_E_IO;
    }
    return 0;
}

uint32_t serve_open_file(conn *c, const char *name, char *msg, size_t msz, int *fd, int *native)
{
    *native = 0;
    if (c->dirfd < 0) {
        snprintf(msg, msz, "no dataset is open");
        return GBPR_E_NO_DATASET;
    }
    char full[PATH_MAX + GBPR_MAX_NAME + 2], rp[PATH_MAX];
    snprintf(full, sizeof full, "%s/%s", c->dspath, name);
    if (!realpath(full, rp)) {
        *native = errno;
        snprintf(msg, msz, "%s/%s: %s", c->dsname, name, strerror(errno));
        return errno == ENOENT ? GBPR_E_NOT_FOUND : GBPR_E_IO;
    }
    if (!below_root(rp)) {
        snprintf(msg, msz, "%s/%s resolves outside the server's root", c->dsname, name);
        return GBPR_E_FORBIDDEN;
    }
    int f = open(rp, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (f < 0 || fstat(f, &st) != 0) {
        *native = errno;
        snprintf(msg, msz, "%s/%s: %s", c->dsname, name, strerror(errno));
        if (f >= 0) close(f);
        return errno == ENOENT ? GBPR_E_NOT_FOUND : GBPR_E_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        close(f);
        snprintf(msg, msz, "%s/%s is not a regular file", c->dsname, name);
        return GBPR_E_FORBIDDEN;
    }
    *fd = f;
    return 0;
}

uint32_t serve_cached_file(conn *c, const char *name, char *msg, size_t msz, int *fd, int *native)
{
    for (int i = 0; i < c->nfiles; i++)
        if (!strcmp(c->files[i].name, name)) {
            *fd = c->files[i].fd;
            return 0;
        }
    int f;
    uint32_t e = serve_open_file(c, name, msg, msz, &f, native);
    if (e) return e;
    int slot;
    if (c->nfiles < MAX_OPEN_FILES) {
        slot = c->nfiles++;
    } else {
        slot = c->next_evict;
        c->next_evict = (c->next_evict + 1) % MAX_OPEN_FILES;
        close(c->files[slot].fd);
    }
    snprintf(c->files[slot].name, sizeof c->files[slot].name, "%s", name);
    c->files[slot].fd = f;
    *fd = f;
    return 0;
}
