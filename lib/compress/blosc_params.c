/* The parameters of the blosc operator: "level=..,shuffle=..,threads=.." and the codec names. */
#include "compress/blosc_params.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_size_t max_chunk_hook = 0;

void gbp_blosc_set_max_chunk(size_t bytes) { atomic_store(&max_chunk_hook, bytes); }

size_t gbp_blosc_max_chunk(void)
{
    size_t m = atomic_load(&max_chunk_hook);
    return m ? m : GBP_BLOSC_MAX_CHUNK;
}

const char *gbp_blosc_codec_name(int format)
{
    static const char *const names[8] = {"blosclz", "lz4", "reserved codec 2", "zlib",
                                         "zstd", "reserved codec 5", "user-defined codec",
                                         "super-chunk"};
    return format >= 0 && format < 8 ? names[format] : "unknown codec";
}


static int parse_int(const char *key, const char *v, size_t n, long lo, long hi, int *out)
{
    char tmp[32];
    if (n == 0 || n >= sizeof tmp)
        return gbp_error(GPUBP_ERR_PARAM, 0, "compression parameter '%s': bad value '%.*s'", key,
                         (int)(n > 64 ? 64 : n), v);
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    char *end;
    long x = strtol(tmp, &end, 10);
    if (*end != '\0' || x < lo || x > hi)
        return gbp_error(GPUBP_ERR_PARAM, 0,
                         "compression parameter '%s': bad value '%s' (expected %ld..%ld)", key,
                         tmp, lo, hi);
    *out = (int)x;
    return GPUBP_OK;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int gbp_blosc_parse_params(const char *params, int *level, int *shuffle, int *threads)
{
    int lv = level ? *level : GBP_BLOSC_DEFAULT_LEVEL;
    int sh = shuffle ? *shuffle : GBP_BLOSC_DEFAULT_SHUFFLE;
    int th = threads ? *threads : 0;
    const char *p = params ? params : "";
    while (*p) {
        const char *item = p, *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        p = comma ? comma + 1 : p + len;
        const char *e = item + len;
        while (item < e && is_space(*item)) item++;
        while (e > item && is_space(e[-1])) e--;
        if (item == e) continue; /* empty item: "a=1,,b=2" or a trailing comma */
        const char *eq = memchr(item, '=', (size_t)(e - item));
        const char *kend = eq ? eq : e, *v = eq ? eq + 1 : e;
        while (kend > item && is_space(kend[-1])) kend--;
        while (v < e && is_space(*v)) v++;
        size_t klen = (size_t)(kend - item), vlen = (size_t)(e - v);
        char key[32];
        if (klen >= sizeof key || klen == 0)
            return gbp_error(GPUBP_ERR_PARAM, 0, "compression parameter: unknown key '%.*s'",
                             (int)(klen > 64 ? 64 : klen), item);
        memcpy(key, item, klen);
        key[klen] = '\0';
        if (!eq)
            return gbp_error(GPUBP_ERR_PARAM, 0, "compression parameter '%s': missing '=value'",
                             key);
        if (!strcmp(key, "level")) {
            GBP_FORWARD_IF_ERROR(parse_int(key, v, vlen, 0, 9, &lv));
        } else if (!strcmp(key, "threads")) {
            GBP_FORWARD_IF_ERROR(parse_int(key, v, vlen, 0, 1024, &th));
        } else if (!strcmp(key, "shuffle")) {
            if (vlen == 4 && !memcmp(v, "byte", 4)) sh = GBP_BLOSC_SHUFFLE;
            else if (vlen == 3 && !memcmp(v, "bit", 3)) sh = GBP_BLOSC_BITSHUFFLE;
            else if (vlen == 4 && !memcmp(v, "none", 4)) sh = GBP_BLOSC_NOSHUFFLE;
            else
                return gbp_error(GPUBP_ERR_PARAM, 0,
                                 "compression parameter 'shuffle': bad value '%.*s' (expected "
                                 "byte, bit or none)", (int)(vlen > 64 ? 64 : vlen), v);
        } else {
            return gbp_error(GPUBP_ERR_PARAM, 0,
                             "compression parameter: unknown key '%s' (known: level, shuffle, "
                             "threads)", key);
        }
    }
    if (level) *level = lv;
    if (shuffle) *shuffle = sh;
    if (threads) *threads = th;
    return GPUBP_OK;
}

static const struct { const char *name; int code; } codec_names[] = {
    {"blosclz", GBP_BLOSC_BLOSCLZ}, {"lz4", GBP_BLOSC_LZ4}, {"lz4hc", GBP_BLOSC_LZ4HC},
    {"zlib", GBP_BLOSC_ZLIB},       {"zstd", GBP_BLOSC_ZSTD}};

int gbp_blosc_codec_from_name(const char *name, int *codec)
{
    for (size_t i = 0; name && i < sizeof codec_names / sizeof *codec_names; i++)
        if (!strcmp(name, codec_names[i].name)) {
            *codec = codec_names[i].code;
            return GPUBP_OK;
        }
    return gbp_error(GPUBP_ERR_CODEC, 0,
                     "codec '%s' is not supported (blosclz, lz4, lz4hc, zlib or zstd)",
                     name ? name : "(null)");
}

const char *gbp_blosc_codec_str(int codec)
{
    for (size_t i = 0; i < sizeof codec_names / sizeof *codec_names; i++)
        if (codec_names[i].code == codec) return codec_names[i].name;
    return "unknown codec";
}
