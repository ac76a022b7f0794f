/* Shared by the fuzz targets: splitting one input into the files of a dataset, and a private
 * scratch directory per process. The same sources build as libFuzzer targets (fuzz_<target>,
 * GPUBP_FUZZ=ON with clang) and as plain replay programs (fuzz_replay_<target>) that ctest runs
 * over the checked-in corpus and regression inputs in every build. */
#ifndef GBP_FUZZ_UTIL_H
#define GBP_FUZZ_UTIL_H

#include "support/rm_tree.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"

/* Parts of an input are separated by this marker: "md.idx" SEP "md.0" SEP "data.0". Seeds are
 * made by concatenating real files with it (tests/fuzz/make_seeds.sh). */
#define FZ_SEP "#GBPSPLIT#"
#define FZ_SEP_LEN 10
#define FZ_MAX_PARTS 4

typedef struct fz_part {
    const uint8_t *p;
    size_t n;
    int present;
} fz_part;

/* Splits data into up to FZ_MAX_PARTS parts; returns the number of parts found. */
static inline int fz_split(const uint8_t *data, size_t size, fz_part *parts)
{
    int k = 0;
    size_t start = 0;
    for (int i = 0; i < FZ_MAX_PARTS; i++) parts[i] = (fz_part){NULL, 0, 0};
    for (size_t i = 0; k < FZ_MAX_PARTS - 1 && i + FZ_SEP_LEN <= size; i++) {
        if (data[i] == '#' && memcmp(data + i, FZ_SEP, FZ_SEP_LEN) == 0) {
            parts[k++] = (fz_part){data + start, i - start, 1};
            start = i + FZ_SEP_LEN;
            i = start - 1;
        }
    }
    parts[k++] = (fz_part){data + start, size - start, 1};
    return k;
}

static char fz_dir[512];
static pid_t fz_dir_owner;

/* The scratch directory goes when the process that made it exits (the replay programs run each
 * input in a child of its own: 10 000 directories a build were left before); a crash keeps it,
 * and GPUBP_TEST_KEEP=1 keeps it, as the tests' scratch (tests/support/test_support.c). */
static inline void fz_rm_tmpdir(void)
{
    const char *keep = getenv("GPUBP_TEST_KEEP");
    if (fz_dir[0] && getpid() == fz_dir_owner && !(keep && *keep == '1'))
        ts_rm_tree(fz_dir);
}

/* A scratch directory private to this process (under $GPUBP_FUZZ_TMP, $TMPDIR or /tmp); created
 * once, removed at exit. */
static inline const char *fz_tmpdir(void)
{
    if (fz_dir[0] && fz_dir_owner == getpid()) return fz_dir;
    const char *t = getenv("GPUBP_FUZZ_TMP");
    if (!t) t = getenv("TMPDIR");
    if (!t) t = "/tmp";
    snprintf(fz_dir, sizeof fz_dir, "%s/gpubp_fuzz_%ld", t, (long)getpid());
    mkdir(fz_dir, 0777);
    if (!fz_dir_owner) atexit(fz_rm_tmpdir); /* once: a forked child inherits it */
    fz_dir_owner = getpid();
    return fz_dir;
}

/* Writes a file (or removes it when !present). */
static inline void fz_put_file(const char *dir, const char *name, const fz_part *part)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
    if (!part || !part->present) return;
    FILE *f = fopen(path, "wb");
    if (!f) return;
    if (part->n) fwrite(part->p, 1, part->n, f);
    fclose(f);
}

/* Strict mode (GPUBP_FUZZ_STRICT=1, set by the replay tests): oracles for known, reported,
 * not-yet-fixed bugs abort, so that their regression inputs fail until the fix. While fuzzing
 * they only print once, so that the fuzzer can get past them and find other bugs. */
static inline int fz_known_bug(const char *what)
{
    static int strict = -1, told = 0;
    if (strict < 0) {
        const char *s = getenv("GPUBP_FUZZ_STRICT");
        strict = s && *s == '1';
    }
    if (strict) {
        fprintf(stderr, "known bug (see build-rel/BUGS.txt): %s\n", what);
        abort();
    }
    if (!told) fprintf(stderr, "note: known bug hit (not fatal while fuzzing): %s\n", what);
    told = 1;
    return 0;
}

/* A file held in memory, read at offsets (the md.0 access of the index's on-demand loads). */
typedef struct fz_mem {
    const uint8_t *p;
    size_t n;
} fz_mem;

static inline int fz_mem_read(void *ctx, uint64_t off, size_t n, uint8_t *buf)
{
    const fz_mem *m = ctx;
    if (off > m->n || n > m->n - off)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "md.0: %zu bytes at offset %llu are past the end", n,
                         (unsigned long long)off);
    memcpy(buf, m->p + off, n);
    return GPUBP_OK;
}

/* Bytes consumed from the front of an input, then zeros. */
typedef struct fz_reader {
    const uint8_t *p;
    size_t n, at;
} fz_reader;

static inline unsigned fz_u8(fz_reader *r) { return r->at < r->n ? r->p[r->at++] : 0; }
static inline unsigned fz_u16(fz_reader *r) { unsigned a = fz_u8(r); return a | fz_u8(r) << 8; }

#endif
