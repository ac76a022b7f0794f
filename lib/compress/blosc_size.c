/* Sizes of the encoder's output: the buffer bound, Blosc2's automatic block size and split rule
 * (blosc_size.h). */
#include "compress/blosc_size.h"

#include "compress/blosc_frame.h"

size_t gbp_blosc_bound(size_t n)
{
    size_t m = gbp_blosc_max_chunk(), chunks = n / m + (n % m != 0), out;
    if (!gbp_add_ok(n, GBP_BLOSC_PREFIX, &out)) return 0;
    if (n < GBP_BLOSC_THRESHOLD) return out; /* stored raw */
    if (chunks > (SIZE_MAX - out) / HDR_EXT) return 0;
    return out + HDR_EXT * chunks;
}

/* Blosc2's split rule (stune.c split_block, default split mode): fast codecs (blosclz, lz4, zstd
 * up to level 5) cut each block into typesize streams when byte shuffle acts. */
static int split_rule(int codec, int level, int shuffle, size_t ts, size_t bsz)
{
    int fast = codec == GBP_BLOSC_BLOSCLZ || codec == GBP_BLOSC_LZ4 ||
               (codec == GBP_BLOSC_ZSTD && level <= 5);
    return fast && shuffle == GBP_BLOSC_SHUFFLE && ts > 1 && ts <= GBP_MAX_STREAMS &&
           bsz / ts >= MIN_BUFFERSIZE;
}

int gbp_blosc_split(size_t nbytes, size_t typesize, int codec, int level, int shuffle)
{
    if (typesize > 255) typesize = 1;
    if (level == 0 || nbytes < MIN_BUFFERSIZE) return 0;
    return split_rule(codec, level, shuffle, typesize,
                      gbp_blosc_blocksize(nbytes, typesize, codec, level, shuffle));
}

size_t gbp_blosc_blocksize(size_t nbytes, size_t typesize, int codec, int level, int shuffle)
{
    /* stune: 32 KiB (64 KiB for the high-ratio codecs lz4hc, zlib, zstd) scaled by clevel, in
     * units of 8 KiB; 9 doubles again for those; split codecs: 32 KiB .. 512 KiB x typesize */
    static const unsigned units[10] = {1, 2, 4, 8, 16, 16, 32, 32, 32, 32};
    static const unsigned split_kib[10] = {0, 32, 32, 32, 64, 64, 64, 128, 256, 512};
    if (typesize > 255) typesize = 1;
    if (nbytes < typesize) return 1;
    int hcr = codec == GBP_BLOSC_LZ4HC || codec == GBP_BLOSC_ZLIB || codec == GBP_BLOSC_ZSTD;
    int lv = level < 0 ? 0 : level > 9 ? 9 : level;
    size_t bs = nbytes;
    if (nbytes >= 32768) bs = (size_t)8192 * units[lv] * (hcr ? 2 : 1) * (hcr && lv == 9 ? 2 : 1);
    if (lv > 0 && split_rule(codec, lv, shuffle, typesize, nbytes)) {
        bs = (size_t)split_kib[lv] * 1024 * typesize;
        if (bs > ((size_t)4 << 20)) bs = (size_t)4 << 20;
        if (bs < 32768) bs = 32768;
    }
    if (bs > nbytes) bs = nbytes;
    if (bs > typesize) bs = bs / typesize * typesize;
    return bs;
}

size_t gbp_blosc_dev_blocksize(size_t nbytes, size_t typesize, size_t want)
{
    if (typesize > 255) typesize = 1;
    if (nbytes < typesize) return 1;
    size_t bs = want < nbytes ? want : nbytes;
    if (bs > typesize) bs = bs / typesize * typesize;
    return bs;
}
