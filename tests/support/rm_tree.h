/* tests/support/rm_tree.h: rm -rf of a scratch directory in the process (header only: the test
 * support library and the fuzz targets, which do not link it, share it). No shell: the tests'
 * scratch goes from an atexit handler, where the fork of system("rm -rf") under compute-sanitizer
 * ended the GPU programs with a corrupted heap in the sanitizer's own interceptor (run 72). */
#ifndef GPUBP_TESTS_SUPPORT_RM_TREE_H
#define GPUBP_TESTS_SUPPORT_RM_TREE_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static inline int ts_rm_tree_entry(const char *path, const struct stat *sb, int flag,
                                   struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0 && errno != ENOENT) fprintf(stderr, "warning: cannot remove %s\n", path);
    return 0;
}

/* Removes path and everything below it (nothing when it does not exist); a warning on stderr for
 * what cannot be removed. */
static inline void ts_rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (nftw(path, ts_rm_tree_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "warning: cannot remove %s: %s\n", path, strerror(errno));
}

#endif
