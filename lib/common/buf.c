/* Growable little-endian byte buffer for building metadata. */
#include "common/buf.h"
#include "common/alloc.h"
#include "common/error.h"

void gbp_buf_init(gbp_buf *b) { memset(b, 0, sizeof *b); }

void gbp_buf_free(gbp_buf *b)
{
    gbp_free(b->data);
    gbp_buf_init(b);
}

void gbp_buf_reset(gbp_buf *b)
{
    b->len = 0;
    b->failed = 0;
}

int gbp_buf_reserve(gbp_buf *b, size_t extra)
{
    if (b->failed) return -1;
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) {
        if (cap > SIZE_MAX / 2) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    uint8_t *d = gbp_realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void gbp_buf_put(gbp_buf *b, const void *p, size_t n)
{
    if (n == 0 || gbp_buf_reserve(b, n)) return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void gbp_buf_u8(gbp_buf *b, uint8_t v) { gbp_buf_put(b, &v, 1); }
void gbp_buf_u16(gbp_buf *b, uint16_t v) { gbp_buf_put(b, &v, 2); }
void gbp_buf_u32(gbp_buf *b, uint32_t v) { gbp_buf_put(b, &v, 4); }
void gbp_buf_u64(gbp_buf *b, uint64_t v) { gbp_buf_put(b, &v, 8); }

void gbp_buf_zero(gbp_buf *b, size_t n)
{
    if (n == 0 || gbp_buf_reserve(b, n)) return;
    memset(b->data + b->len, 0, n);
    b->len += n;
}

void gbp_buf_bpstr(gbp_buf *b, const char *s, size_t n)
{
    gbp_buf_u16(b, (uint16_t)n);
    gbp_buf_put(b, s, n);
}

void gbp_buf_set_u16(gbp_buf *b, size_t at, uint16_t v)
{
    if (!b->failed && at + 2 <= b->len) memcpy(b->data + at, &v, 2);
}
void gbp_buf_set_u32(gbp_buf *b, size_t at, uint32_t v)
{
    if (!b->failed && at + 4 <= b->len) memcpy(b->data + at, &v, 4);
}
void gbp_buf_set_u64(gbp_buf *b, size_t at, uint64_t v)
{
    if (!b->failed && at + 8 <= b->len) memcpy(b->data + at, &v, 8);
}
