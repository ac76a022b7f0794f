/* Writes ADIOS2 blosc operator buffers in layouts libgpubp's writer never makes but a reader must
 * accept, with the real Blosc2 (2.19.1, zlib codec) making every chunk: split streams
 * (splitmode ALWAYS), a user block size, the legacy single-chunk body, a pre-2.8 payload (no
 * 15-byte prefix) and many chunks (pieces of 10007 bytes). The framing around the chunks is the
 * buffer version 1 of ADIOS2's blosc operator (docs/format/). Data, not part of the build:
 *   cc make_blosc_layouts.c -I$BLOSC2/include -L$BLOSC2/lib -lblosc2 -o make_blosc_layouts
 *   ./make_blosc_layouts OUTDIR
 * OUTDIR gets ints.data, dbl.data, mixed.data (the inputs), NAME.buf per case and `list`, one
 * line per case: "NAME LAYOUT(normal|pre28) TYPESIZE DATAFILE". */
#include <blosc2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char outdir[3000];

static void put(const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

static void le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The ADIOS2 blosc buffer of data (pieces of at most max_chunk bytes, one Blosc2 chunk each). */
static uint8_t *encode(const uint8_t *data, size_t n, int ts, int clevel, int shuffle,
                       int splitmode, int blocksize, size_t max_chunk, size_t *len)
{
    uint8_t *buf = malloc(23 + n + 64 * (n / max_chunk + 1));
    size_t at = 23;
    uint32_t chunks = 0;
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = BLOSC_ZLIB;
    cp.clevel = (uint8_t)clevel;
    cp.typesize = ts;
    cp.nthreads = 1;
    cp.blocksize = blocksize;
    cp.splitmode = splitmode;
    memset(cp.filters, 0, sizeof cp.filters);
    cp.filters[BLOSC2_MAX_FILTERS - 1] = (uint8_t)shuffle;
    blosc2_context *cx = blosc2_create_cctx(cp);
    for (size_t off = 0; off < n; off += max_chunk) {
        size_t piece = n - off < max_chunk ? n - off : max_chunk;
        int c = blosc2_compress_ctx(cx, data + off, (int32_t)piece, buf + at,
                                    (int32_t)(piece + BLOSC2_MAX_OVERHEAD));
        if (c <= 0) {
            fprintf(stderr, "blosc2_compress_ctx: %d\n", c);
            exit(1);
        }
        at += (size_t)c;
        chunks++;
    }
    blosc2_free_ctx(cx);
    buf[0] = 0; /* operator type: blosc */
    buf[1] = 1; /* buffer version */
    buf[2] = buf[3] = 0;
    le(buf + 4, n, 8);
    buf[12] = BLOSC2_VERSION_MAJOR;
    buf[13] = BLOSC2_VERSION_MINOR;
    buf[14] = BLOSC2_VERSION_RELEASE;
    le(buf + 15, 0, 4); /* chunked layout */
    le(buf + 19, chunks, 4);
    *len = at;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    snprintf(outdir, sizeof outdir, "%s", argv[1]);
    blosc2_init();
    int32_t ints[5000];
    double dbl[3001];
    for (int i = 0; i < 5000; i++) ints[i] = (i * 7) % 97 - 40;
    for (int i = 0; i < 3001; i++) dbl[i] = (double)((i % 97) - 40) * 0.25 + (double)i * 1e-3;
    uint8_t mixed[sizeof ints + sizeof dbl];
    memcpy(mixed, ints, sizeof ints);
    memcpy(mixed + sizeof ints, dbl, sizeof dbl);
    put("ints.data", ints, sizeof ints);
    put("dbl.data", dbl, sizeof dbl);
    put("mixed.data", mixed, sizeof mixed);
    const size_t whole = BLOSC2_MAX_BUFFERSIZE;
    char list[4096] = "", name[64];
    for (int sh = 0; sh < 3; sh++) {
        size_t n;
        uint8_t *b;
#define CASE(NM, LAYOUT, TS, DATAFILE, P, L)                                                     \
        snprintf(name, sizeof name, "%s_%d.buf", NM, sh);                                      \
        put(name, P, L);                                                                       \
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s_%d %s %d %s\n", NM, sh,  \
                 LAYOUT, TS, DATAFILE)
        b = encode((uint8_t *)ints, sizeof ints, 4, 1, sh, BLOSC_ALWAYS_SPLIT, 0, whole, &n);
        CASE("split", "normal", 4, "ints.data", b, n);
        free(b);
        b = encode((uint8_t *)dbl, sizeof dbl, 8, 1, sh, BLOSC_ALWAYS_SPLIT, 1000, whole, &n);
        CASE("split_odd", "normal", 8, "dbl.data", b, n);
        free(b);
        b = encode((uint8_t *)dbl, sizeof dbl, 8, 3, sh, BLOSC_FORWARD_COMPAT_SPLIT, 1000, whole,
                   &n);
        CASE("userblock", "normal", 8, "dbl.data", b, n);
        free(b);
        b = encode((uint8_t *)ints, sizeof ints, 4, 1, sh, BLOSC_FORWARD_COMPAT_SPLIT, 0, whole, &n);
        /* legacy: the single chunk starts at offset 15 (no DataHeader) */
        uint8_t *legacy = malloc(n);
        memcpy(legacy, b, 15);
        memcpy(legacy + 15, b + 23, n - 23);
        CASE("legacy", "normal", 4, "ints.data", legacy, n - 8);
        free(legacy);
        /* pre-2.8: no 15-byte prefix, the DataHeader first */
        CASE("pre28", "pre28", 4, "ints.data", b + 15, n - 15);
        free(b);
        b = encode(mixed, sizeof mixed, 8, 1, sh, BLOSC_FORWARD_COMPAT_SPLIT, 0, 10007, &n);
        CASE("multichunk", "normal", 8, "mixed.data", b, n);
        free(b);
    }
    put("list", list, strlen(list));
    blosc2_destroy();
    return 0;
}
