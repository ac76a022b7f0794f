/* The params string of gpubp_open: "key=value,key=value". Unknown keys are errors. */
#include "common/params.h"
#include "common/alloc.h"
#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_int(const char *key, const char *v, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return gbp_error(GPUBP_ERR_PARAM, 0,
                         "parameter %s: '%s' is not an integer in [%ld, %ld]", key, v, lo, hi);
    *out = (int)x;
    return GPUBP_OK;
}

static int parse_double(const char *key, const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi))
        return gbp_error(GPUBP_ERR_PARAM, 0, "parameter %s: '%s' is not a number in [%g, %g]",
                         key, v, lo, hi);
    *out = x;
    return GPUBP_OK;
}

static int parse_bool(const char *key, const char *v, int *out)
{
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "on")) { *out = 1; return 0; }
    if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "off")) { *out = 0; return 0; }
    return gbp_error(GPUBP_ERR_PARAM, 0, "parameter %s: '%s' is not 0 or 1", key, v);
}

/* One number of a select_steps rule: a non-negative decimal integer, or (end only) n / N. */
static int step_number(const char *t, size_t len, int end, uint64_t *out)
{
    char buf[32];
    if (end && len == 1 && (*t == 'n' || *t == 'N')) {
        *out = UINT64_MAX;
        return GPUBP_OK;
    }
    if (len == 0 || len >= sizeof buf)
        return gbp_error(GPUBP_ERR_PARAM, 0, "parameter select_steps: '%.*s' is not a step number",
                         (int)len, t);
    memcpy(buf, t, len);
    buf[len] = '\0';
    char *e;
    errno = 0;
    unsigned long long x = strtoull(buf, &e, 10);
    if (errno || *e || buf[0] < '0' || buf[0] > '9' || x >= UINT64_MAX)
        return gbp_error(GPUBP_ERR_PARAM, 0, "parameter select_steps: '%s' is not a step number "
                         "(a non-negative integer%s)", buf, end ? " or n" : "");
    *out = x;
    return GPUBP_OK;
}

/* select_steps: ADIOS2's SelectSteps, space-separated rules "first", "first:last" or
 * "first:last:stride" (last may be n: no end); a step is read when a rule selects it. Only blanks:
 * every step, as ADIOS2. */
static int parse_select(gbp_params *p, const char *v)
{
    p->nselect = 0;
    const char *s = v;
    while (*s) {
        while (*s == ' ') s++;
        if (!*s) break;
        const char *e = s;
        while (*e && *e != ' ') e++;
        if (p->nselect == GBP_MAX_STEP_RULES)
            return gbp_error(GPUBP_ERR_PARAM, 0, "parameter select_steps: more than %d rules",
                             GBP_MAX_STEP_RULES);
        gbp_step_rule *r = &p->select[p->nselect];
        const char *c1 = memchr(s, ':', (size_t)(e - s));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
        if (c2 && memchr(c2 + 1, ':', (size_t)(e - c2 - 1)))
            return gbp_error(GPUBP_ERR_PARAM, 0, "parameter select_steps: '%.*s' is not "
                             "first[:last[:stride]]", (int)(e - s), s);
        GBP_FORWARD_IF_ERROR(step_number(s, (size_t)((c1 ? c1 : e) - s), 0, &r->first));
        r->last = r->first;
        r->stride = 1;
        if (c1 && (c2 ? c2 : e) > c1 + 1) /* "3:" is 3, as in ADIOS2 */
            GBP_FORWARD_IF_ERROR(
                step_number(c1 + 1, (size_t)((c2 ? c2 : e) - c1 - 1), 1, &r->last));
        if (c2 && e > c2 + 1) {
            GBP_FORWARD_IF_ERROR(step_number(c2 + 1, (size_t)(e - c2 - 1), 0, &r->stride));
            if (r->stride == 0)
                return gbp_error(GPUBP_ERR_PARAM, 0, "parameter select_steps: '%.*s': a stride "
                                 "of 0", (int)(e - s), s);
        }
        p->nselect++;
        s = e;
    }
    return GPUBP_OK;
}

int gbp_params_step_selected(const gbp_params *p, uint64_t step)
{
    if (p->nselect == 0) return 1;
    for (size_t i = 0; i < p->nselect; i++) {
        const gbp_step_rule *r = &p->select[i];
        if (step >= r->first && step <= r->last && (step - r->first) % r->stride == 0) return 1;
    }
    return 0;
}

