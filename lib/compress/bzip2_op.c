/* The ADIOS2 bzip2 operator buffer (bzip2_op.h): the header and batch table are checked against
 * the buffer and the block before libbz2 sees a byte, and the batches must cover the block once,
 * in order. */
#include "compress/bzip2_op.h"
#include "compress/blosc_config.h"

#include <stdarg.h>
#include <stdio.h>

#ifdef GPUBP_HAVE_BZIP2
#include <bzlib.h>
#endif

const char *gbp_bzip2_version(void)
{
#ifdef GPUBP_HAVE_BZIP2
    return BZ2_bzlibVersion();
#else
    return NULL;
#endif
}

#define BZ_HEADER 20 /* common header, u64 size, u64 batch count */
#define BZ_ENTRY 16

int gbp_bzip2_available(void)
{
#ifdef GPUBP_HAVE_BZIP2
    return 1;
#else
    return 0;
#endif
}

/* Records GPUBP_ERR_FORMAT "damaged bzip2 operator buffer at offset OFF: message". */
static int bz_damaged(size_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int bz_damaged(size_t off, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gbp_error(GPUBP_ERR_FORMAT, 0, "damaged bzip2 operator buffer at offset %zu: %s", off,
                     msg);
}

int gbp_bzip2_decompress(const void *src, size_t n, void *dst, size_t raw)
{
    const uint8_t *p = src;
    if (n < BZ_HEADER) {
        return bz_damaged(0, "%zu bytes, shorter than its %d-byte header", n, BZ_HEADER);
    }
    if (p[0] != GBP_BZIP2_OP_TYPE || p[1] != 1 || p[2] || p[3]) {
        return bz_damaged(0, "header %02x %02x %02x %02x (operator type 1, version 1 expected)",
                 p[0], p[1], p[2], p[3]);
    }
    uint64_t size = gbp_ld64(p + 4), nb = gbp_ld64(p + 12);
    if (size != raw) {
        return bz_damaged(4, "%llu uncompressed bytes, the block has %zu",
                 (unsigned long long)size, raw);
    }
    if (nb > (n - BZ_HEADER) / BZ_ENTRY || (nb == 0 && raw != 0)) {
        return bz_damaged(12, "%llu batches in a buffer of %zu bytes", (unsigned long long)nb, n);
    }
#ifndef GPUBP_HAVE_BZIP2
    (void)dst;
    return gbp_error(GPUBP_ERR_CODEC, 0,
                     "block compressed with the bzip2 operator, which this build of libgpubp does "
                     "not decode (libbz2 was not found when it was built)");
#else
    size_t table_end = BZ_HEADER + (size_t)nb * BZ_ENTRY, done = 0;
    for (size_t i = 0; i < (size_t)nb; i++) {
        const uint8_t *e = p + BZ_HEADER + BZ_ENTRY * i;
        size_t at = BZ_HEADER + BZ_ENTRY * i;
        uint32_t uoff = gbp_ld32(e), ulen = gbp_ld32(e + 4), zoff = gbp_ld32(e + 8),
                 zlen = gbp_ld32(e + 12);
        if (uoff != done || ulen > raw - done) {
            return bz_damaged(at, "batch %zu: %u bytes at %u of the block (%zu bytes, %zu done)",
                     i, ulen, uoff, raw, done);
        }
        if (zoff < table_end || zoff > n || zlen > n - zoff) {
            return bz_damaged(at + 8, "batch %zu: stream of %u bytes at %u in a buffer of %zu", i,
                     zlen, zoff, n);
        }
        unsigned int got = ulen;
        int rc = BZ2_bzBuffToBuffDecompress((char *)dst + done, &got, (char *)(uintptr_t)(p + zoff),
                                            zlen, 0, 0);
        if (rc == BZ_MEM_ERROR) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (bzip2)");
        if (rc != BZ_OK || got != ulen) {
            return bz_damaged(zoff, "batch %zu: the bzip2 stream of %u bytes %s (libbz2 status %d, "
                     "%u of %u bytes)", i, zlen, rc == BZ_OK ? "is short" : "does not decode", rc,
                     got, ulen);
        }
        done += ulen;
    }
    if (done != raw) {
        return bz_damaged(12, "batches cover %zu of the block's %zu bytes", done, raw);
    }
    return GPUBP_OK;
#endif
}
