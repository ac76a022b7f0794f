/* Helpers shared by the tests of lib/compress: test data and a checked round trip. */
#ifndef GPUBP_TESTS_ZUTIL_H
#define GPUBP_TESTS_ZUTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blosczlib.h"

enum { PAT_SMOOTH, PAT_RANDOM, PAT_ZEROS, PAT_CONST, PAT_INTS, PAT_HALF, NPAT };

static uint64_t z_rng = 88172645463325252ull;
static inline uint64_t z_rand(void)
{
    z_rng ^= z_rng << 13;
    z_rng ^= z_rng >> 7;
    z_rng ^= z_rng << 17;
    return z_rng;
}

/* n bytes of a pattern, seen as elements of ts bytes where it matters. */
static inline void z_fill(uint8_t *p, size_t n, size_t ts, int pat)
{
    switch (pat) {
    case PAT_SMOOTH: /* a smooth field: doubles for ts 8/16, floats otherwise, truncated to n */
        for (size_t i = 0; i < n; i++) {
            size_t e = ts >= 8 ? i / 8 : i / 4;
            union { double d; float f; uint8_t b[8]; } u;
            if (ts >= 8) u.d = sin(0.001 * (double)e) * 100.0;
            else u.f = (float)(sin(0.001 * (double)e) * 100.0);
            p[i] = u.b[ts >= 8 ? i % 8 : i % 4];
        }
        break;
    case PAT_RANDOM:
        for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(z_rand() >> 24);
        break;
    case PAT_ZEROS: memset(p, 0, n); break;
    case PAT_CONST: memset(p, 0x41, n); break;
    case PAT_INTS: /* int32 (i*7)%97-40 */
        for (size_t i = 0; i < n; i++) {
            int32_t v = (int32_t)(((i / 4) * 7) % 97) - 40;
            p[i] = (uint8_t)((uint32_t)v >> (8 * (i % 4)));
        }
        break;
    default: /* first half random, second half zeros: partly compressible */
        for (size_t i = 0; i < n; i++) p[i] = i < n / 2 ? (uint8_t)(z_rand() >> 24) : 0;
        break;
    }
}

#endif
