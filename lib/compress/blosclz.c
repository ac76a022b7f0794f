/* BloscLZ streams (blosclz.h): the decoder, and an encoder of our own: greedy LZ77 over a hash
 * of 4-byte sequences (matches of 7 bytes or more, 9 far, up to 8192 + 65535 bytes back, each
 * taken one byte short, as Blosc2 takes them), literals in
 * runs of up to 32, the last bytes always literals; a sample of the input is compressed first
 * and the block is left raw when its ratio is under the level's threshold (as Blosc2 does). */
#include "compress/blosclz.h"

#include <string.h>

#define FAR_BASE 8192 /* distance of a far match: 8192 + the 16-bit operand */

/* Copies len bytes from dist bytes back; the two ranges may overlap (dist < len repeats the
 * last dist bytes). */
static void copy_match(uint8_t *op, size_t dist, size_t len, size_t room)
{
    const uint8_t *ref = op - dist;
    if (dist >= 16 && room >= len + 16) {
        /* 16 bytes at a time, up to 15 bytes past the match (inside the room; later bytes
         * overwrite them): each copy reads bytes written at least 16 bytes before */
        for (size_t i = 0; i < len; i += 16) memcpy(op + i, ref + i, 16);
    } else if (dist == 1) {
        memset(op, *ref, len);
    } else if (dist >= len) {
        memcpy(op, ref, len);
    } else if (dist >= 8 && room >= len + 8) {
        /* 8 bytes at a time: each copy reads bytes written at least 8 bytes before */
        for (size_t i = 0; i < len; i += 8) memcpy(op + i, ref + i, 8);
    } else if (len >= 32) {
        /* a short period (2 .. 7 bytes, or 8+ without room) repeated: one period, then copies
         * of what is written, doubling; each copies whole periods written before it */
        memcpy(op, ref, dist);
        for (size_t done = dist; done < len;) {
            size_t c = done < len - done ? done : len - done;
            memcpy(op + done, op, c);
            done += c;
        }
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
            if (cap - op >= 32 && n - ip >= 32)
                memcpy(out + op, in + ip, 32); /* a whole run's room: one fixed-size copy */
            else
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

/* ---- encoder ----------------------------------------------------------------------------- */

#define MAX_LIT 32
#define NEAR_MAX 8191                 /* distance - 1 below this: 2-byte match operands */
#define FAR_MAX (FAR_BASE + 65535)    /* largest distance of a far match */
#define MIN_MATCH 4
#define TAIL 12                       /* the last bytes are never searched: literals */

static uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static unsigned hash4(uint32_t v, unsigned bits) { return (v * 2654435761u) >> (32 - bits); }

/* Length of the match at ip with cand (< ip; their first MIN_MATCH bytes equal), up to bound:
 * 8 bytes at a time, the first differing byte found from the XOR (little-endian), then byte
 * by byte; the same length as the plain byte loop. */
static size_t match_len(const uint8_t *in, size_t cand, size_t ip, size_t bound)
{
    size_t len = MIN_MATCH;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (ip + len + 8 <= bound) {
        uint64_t a, b;
        memcpy(&a, in + cand + len, 8);
        memcpy(&b, in + ip + len, 8);
        if (a != b) return len + ((size_t)__builtin_ctzll(a ^ b) >> 3);
        len += 8;
    }
#endif
    while (ip + len < bound && in[cand + len] == in[ip + len]) len++;
    return len;
}

/* Writes literal run [lit, lit + cnt) (cnt <= 32) at out + o; returns the new o or SIZE_MAX. */
static size_t put_lits(uint8_t *out, size_t o, size_t maxout, const uint8_t *lit, size_t cnt)
{
    if (cnt == 0) return o;
    if (o + 1 + cnt > maxout) return SIZE_MAX;
    if (out) {
        out[o] = (uint8_t)(cnt - 1);
        memcpy(out + o + 1, lit, cnt);
    }
    return o + 1 + cnt;
}

static size_t put_match(uint8_t *out, size_t o, size_t maxout, size_t len, size_t dist)
{
    size_t l = len - 2, d = dist - 1, far = d >= NEAR_MAX;
    uint8_t tmp[16];
    size_t t = 0;
    if (far) d = dist - FAR_BASE;
    unsigned hi = far ? 31u : (unsigned)(d >> 8);
    if (l < 7) {
        tmp[t++] = (uint8_t)(l << 5 | hi);
    } else {
        tmp[t++] = (uint8_t)(7u << 5 | hi);
        size_t x = l - 7;
        size_t n255 = x / 255;
        if (o + 1 + n255 > maxout) return SIZE_MAX;
        if (out) memset(out + o + 1, 255, n255);
        if (out) out[o] = tmp[0];
        o += 1 + n255;
        t = 0;
        tmp[t++] = (uint8_t)(x % 255);
    }
    if (far) {
        tmp[t++] = 255;
        tmp[t++] = (uint8_t)(d >> 8);
        tmp[t++] = (uint8_t)(d & 255);
    } else {
        tmp[t++] = (uint8_t)(d & 255);
    }
    if (o + t > maxout) return SIZE_MAX;
    if (out) memcpy(out + o, tmp, t);
    return o + t;
}

/* One pass over in[0, n): writes the stream to out (NULL: only counts). Returns its length, or
 * SIZE_MAX when it exceeds maxout. */
static size_t lz_pass(const uint8_t *in, size_t n, uint8_t *out, size_t maxout, unsigned bits,
                      uint32_t *tab, int twice)
{
    memset(tab, 0, sizeof(uint32_t) << bits);
    size_t o = 0, ip = 0, anchor = 0;
    size_t limit = n > TAIL ? n - TAIL : 0, bound = n - 4;
    while (ip < limit) {
        uint32_t seq = ld32(in + ip);
        unsigned h = hash4(seq, bits);
        size_t cand = tab[h];
        tab[h] = (uint32_t)ip;
        size_t dist = ip - cand;
        if (ip == 0 || cand >= ip || dist > FAR_MAX || ld32(in + cand) != seq) {
            ip++;
            continue;
        }
        size_t len = match_len(in, cand, ip, bound);
        /* Blosc2's choice (its length bias): a match of 7 bytes or more (9 far: 4 operand
         * bytes) is taken, for one byte less than its length; shorter ones stay literals. The
         * entropy probe then decides as Blosc2's, and the sizes come out close to its. */
        if (len < 7 || (dist > NEAR_MAX && len < 9)) {
            ip++;
            continue;
        }
        len--;
        while (anchor < ip) { /* pending literals */
            size_t cnt = ip - anchor < MAX_LIT ? ip - anchor : MAX_LIT;
            if ((o = put_lits(out, o, maxout, in + anchor, cnt)) == SIZE_MAX) return SIZE_MAX;
            anchor += cnt;
        }
        if ((o = put_match(out, o, maxout, len, dist)) == SIZE_MAX) return SIZE_MAX;
        ip += len;
        anchor = ip;
        if (ip < limit) {
            tab[hash4(ld32(in + ip - 2), bits)] = (uint32_t)(ip - 2);
            if (twice) tab[hash4(ld32(in + ip - 1), bits)] = (uint32_t)(ip - 1);
        }
    }
    while (anchor < n) {
        size_t cnt = n - anchor < MAX_LIT ? n - anchor : MAX_LIT;
        if ((o = put_lits(out, o, maxout, in + anchor, cnt)) == SIZE_MAX) return SIZE_MAX;
        anchor += cnt;
    }
    return o;
}

size_t gbp_blosclz_compress(int level, const uint8_t *in, size_t n, uint8_t *out, size_t maxout)
{
    static const double min_ratio[10] = {0, 2, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0};
    if (level < 1) level = 1;
    if (level > 9) level = 9;
    if (n < 16 || maxout < 66 || n > UINT32_MAX) return 0;
    unsigned bits = level == 1 ? 12 : level == 2 ? 13 : 14;
    uint32_t tab[1u << 14];
    /* entropy probe: the tail of the block, at most 2^bits bytes */
    size_t sample = level < 2 ? n / 8 : level < 4 ? n / 4 : level < 7 ? n / 2 : n;
    if (sample > ((size_t)1 << bits)) sample = (size_t)1 << bits;
    if (sample >= 16) {
        size_t c = lz_pass(in + n - sample, sample, NULL, SIZE_MAX, bits, tab, 0);
        if ((double)sample < min_ratio[level] * (double)c) return 0;
    }
    size_t o = lz_pass(in, n, out, maxout, bits, tab, level == 9);
    if (o == SIZE_MAX) return 0;
    out[0] |= 0x20; /* the marker: the first control byte is a literal run */
    return o;
}