static int set_param(gbp_params *p, const char *k, const char *v)
{
    int iv = 0; /* parse_int sets it only on success */
    if (!strcmp(k, "gpu_layout")) {
        if (!strcmp(v, "column_major")) p->gpu_row_major = 0;
        else if (!strcmp(v, "row_major")) p->gpu_row_major = 1;
        else return gbp_error(GPUBP_ERR_PARAM, 0,
                              "parameter gpu_layout: '%s' is not column_major or row_major", v);
        return 0;
    }
    if (!strcmp(k, "pool_slots")) return parse_int(k, v, 2, 1024, &p->pool_slots);
    if (!strcmp(k, "chunk_mib")) {
        GBP_FORWARD_IF_ERROR(parse_int(k, v, 1, 1024, &iv));
        p->chunk_bytes = (size_t)iv << 20;
        return 0;
    }
    if (!strcmp(k, "piece_kib")) {
        GBP_FORWARD_IF_ERROR(parse_int(k, v, 4, 1 << 20, &iv));
        p->piece_bytes = (size_t)iv << 10;
        return 0;
    }
    if (!strcmp(k, "io_threads")) return parse_int(k, v, 1, 256, &p->io_threads);
    if (!strcmp(k, "subfiles")) {
        if (!strcmp(v, "auto")) {
            p->subfiles = 0;
            return 0;
        }
        return parse_int(k, v, 1, 4096, &p->subfiles);
    }
    if (!strcmp(k, "split_mib")) {
        if (!strcmp(v, "auto")) {
            p->split_bytes = GBP_SPLIT_AUTO;
            return 0;
        }
        GBP_FORWARD_IF_ERROR(parse_int(k, v, 0, 1 << 20, &iv));
        p->split_bytes = (uint64_t)iv << 20;
        return 0;
    }
    if (!strcmp(k, "block_view")) {
        if (!strcmp(v, "put")) p->block_view_stored = 0;
        else if (!strcmp(v, "stored")) p->block_view_stored = 1;
        else return gbp_error(GPUBP_ERR_PARAM, 0, "parameter block_view: '%s' is not put or stored",
                              v);
        return 0;
    }
    if (!strcmp(k, "direct_io")) return parse_bool(k, v, &p->direct_io);
    if (!strcmp(k, "read_mmap")) return parse_bool(k, v, &p->read_mmap);
    if (!strcmp(k, "fsync")) return parse_bool(k, v, &p->fsync);
    if (!strcmp(k, "async_commit")) return parse_bool(k, v, &p->async_commit);
    if (!strcmp(k, "timeout")) {
        GBP_FORWARD_IF_ERROR(parse_double(k, v, -1.0, 1e9, &p->timeout));
        return 0;
    }
    if (!strcmp(k, "compress_threads")) return parse_int(k, v, 1, 1024, &p->compress_threads);
    if (!strcmp(k, "aggregators")) return parse_int(k, v, 1, 1 << 20, &p->aggregators);
    if (!strcmp(k, "aggregation")) {
        if (!strcmp(v, "parallel")) p->funnel = 0;
        else if (!strcmp(v, "funnel")) p->funnel = 1;
        else return gbp_error(GPUBP_ERR_PARAM, 0,
                              "parameter aggregation: '%s' is not parallel or funnel", v);
        return 0;
    }
    if (!strcmp(k, "connect_timeout")) return parse_double(k, v, 0, 1e6, &p->connect_timeout);
    if (!strcmp(k, "retries")) return parse_int(k, v, 0, 1000000, &p->retries);
    if (!strcmp(k, "retry_delay")) return parse_double(k, v, 0, 1e6, &p->retry_delay);
    if (!strcmp(k, "compress")) {
        /* the blosc operator's codecs, as Blosc2 codec codes (lib/compress GBP_BLOSC_*) */
        static const struct { const char *name; int code; } codecs[] = {
            {"blosclz", 0}, {"lz4", 1}, {"lz4hc", 2}, {"zlib", 4}, {"zstd", 5}};
        p->compress = 0;
        if (!strcmp(v, "none")) return 0;
        for (size_t i = 0; i < sizeof codecs / sizeof *codecs; i++)
            if (!strcmp(v, codecs[i].name)) {
                p->compress = 1;
                p->compress_codec = codecs[i].code;
                return 0;
            }
        return gbp_error(GPUBP_ERR_PARAM, 0,
                         "parameter compress: '%s' is not blosclz, lz4, lz4hc, zlib, zstd or none",
                         v);
    }
    if (!strcmp(k, "compress_level")) return parse_int(k, v, 0, 9, &p->compress_level);
    if (!strcmp(k, "compress_shuffle")) {
        if (!strcmp(v, "none")) p->compress_shuffle = 0;
        else if (!strcmp(v, "byte")) p->compress_shuffle = 1;
        else if (!strcmp(v, "bit")) p->compress_shuffle = 2;
        else return gbp_error(GPUBP_ERR_PARAM, 0,
                              "parameter compress_shuffle: '%s' is not byte, bit or none", v);
        return 0;
    }
    if (!strcmp(k, "compress_device")) {
        if (!strcmp(v, "auto")) p->compress_device = 0;
        else if (!strcmp(v, "on")) p->compress_device = 1;
        else if (!strcmp(v, "off")) p->compress_device = -1;
        else return gbp_error(GPUBP_ERR_PARAM, 0,
                              "parameter compress_device: '%s' is not auto, on or off", v);
        return 0;
    }
    if (!strcmp(k, "compress_device_block_kib"))
        return parse_int(k, v, 0, 4096, &p->compress_device_block_kib);
    if (!strcmp(k, "select_steps")) return parse_select(p, v);
    if (!strcmp(k, "ignore_flatten")) return parse_bool(k, v, &p->ignore_flatten);
    if (!strcmp(k, "token_file")) {
        if (strlen(v) >= sizeof p->token_file || !*v)
            return gbp_error(GPUBP_ERR_PARAM, 0, "parameter token_file: empty or too long");
        memcpy(p->token_file, v, strlen(v) + 1);
        return 0;
    }
    if (!strcmp(k, "device")) {
        if (!strcmp(v, "simulated")) p->simulated_device = 1;
        else if (!strcmp(v, "auto")) p->simulated_device = 0;
        else return gbp_error(GPUBP_ERR_PARAM, 0,
                              "parameter device: '%s' is not auto or simulated", v);
        return 0;
    }
    return gbp_error(GPUBP_ERR_PARAM, 0, "unknown parameter '%s'", k);
}

