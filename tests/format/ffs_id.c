/* FFS format ids (ffs_id.h): lookup3's hashlittle2 (Bob Jenkins, public domain), written from its
 * published description, byte by byte so that it is the same on every host. */
#include "format/ffs_id.h"

#include <stdlib.h>
#include <string.h>

#define ROT(x, k) (((x) << (k)) | ((x) >> (32 - (k))))

static void mix(uint32_t *a, uint32_t *b, uint32_t *c)
{
    *a -= *c; *a ^= ROT(*c, 4);  *c += *b;
    *b -= *a; *b ^= ROT(*a, 6);  *a += *c;
    *c -= *b; *c ^= ROT(*b, 8);  *b += *a;
    *a -= *c; *a ^= ROT(*c, 16); *c += *b;
    *b -= *a; *b ^= ROT(*a, 19); *a += *c;
    *c -= *b; *c ^= ROT(*b, 4);  *b += *a;
}

static void final(uint32_t *a, uint32_t *b, uint32_t *c)
{
    *c ^= *b; *c -= ROT(*b, 14);
    *a ^= *c; *a -= ROT(*c, 11);
    *b ^= *a; *b -= ROT(*a, 25);
    *c ^= *b; *c -= ROT(*b, 16);
    *a ^= *c; *a -= ROT(*c, 4);
    *b ^= *a; *b -= ROT(*a, 14);
    *c ^= *b; *c -= ROT(*b, 24);
}

static uint32_t le32(const uint8_t *k, size_t n) /* up to 4 bytes, little-endian, zero-filled */
{
    uint32_t v = 0;
    for (size_t i = n < 4 ? n : 4; i-- > 0;) v = v << 8 | k[i];
    return v;
}

static void hashlittle2(const uint8_t *k, size_t len, uint32_t *pc, uint32_t *pb)
{
    uint32_t a, b, c;
    a = b = c = 0xdeadbeefu + (uint32_t)len + *pc;
    c += *pb;
    while (len > 12) {
        a += le32(k, 4);
        b += le32(k + 4, 4);
        c += le32(k + 8, 4);
        mix(&a, &b, &c);
        len -= 12;
        k += 12;
    }
    if (len == 0) {
        *pc = c;
        *pb = b;
        return;
    }
    a += le32(k, len);
    b += len > 4 ? le32(k + 4, len - 4) : 0;
    c += len > 8 ? le32(k + 8, len - 8) : 0;
    final(&a, &b, &c);
    *pc = c;
    *pb = b;
}

void ffs_format_id(const uint8_t *desc, size_t len, uint8_t id[12])
{
    uint32_t c = 0, b = 0;
    hashlittle2(desc, len, &c, &b);
    id[0] = 2;
    id[1] = (uint8_t)(len >> 18);
    id[2] = (uint8_t)(len >> 10);
    id[3] = (uint8_t)(len >> 2);
    for (int i = 0; i < 4; i++) {
        id[4 + i] = (uint8_t)(c >> (24 - 8 * i));
        id[8 + i] = (uint8_t)(b >> (24 - 8 * i));
    }
}

static uint64_t ld(const uint8_t *p, int be)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = be ? v << 8 | p[i] : v | (uint64_t)p[i] << 8 * i;
    return v;
}

/* Each entry's description (its length and place) in turn: fn(ctx, d, len, entry). */
static int each_desc(uint8_t *mmd, size_t n, int be,
                     int (*fn)(void *ctx, uint8_t *d, size_t len, uint8_t *entry), void *ctx)
{
    for (size_t at = 0; at + 16 + 12 <= n;) {
        uint64_t idl = ld(mmd + at, be), il = ld(mmd + at + 8, be);
        if (idl != 12 || il > n - at - 28 || il < 8) return -1;
        uint8_t *d = mmd + at + 28;
        size_t len = (size_t)d[0] << 8 | d[1] | (d[3] > 0 ? (size_t)d[6] << 24 | (size_t)d[7] << 16 : 0);
        if (len > il || fn(ctx, d, len, mmd + at)) return -1;
        at += 28 + (size_t)il;
    }
    return 0;
}

typedef struct rehash {
    ffs_idmap *m;
    int write;
} rehash;

static int rehash_one(void *ctx, uint8_t *d, size_t len, uint8_t *entry)
{
    rehash *r = ctx;
    ffs_idmap *m = r->m;
    uint8_t id[12];
    ffs_format_id(d, len, id);
    void *f = realloc(m->from, (m->n + 1) * 12), *t = f ? realloc(m->to, (m->n + 1) * 12) : NULL;
    if (f) m->from = f;
    if (!t) return -1;
    m->to = t;
    memcpy(m->from[m->n], entry + 16, 12);
    memcpy(m->to[m->n], id, 12);
    m->n++;
    if (r->write) memcpy(entry + 16, id, 12);
    return 0;
}

static void hex12(const uint8_t id[12], char out[25])
{
    static const char dig[] = "0123456789abcdef";
    for (int i = 0; i < 12; i++) {
        out[2 * i] = dig[id[i] >> 4];
        out[2 * i + 1] = dig[id[i] & 15];
    }
    out[24] = 0;
}

/* A struct variable's field name holds its description's id in hex (BP5: "BPG_<size>_16_<hex
 * id>_<name>"): every changed id's hex text, replaced in place (same length). */
static int rename_ids(void *ctx, uint8_t *d, size_t len, uint8_t *entry)
{
    const ffs_idmap *m = ctx;
    (void)entry;
    for (size_t i = 0; i < m->n; i++) {
        char from[25], to[25];
        if (memcmp(m->from[i], m->to[i], 12) == 0) continue;
        hex12(m->from[i], from);
        hex12(m->to[i], to);
        for (size_t at = 0; at + 24 <= len; at++)
            if (memcmp(d + at, from, 24) == 0) memcpy(d + at, to, 24);
    }
    return 0;
}

int ffs_rehash_mmd(uint8_t *mmd, size_t n, int be, ffs_idmap *m)
{
    /* struct descriptions name no other id: their new ids are known after one pass; the
     * descriptions that name them in hex are renamed, then every id is computed again */
    ffs_idmap first = {NULL, NULL, 0};
    rehash r1 = {&first, 0}, r2 = {m, 1};
    int rc = each_desc(mmd, n, be, rehash_one, &r1);
    if (rc == 0) rc = each_desc(mmd, n, be, rename_ids, &first);
    if (rc == 0) rc = each_desc(mmd, n, be, rehash_one, &r2);
    ffs_idmap_free(&first);
    return rc;
}

int ffs_check_mmd(const uint8_t *mmd, size_t n)
{
    ffs_idmap m = {NULL, NULL, 0};
    uint8_t *cp = malloc(n ? n : 1);
    int rc = cp ? 0 : -1;
    if (cp) memcpy(cp, mmd, n);
    if (rc == 0) rc = ffs_rehash_mmd(cp, n, 0, &m);
    for (size_t i = 0; rc == 0 && i < m.n; i++)
        if (memcmp(m.from[i], m.to[i], 12) != 0) rc = -1;
    ffs_idmap_free(&m);
    free(cp);
    return rc;
}

void ffs_idmap_apply(const ffs_idmap *m, uint8_t *p)
{
    for (size_t i = 0; i < m->n; i++)
        if (memcmp(m->from[i], p, 12) == 0) {
            memcpy(p, m->to[i], 12);
            return;
        }
}

void ffs_idmap_free(ffs_idmap *m)
{
    free(m->from);
    free(m->to);
    memset(m, 0, sizeof *m);
}
