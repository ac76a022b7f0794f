/* Helpers of the MPI tests: see mpi_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "mpi/mpi_util.h"
#include "support/test_support.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

long mt_checks;

void mt_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "[rank %d of %d] %s:%d: ", mt_rank(), mt_size(), file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    abort(); /* MPI_Abort does not return */
}

int mt_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int mt_size(void)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

const char *mt_path(const char *name)
{
    static char slots[8][4096];
    static int next;
    static int made;
    const char *dir = getenv("GPUBP_TEST_TMP");
    if (!dir || !*dir) dir = "/tmp/gpubp_mpi_test";
    if (!made) {
        if (mt_rank() == 0) {
            char cmd[4200];
            snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
            MT_CHECK(system(cmd) == 0, "cannot create %s", dir);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        made = 1;
    }
    char *p = slots[next++ % 8];
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

static int run_status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128; }

int mt_bp4check(const char *dataset) { return ts_bp4check(dataset); }

char *mt_run_gpubpls(const char *gpubpls, const char *flags, const char *dataset)
{
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "'%s' %s '%s'", gpubpls, flags, dataset);
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    size_t n;
    while (out && (n = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *bigger = realloc(out, cap * 2);
            if (!bigger) free(out);
            out = bigger;
            cap *= 2;
        }
    }
    int st = run_status(pclose(p));
    if (!out || st != 0) {
        free(out);
        return NULL;
    }
    out[len] = '\0';
    return out;
}

int mt_count_subfiles(const char *dataset)
{
    DIR *d = opendir(dataset);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *s = e->d_name;
        if (strncmp(s, "data.", 5) == 0 && s[5] >= '0' && s[5] <= '9' &&
            strspn(s + 5, "0123456789") == strlen(s + 5))
            n++;
    }
    closedir(d);
    return n;
}
