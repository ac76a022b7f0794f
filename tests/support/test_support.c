#include "support/test_support.h"
#include "support/rm_tree.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *ts_golden_dir(void)
{
    const char *s = getenv("GPUBP_GOLDEN_DIR");
    return s && *s ? s : GPUBP_TEST_SOURCE_DIR "/golden";
}

const char *ts_bp4verify_tool(void) { return GPUBP_TEST_SOURCE_DIR "/support/bp4verify.py"; }

static char tmpdir[4096];

/* The directory goes when the process that made it exits (a forked child's exit leaves it);
 * GPUBP_TEST_KEEP=1 keeps it for a look after a failure. */
static pid_t tmpdir_owner;
static void remove_tmpdir(void)
{
    const char *keep = getenv("GPUBP_TEST_KEEP");
    if (getpid() == tmpdir_owner && !(keep && *keep == '1')) ts_rm_tree(tmpdir);
}

const char *ts_tmpdir(void)
{
    if (!tmpdir[0]) {
        tmpdir_owner = getpid();
        atexit(remove_tmpdir);
        const char *base = getenv("GPUBP_TEST_TMP");
        if (base && *base) {
            snprintf(tmpdir, sizeof tmpdir, "%s.%ld", base, (long)getpid());
            ts_rm_tree(tmpdir);
            if (mkdir(tmpdir, 0777) != 0) {
                fprintf(stderr, "cannot create %s: %s\n", tmpdir, strerror(errno));
                abort();
            }
        } else {
            snprintf(tmpdir, sizeof tmpdir, "/tmp/gpubp-test-XXXXXX");
            if (!mkdtemp(tmpdir)) abort();
        }
    }
    return tmpdir;
}

/* The rotating buffers of ts_path and ts_join (16, shared; safe to take from several threads). */
#define TS_SLOT_BYTES 8300
static char *ts_slot(void)
{
    static char slots[16][TS_SLOT_BYTES];
    static atomic_uint next;
    return slots[atomic_fetch_add(&next, 1) % 16];
}

const char *ts_path(const char *name)
{
    char *s = ts_slot();
    snprintf(s, TS_SLOT_BYTES, "%s/%s", ts_tmpdir(), name);
    return s;
}

int ts_bp4check(const char *dataset)
{
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' > /dev/null", GPUBP_TEST_PYTHON, ts_bp4verify_tool(),
             dataset);
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

char *ts_read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = '\0';
    fclose(f);
    return b;
}

int ts_copy_dataset(const char *src, const char *dst)
{
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && cp '%s'/* '%s'/", dst, dst, src, dst);
    return system(cmd) == 0 ? 0 : -1;
}

long ts_file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    return (long)st.st_size;
}

unsigned char *ts_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b && len) *len = (size_t)n;
    return b;
}

int ts_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = n == 0 || fwrite(data, 1, n, f) == n;
    if (fclose(f) != 0) ok = 0;
    return ok ? 0 : -1;
}

int ts_file_byte(const char *path, long off)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int c = -1;
    if (fseek(f, off, SEEK_SET) == 0) c = fgetc(f);
    fclose(f);
    return c == EOF ? -1 : c;
}

const char *ts_join(const char *dir, const char *name)
{
    char *s = ts_slot();
    snprintf(s, TS_SLOT_BYTES, "%s/%s", dir, name);
    return s;
}

int ts_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void ts_remove_tree(const char *path)
{
    ts_rm_tree(path);
}

gpubp_file *ts_open(const char *path, gpubp_mode mode, const char *params)
{
    gpubp_file *f = NULL;
    TS_OK(gpubp_open(&f, path, mode, params));
    assert_non_null(f);
    return f;
}

gpubp_variable *ts_define(gpubp_file *f, const char *name, gpubp_type type, size_t ndims,
                          const size_t *shape, const size_t *count)
{
    static const size_t origin[32];
    assert_true(ndims <= 32);
    gpubp_variable *v = NULL;
    if (ndims == 0)
        TS_OK(gpubp_define_variable(&v, f, name, type, 0, NULL, NULL, NULL));
    else
        TS_OK(gpubp_define_variable(&v, f, name, type, ndims, shape, shape ? origin : NULL,
                                    count ? count : shape));
    assert_non_null(v);
    return v;
}

void ts_put_step(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch launch)
{
    TS_OK(gpubp_begin_step(f));
    TS_OK(gpubp_put(f, v, data, launch));
    TS_OK(gpubp_end_step(f));
}

static int ts_cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **ts_list_datasets(const char *dir, size_t *n)
{
    *n = 0;
    DIR *dp = opendir(dir);
    if (!dp) return NULL;
    char **names = NULL;
    struct dirent *e;
    while ((e = readdir(dp))) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".bp")) continue;
        char **nn = realloc(names, (*n + 1) * sizeof *names);
        if (!nn) break;
        names = nn;
        names[(*n)++] = strdup(e->d_name);
    }
    closedir(dp);
    if (*n) qsort(names, *n, sizeof *names, ts_cmp_names);
    return names;
}

unsigned char *ts_get_new(gpubp_file *f, gpubp_variable *v, size_t *n, int *rc)
{
    *n = 0;
    *rc = gpubp_selection_size(v, n);
    if (*rc != GPUBP_OK) return NULL;
    unsigned char *buf = calloc(*n + 1, 1);
    if (!buf) {
        *rc = GPUBP_ERR_NOMEM;
        return NULL;
    }
    *rc = gpubp_get(f, v, buf, GPUBP_SYNC);
    if (*rc != GPUBP_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}
