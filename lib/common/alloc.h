/* lib/common/alloc.h: see alloc.c. */
#ifndef GBP_COMMON_ALLOC_H
#define GBP_COMMON_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* The only calls to malloc/calloc/realloc/free in the library. gbp_alloc_fail_after(n) makes the
 * n-th following allocation fail (tests); n < 0 disables. gbp_alloc_fail_after_thread(n) does the
 * same for the calling thread's allocations only (a test's "rank" when threads are ranks) and
 * returns what was left of the previous countdown (-1: it fired, or none was armed). */
void *gbp_malloc(size_t n);
void *gbp_calloc(size_t n, size_t size);
void *gbp_realloc(void *p, size_t n);
void gbp_free(void *p);
char *gbp_strdup(const char *s);
/* n bytes at a 64-byte boundary (one cache line), uninitialised: *mem gets the block to give to
 * gbp_free (the returned pointer is inside it). NULL, with *mem NULL, when out of memory. */
void *gbp_malloc_line(size_t n, void **mem);
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

#endif /* GBP_COMMON_ALLOC_H */
