/* Fuzz target: the ADIOS2 blosc operator buffer decoder (lib/compress), on damaged and hostile
 * payloads. Input: u32 declared uncompressed size (bounded), then the operator buffer. Oracle:
 * a status of GPUBP_OK, FORMAT or CODEC, never a crash, overread (ASan) or a huge allocation;
 * a decode that succeeds, when re-encoded and decoded again, gives the same bytes; a range of the
 * uncompressed bytes (chosen from the input; what a box read decodes) decodes whenever the whole
 * does, to the same bytes, and on damaged input only with one of those statuses. */
#include "compress/blosczlib.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_target.h"

#define FZ_MAX_RAW ((size_t)1 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    uint32_t want;
    memcpy(&want, data, 4);
    size_t raw = want % (FZ_MAX_RAW + 1);
    uint8_t *out = malloc(raw ? raw : 1);
    if (!out) return 0;
    int rc = gbp_blosc_decompress(data + 4, size - 4, out, raw, 1);
    if (rc != GPUBP_OK && rc != GPUBP_ERR_FORMAT && rc != GPUBP_ERR_CODEC &&
        rc != GPUBP_ERR_NOMEM)
        abort();
    /* a range [lo, hi) of the buffer, as a box read asks for it */
    size_t lo = raw ? (size_t)((size * 2654435761u) % raw) : 0;
    size_t hi = lo + (raw ? (size_t)(want >> 7) % (raw - lo + 1) : 0);
    uint8_t *part = malloc(hi > lo ? hi - lo : 1);
    if (part) {
        int rr = gbp_blosc_decompress_range(data + 4, size - 4, raw, lo, hi, part, 1);
        if (rr != GPUBP_OK && rr != GPUBP_ERR_FORMAT && rr != GPUBP_ERR_CODEC &&
            rr != GPUBP_ERR_NOMEM)
            abort();
        if (rc == GPUBP_OK && (rr != GPUBP_OK || memcmp(part, out + lo, hi - lo) != 0)) abort();
        free(part);
    }
    if (rc == GPUBP_OK && raw > 0) {
        /* the decoded bytes survive a round trip through our encoder */
        size_t cap = gbp_blosc_bound(raw), n = 0;
        uint8_t *z = malloc(cap), *back = malloc(raw);
        if (z && back && gbp_blosc_compress(out, raw, 4, GBP_BLOSC_ZLIB, 1, 1, 1, z, cap, &n) == GPUBP_OK) {
            if (gbp_blosc_decompress(z, n, back, raw, 1) != GPUBP_OK) abort();
            if (memcmp(back, out, raw) != 0) abort();
        }
        free(z);
        free(back);
    }
    free(out);
    return 0;
}
