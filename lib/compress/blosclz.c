/* BloscLZ streams (blosclz.h): the decoder. */
#include "blosclz.h"

#include <string.h>

#define FAR_BASE 8192 /* distance of a far match: 8192 + the 16-bit operand */

/* Copies len bytes from dist bytes back; the two ranges may overlap (dist < len repeats the
 * last dist bytes). */
static void copy_match(uint8_t *op, size_t dist, size_t len, size_t room)
{
    const uint8_t *ref = op - dist;
    if (dist == 1) {
        memset(op, *ref, len);
    } else if (dist >= len) {
        memcpy(op, ref, len);
    } else if (dist >= 8 && room >= len + 8) {
        /* 8 bytes at a time: each copy reads bytes written at least 8 bytes before */
        for (size_t i = 0; i < len; i += 8) memcpy(op + i, ref + i, 8);
    } else {
        for (size_t i = 0; i < len; i++) op[i] = ref[i];
    }
}

long gbp_blosclz_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    size_t ip = 0, op = 0;
    if (n == 0) return 0;
    unsigned c = in[ip++] & 31u; /* the first control byte carries the marker bit */
    for (;;) {
        if (c < 32) { /* literal run */
            size_t run = (size_t)c + 1;
            if (run > cap - op || run > n - ip) return -1;
            memcpy(out + op, in + ip, run);
            op += run;
            ip += run;
            if (ip >= n) break;
            c = in[ip++];
            continue;
        }
        size_t len = (c >> 5) - 1, dist = (size_t)(c & 31u) << 8;
        unsigned d;
        if (len == 6) {
            do {
                if (ip + 1 >= n) return -1;
                d = in[ip++];
                len += d;
            } while (d == 255);
        } else if (ip + 1 >= n) {
            return -1;
        }
        d = in[ip++];
        len += 3;
        dist += d;
        if (d == 255 && dist == (31u << 8) + 255) { /* far match */
            if (ip + 1 >= n) return -1;
            dist = ((size_t)in[ip] << 8 | in[ip + 1]) + FAR_BASE - 1;
            ip += 2;
        }
        dist += 1;
        if (len > cap - op || dist > op) return -1;
        if (ip >= n) break; /* Blosc2 stops here without copying the match */
        c = in[ip++];
        copy_match(out + op, dist, len, cap - op);
        op += len;
    }
    return (long)op;
}