static void trim(char **s, char **e)
{
    while (*s < *e && (**s == ' ' || **s == '\t')) (*s)++;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t')) (*e)--;
}

/* The default I/O threads: the online cores, at least 4 (the default measured before on the H200
 * machine, and what a small machine keeps) and at most 16 (pwrite one file per thread: 16 threads
 * 37-40 GB/s there, the copy engines 55 GB/s; and the default pool, one 16 MiB slot per thread,
 * stays at 256 MiB or less). */
#define GBP_IO_THREADS_MIN 4
#define GBP_IO_THREADS_MAX 16

int gbp_params_io_threads(const gbp_params *p)
{
    if (p->io_threads > 0) return p->io_threads;
    if (p->pool_slots > 0) return p->pool_slots; /* a pool asked for: one thread per slot */
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < GBP_IO_THREADS_MIN) n = GBP_IO_THREADS_MIN;
    if (n > GBP_IO_THREADS_MAX) n = GBP_IO_THREADS_MAX;
    return (int)n;
}

int gbp_params_pool_slots(const gbp_params *p)
{
    if (p->pool_slots > 0) return p->pool_slots;
    int n = gbp_params_io_threads(p);
    return n > GBP_IO_THREADS_MIN ? n : GBP_IO_THREADS_MIN;
}

int gbp_params_parse(gbp_params *p, const char *s)
{
    memset(p, 0, sizeof *p);
    p->pool_slots = 0; /* auto: gbp_params_pool_slots */
    p->chunk_bytes = (size_t)16 << 20;
    p->piece_bytes = (size_t)4 << 20;
    p->split_bytes = GBP_SPLIT_AUTO;
    p->timeout = 0;
    p->connect_timeout = 10;
    p->retries = 20;
    p->retry_delay = 0.1;
    p->compress_level = 1;
    p->compress_codec = 4; /* zlib */
    p->compress_shuffle = 1;
    if (!s) return GPUBP_OK;
    char *copy = gbp_strdup(s);
    if (!copy) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    int rc = GPUBP_OK;
    char *item = copy;
    while (rc == GPUBP_OK && item) {
        char *next = strchr(item, ',');
        if (next) *next++ = '\0';
        char *end = item + strlen(item);
        trim(&item, &end);
        *end = '\0';
        if (*item) {
            char *eq = strchr(item, '=');
            if (!eq) {
                rc = gbp_error(GPUBP_ERR_PARAM, 0, "parameter '%s' has no '=value'", item);
                break;
            }
            char *ke = eq, *vs = eq + 1, *ve = end;
            trim(&item, &ke);
            trim(&vs, &ve);
            *ke = '\0';
            *ve = '\0';
            rc = set_param(p, item, vs);
        }
        item = next;
    }
    gbp_free(copy);
    return rc;
}

long gbp_env_long(const char *name, long lo, long hi, long def)
{
    const char *e = getenv(name);
    long v = e ? strtol(e, NULL, 10) : lo - 1;
    return v >= lo && v <= hi ? v : def;
}

size_t gbp_env_mib(const char *name, size_t max_mib, size_t def)
{
    long mib = gbp_env_long(name, 1, (long)max_mib, 0);
    return mib ? (size_t)mib << 20 : def;
}
