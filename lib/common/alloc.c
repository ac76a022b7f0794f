/* The only place that calls the C allocator; tests make the n-th allocation fail. */
#include "common/alloc.h"
#include "common/error.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_long fail_countdown = -1;
static _Thread_local long thread_countdown = -1; /* this thread's allocations only */

void gbp_alloc_fail_after(long n) { atomic_store(&fail_countdown, n); }
long gbp_alloc_fail_after_thread(long n)
{
    long left = thread_countdown;
    thread_countdown = n;
    return left;
}

static int should_fail(void)
{
    if (thread_countdown >= 0 && thread_countdown-- == 0) return 1;
    long v = atomic_load(&fail_countdown);
    while (v >= 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &v, v - 1)) return v == 0;
    }
    return 0;
}

void *gbp_malloc(size_t n)
{
    if (should_fail()) return NULL;
    return malloc(n ? n : 1);
}

void *gbp_calloc(size_t n, size_t size)
{
    if (should_fail()) return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}

void *gbp_realloc(void *p, size_t n)
{
    if (should_fail()) return NULL;
    return realloc(p, n ? n : 1);
}

void gbp_free(void *p) { free(p); }

void *gbp_malloc_line(size_t n, void **mem)
{
    *mem = n <= SIZE_MAX - 63 ? gbp_malloc(n + 63) : NULL;
    return *mem ? (void *)(((uintptr_t)*mem + 63) & ~(uintptr_t)63) : NULL;
}

char *gbp_strndup(const char *s, size_t n)
{
    char *d = gbp_malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *gbp_strdup(const char *s) { return gbp_strndup(s, strlen(s)); }

int gbp_grow(void **p, size_t *cap, size_t need, size_t elsize)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap * 2 : 8;
    while (c < need) c *= 2;
    size_t bytes;
    void *q = gbp_mul_ok(c, elsize, &bytes) ? gbp_realloc(*p, bytes) : NULL;
    if (!q) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    *p = q;
    *cap = c;
    return 0;
}
