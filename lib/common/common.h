/* lib/common: error records, allocation wrappers, growable buffers, parameters, type tables.
 * Every other layer builds on this one; it depends on nothing but libc and the public header. */
#ifndef GBP_COMMON_H
#define GBP_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpubp.h"

#define GBP_MAX_DIMS 32

/* ---- errors -------------------------------------------------------------------------------
 * gbp_error() records a message (printf format) and a native code for this thread and returns
 * the status, so that `return gbp_error(GPUBP_ERR_X, 0, "...")` reports and returns in one go. */
int gbp_error(int status, int native, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void gbp_error_clear(void);
const char *gbp_error_message(void);
int gbp_error_native(void);

#define GBP_RETURN_ERROR_IF(cond, status, ...) \
    do { if (cond) return gbp_error((status), 0, __VA_ARGS__); } while (0)
#define GBP_FORWARD_IF_ERROR(expr) \
    do { int gbp_rc_ = (expr); if (gbp_rc_ != 0) return gbp_rc_; } while (0)
#define GBP_CHECK_ARG(p) \
    GBP_RETURN_ERROR_IF((p) == NULL, GPUBP_ERR_INVALID_ARG, "%s: argument '%s' is NULL", __func__, #p)

/* The out-of-memory failure: records "out of memory" and returns GPUBP_ERR_NOMEM.
 * GBP_CHECK_ALLOC(p) returns it from the calling function when p is NULL. */
int gbp_nomem(void);
#define GBP_CHECK_ALLOC(p) \
    do { if ((p) == NULL) return gbp_nomem(); } while (0)

/* A failure kept across a clean-up call that may fail too (and overwrite this thread's error
 * record). gbp_error_save keeps rc and, for a failure (rc < 0), this thread's native code and
 * message, cut to `keep` bytes with its terminator (at most sizeof msg: pass sizeof e->msg to keep
 * all of it). gbp_error_restore returns the kept failure with its message and native code, else
 * (rc kept >= 0) rc2, the clean-up's status. */
typedef struct gbp_saved_error {
    int rc, native;
    char msg[1024];
} gbp_saved_error;
void gbp_error_save(gbp_saved_error *e, int rc, size_t keep);
int gbp_error_restore(const gbp_saved_error *e, int rc2);

/* ---- allocation ---------------------------------------------------------------------------
 * The only calls to malloc/calloc/realloc/free in the library. gbp_alloc_fail_after(n) makes the
 * n-th following allocation fail (tests); n < 0 disables. gbp_alloc_fail_after_thread(n) does the
 * same for the calling thread's allocations only (a test's "rank" when threads are ranks) and
 * returns what was left of the previous countdown (-1: it fired, or none was armed). */
void *gbp_malloc(size_t n);
void *gbp_calloc(size_t n, size_t size);
void *gbp_realloc(void *p, size_t n);
void gbp_free(void *p);
char *gbp_strdup(const char *s);
char *gbp_strndup(const char *s, size_t n);
void gbp_alloc_fail_after(long n);
long gbp_alloc_fail_after_thread(long n);
/* Grows the array *p (capacity *cap elements of elsize) to hold at least `need`, doubling.
 * Returns 0, or GPUBP_ERR_NOMEM with the record set (the array is then unchanged). */
int gbp_grow(void **p, size_t *cap, size_t need, size_t elsize);

/* Overflow-checked size arithmetic: return 0 on overflow, 1 on success. */
static inline int gbp_mul_ok(size_t a, size_t b, size_t *out)
{
    if (b != 0 && a > SIZE_MAX / b) return 0;
    *out = a * b;
    return 1;
}
static inline int gbp_add_ok(size_t a, size_t b, size_t *out)
{
    if (a > SIZE_MAX - b) return 0;
    *out = a + b;
    return 1;
}

/* ---- growable byte buffer -------------------------------------------------------------------
 * Appends never fail silently: on an allocation failure the buffer is marked failed, further
 * appends are ignored, and gbp_buf_ok() is false; check once at the end. */
typedef struct gbp_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    int failed;
} gbp_buf;

void gbp_buf_init(gbp_buf *b);
void gbp_buf_free(gbp_buf *b);
void gbp_buf_reset(gbp_buf *b);
int gbp_buf_reserve(gbp_buf *b, size_t extra);
void gbp_buf_put(gbp_buf *b, const void *p, size_t n);
void gbp_buf_u8(gbp_buf *b, uint8_t v);
void gbp_buf_u16(gbp_buf *b, uint16_t v);
void gbp_buf_u32(gbp_buf *b, uint32_t v);
void gbp_buf_u64(gbp_buf *b, uint64_t v);
void gbp_buf_zero(gbp_buf *b, size_t n);
void gbp_buf_bpstr(gbp_buf *b, const char *s, size_t n); /* u16 length + bytes */
static inline int gbp_buf_ok(const gbp_buf *b) { return !b->failed; }
/* Overwrite already written bytes (back-patching lengths). */
void gbp_buf_set_u32(gbp_buf *b, size_t at, uint32_t v);
void gbp_buf_set_u64(gbp_buf *b, size_t at, uint64_t v);
void gbp_buf_set_u16(gbp_buf *b, size_t at, uint16_t v);

/* little-endian loads/stores at any alignment */
static inline uint16_t gbp_ld16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t gbp_ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t gbp_ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* ---- clock ---------------------------------------------------------------------------------
 * Seconds on the monotonic clock (timeouts, retries, statistics). */
double gbp_now_s(void);

/* ---- types ---------------------------------------------------------------------------------- */
size_t gbp_type_size(int type);          /* 0 for strings and unknown types */
int gbp_type_known(int type);            /* 1 for every type this library reads */
const char *gbp_type_name(int type);     /* ADIOS2 / bpls name */
/* GPUBP_TYPE_LONG_DOUBLE elements (x87 80-bit extended in 16 bytes), on any platform: a < b as
 * IEEE compares them (NaN: false; -0 == +0), and the conversions of gpubp.h. */
int gbp_ld_less(const void *a, const void *b);
void gbp_ld_from_double(void *dst, double x);
double gbp_ld_to_double(const void *src);
/* ---- growable byte buffer ---------------------------------------------------------------
 * set, else initialising them. Complex types compare by modulus, as ADIOS2 does. */
void gbp_minmax(int type, const void *p, size_t n, void *min, void *max, int have);
/* -1, 0, 1 comparing two elements of `type` in the min/max order. */
int gbp_value_cmp(int type, const void *a, const void *b);

/* ---- parameters -----------------------------------------------------------------------------
 * The parsed params string of gpubp_open (keys in docs/parameters.md). */
typedef struct gbp_params {
    int gpu_row_major;      /* gpu_layout=row_major */
    int pool_slots;         /* 0 = auto: gbp_params_pool_slots */
    size_t chunk_bytes;     /* chunk_mib (16) in bytes */
    size_t piece_bytes;     /* piece_kib (4096) in bytes: device copies within a chunk */
    int io_threads;         /* 0 = library default */
    int subfiles;           /* 0 = auto (library default: src/api_write.c gbp_writer_open) */
    uint64_t split_bytes;   /* split_mib (16) in bytes, 0 = off: global-array blocks this large are
                             * cut into sub-blocks over the subfiles (lib/engine/writer.c) */
    int block_view_stored;  /* block_view=stored: readers list every stored (sub-)block */
    int direct_io;
    int fsync;
    int async_commit;       /* serial writers: end_step returns once the data left the buffers */
    double timeout;         /* seconds, < 0 forever */
    int compress_threads;   /* 0 = all cores */
    int aggregators;        /* 0 = one per node */
    int funnel;             /* aggregation=funnel: aggregators write their group's PGs */
    double connect_timeout;
    int retries;
    double retry_delay;
    int simulated_device;   /* test hook: "device=simulated" uses the simulated device */
    char token_file[1024];  /* remote reads: a file whose first line is the server's token */
    int compress;           /* compress=CODEC: every array variable gets the blosc operator */
    int compress_codec;     /* its codec: a Blosc2 codec code (lib/compress GBP_BLOSC_*) */
    int compress_level;     /* 1 */
    int compress_shuffle;   /* 0 none, 1 byte (default), 2 bit */
    int compress_device;    /* compress_device: 0 auto (default), 1 on, -1 off (GBP_ZDEV_*) */
} gbp_params;

#define GBP_PARAMS_HAVE_TOKEN_FILE 1

/* split_mib's default: a global-array block of 16 MiB or more is split (docs/parameters.md) */
#define GBP_SPLIT_MIB_DEFAULT 16
int gbp_params_parse(gbp_params *p, const char *s);
/* The I/O threads of the staging pipeline: io_threads, else pool_slots when given, else the
 * online cores within [4, 16]. The pinned slots: pool_slots, else one per I/O thread, 4 at least. */
int gbp_params_io_threads(const gbp_params *p);
int gbp_params_pool_slots(const gbp_params *p);

#endif /* GBP_COMMON_H */
