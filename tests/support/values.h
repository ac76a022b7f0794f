/* Value patterns shared by every suite: deterministic contents for each type, byte patterns of
 * known compressibility, per-step values, and element comparison (complex by modulus, as
 * ADIOS2 orders them for min/max). Compiled once into gpubp_test_support. */
#ifndef GPUBP_TEST_VALUES_H
#define GPUBP_TEST_VALUES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpubp.h"

typedef struct ts_type {
    gpubp_type type;
    size_t size;
    const char *name;  /* short name used in variable names */
    const char *adios; /* ADIOS2 type name (gpubp_type_name) */
} ts_type;

/* The twelve numeric types, signed integers first. */
#define TS_NTYPES 12
extern const ts_type ts_types[TS_NTYPES];

/* n elements of a deterministic sequence of `type` for a given salt; covers negative values and
 * the type's extremes (elements 0 and 1 are the minimum and maximum of the type for integers). */
void ts_fill(gpubp_type type, void *buf, size_t n, int salt);
/* n elements of `type` spread over a wide range by a multiplicative hash of the index and salt
 * (no extremes): for device round trips where every element should differ from its neighbours. */
void ts_fill_spread(gpubp_type t, void *buf, size_t n, int salt);
/* -1/0/1 comparing two elements; complex values by modulus (ADIOS2 min/max rule); char as
 * uint8_t; long double where it is the x87 80-bit type. */
int ts_cmp(gpubp_type type, const void *a, const void *b);
/* Whether n bytes of elements of `type` differ; long double elements by their 10 bytes of value
 * (the 6 padding bytes are whatever the writer's memory held, in ADIOS2's files as in ours). */
int ts_elems_differ(gpubp_type type, const void *a, const void *b, size_t n);
/* min and max element of n elements (first occurrence wins on ties). */
void ts_minmax(gpubp_type type, size_t size, const void *buf, size_t n, void *min, void *max);
/* The product of n dimensions. */
size_t ts_prod(size_t n, const size_t *d);

/* Byte patterns of known compressibility for the codec tests. */
enum { PAT_SMOOTH, PAT_RANDOM, PAT_ZEROS, PAT_CONST, PAT_INTS, PAT_HALF, NPAT };
/* The next number of a xorshift64 generator (one sequence per process, fixed seed). */
uint64_t ts_rand(void);
/* n bytes of pattern `pat`, seen as elements of ts bytes where it matters. */
void ts_fill_bytes(uint8_t *p, size_t n, size_t ts, int pat);

/* Element i of step s of the reliability workload: a float and a double that say both. */
float ts_step_f(size_t s, size_t i);
double ts_step_d(size_t s, size_t i);

#endif
