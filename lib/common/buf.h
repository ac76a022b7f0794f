/* lib/common/buf.h: see buf.c. */
#ifndef GBP_COMMON_BUF_H
#define GBP_COMMON_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Appends never fail silently: on an allocation failure the buffer is marked failed, further
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

#endif /* GBP_COMMON_BUF_H */
