/* The per-codec fuzz targets (fuzz_codec_<codec>.c define FZ_CODEC_FORMAT, FZ_CODEC_ENC and
 * FZ_CODEC_ENC2, then include this): one decoder of lib/compress each, on its own streams and on
 * whole ADIOS2 blosc operator buffers whose chunks are labelled with that codec.
 * Input: u8 mode, u32 size (bounded), then bytes.
 *   mode bit 0 = 0: the bytes are an operator buffer; the codec bits of its first chunk (byte 25,
 *                   bits 5-7) are set to the target's codec; gbp_blosc_decompress into `size`.
 *   mode bit 0 = 1: the bytes are one codec stream; gbp_codec_decode into exactly `size` bytes.
 * Oracle: OK, FORMAT (with a message naming an offset, for buffers), CODEC or NOMEM, never a
 * crash, an overread or a leak; a stream that decodes, re-encoded with the codec and decoded
 * again, gives the same bytes. Seeds: chunks of that codec from the golden codecs/ datasets
 * (make_seeds.sh). */
#ifndef GBP_FUZZ_CODEC_H
#define GBP_FUZZ_CODEC_H

#include "compress/blosc_codec.h"
#include "compress/blosczlib.h"
#include "fuzz/fuzz_util.h"

#define FZ_MAX_RAW ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_codec_rc(int rc)
{
    if (rc != GPUBP_OK && rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_CODEC && rc != GPUBP_ERR_NOMEM)
        abort();
}

static void fz_codec_roundtrip(gbp_codec_ws *w, const uint8_t *raw, size_t n, int codec)
{
    size_t cap = n + n / 2 + 1024;
    uint8_t *z = malloc(cap), *back = malloc(n ? n : 1);
    size_t zl = z && back ? gbp_codec_encode(w, codec, 5, raw, n, z, cap) : 0;
    if (zl && zl != SIZE_MAX) {
        if (gbp_codec_decode(w, FZ_CODEC_FORMAT, z, zl, back, n) != GPUBP_OK) abort();
        if (memcmp(back, raw, n) != 0) abort();
    }
    free(z);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5) return 0;
    unsigned mode = data[0];
    uint32_t want;
    memcpy(&want, data + 1, 4);
    size_t raw = want % (FZ_MAX_RAW + 1);
    const uint8_t *in = data + 5;
    size_t n = size - 5;
    uint8_t *out = malloc(raw ? raw : 1);
    if (!out) return 0;
    if (mode & 1) {
        gbp_codec_ws w;
        memset(&w, 0, sizeof w);
        int rc = gbp_codec_decode(&w, FZ_CODEC_FORMAT, in, n, out, raw);
        fz_codec_rc(rc);
        if (rc == GPUBP_OK && raw > 0)
            fz_codec_roundtrip(&w, out, raw, mode & 2 ? FZ_CODEC_ENC2 : FZ_CODEC_ENC);
        gbp_codec_ws_free(&w);
    } else {
        uint8_t *buf = malloc(n ? n : 1);
        if (buf) {
            if (n) memcpy(buf, in, n);
            if (n > 25) buf[25] = (uint8_t)((buf[25] & 0x1F) | FZ_CODEC_FORMAT << 5);
            gbp_error_clear();
            int rc = gbp_blosc_decompress(buf, n, out, raw, 1 + (mode >> 1 & 1));
            fz_codec_rc(rc);
            if (rc == GPUBP_ERR_FORMAT && !strstr(gbp_error_message(), "offset")) abort();
            if (rc != GPUBP_OK && gbp_error_message()[0] == '\0') abort();
        }
        free(buf);
    }
    free(out);
    return 0;
}

#endif /* GBP_FUZZ_CODEC_H */
