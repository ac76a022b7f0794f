/* lib/common/types.h: see types.c. */
#ifndef GBP_COMMON_TYPES_H
#define GBP_COMMON_TYPES_H

#include <stddef.h>

#include "gpubp.h"

/* The most dimensions of a variable (shape, start, count). */
#define GBP_MAX_DIMS 32

size_t gbp_type_size(int type);          /* 0 for strings and unknown types */
int gbp_type_known(int type);            /* 1 for every type this library reads */
const char *gbp_type_name(int type);     /* ADIOS2 / bpls name */
/* GPUBP_TYPE_LONG_DOUBLE elements (x87 80-bit extended in 16 bytes), on any platform: a < b as
 * IEEE compares them (NaN: false; -0 == +0), and the conversions of gpubp.h. */
int gbp_ld_less(const void *a, const void *b);
void gbp_ld_from_double(void *dst, double x);
double gbp_ld_to_double(const void *src);
/* A big-endian writer's `long double` taken as IEEE binary128 (the 16-byte IEEE-754 format; its
 * bytes reversed to little-endian order at src) into one element at dst (may be src): 0 when
 * exact; -1, dst untouched, when its significand needs more than the 64 bits x87 keeps (NaNs keep
 * the top of their payload). gbp_ld_to_binary128 is the exact inverse direction. */
int gbp_ld_from_binary128(void *dst, const void *src);
void gbp_ld_to_binary128(void *dst, const void *src);
/* The min and max of n elements of `type` at p into *min / *max: folded into them when `have` is
 * set, else initialising them. Complex types compare by modulus, as ADIOS2 does. */
void gbp_minmax(int type, const void *p, size_t n, void *min, void *max, int have);
/* -1, 0, 1 comparing two elements of `type` in the min/max order. */
int gbp_value_cmp(int type, const void *a, const void *b);

#endif /* GBP_COMMON_TYPES_H */
