/* BP5 operator buffers (§9.3): byte 0 names the operator (ADIOS2's core::Operator::OperatorType),
 * byte 1 is its buffer version, bytes 2-3 are zero. The metadata never names the operator. */
#include "format/bp5_op.h"

#include <stdio.h>
#include <string.h>

/* ADIOS2's names of its operator types (core::OperatorTypeToString), NULL for other bytes */
static const char *op_name(int t)
{
    switch (t) {
    case 0: return "blosc";
    case 1: return "bzip2";
    case 2: return "libpressio";
    case 3: return "mgard";
    case 4: return "png";
    case 5: return "sirius";
    case 6: return "sz";
    case 7: return "zfp";
    case 8: return "mgardplus";
    case 9: return "bigwhoop";
    case 10: return "mgard_complex";
    case 11: return "sz3";
    case 41: return "mdr";
    case 42: return "prodm";
    case 45: return "caesar";
    case 53: return "plugin";
    case 127: return "null";
    default: return NULL;
    }
}

/* A plugin operator's header after the 4 common bytes: u8 count, then count pairs of (u8 length,
 * key, u8 length, value); the value of key, or NULL (its length in *len). */
static const uint8_t *plugin_param(const uint8_t *p, size_t n, const char *key, size_t *len)
{
    size_t at = 4, kl = strlen(key);
    if (n <= at) return NULL;
    unsigned count = p[at++];
    for (unsigned i = 0; i < count; i++) {
        if (at >= n || p[at] > n - at - 1) return NULL;
        const uint8_t *k = p + at + 1;
        size_t l = p[at];
        at += 1 + l;
        if (at >= n || p[at] > n - at - 1) return NULL;
        const uint8_t *v = p + at + 1;
        size_t vl = p[at];
        at += 1 + vl;
        if (l == kl && !memcmp(k, key, kl)) {
            *len = vl;
            return v;
        }
    }
    return NULL;
}

int bp5_op_name(const uint8_t *p, size_t n, char *name, size_t cap)
{
    if (n < 1)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "an operator buffer of 0 bytes");
    const char *s = op_name(p[0]);
    char buf[600];
    if (p[0] == 53) { /* a plugin: LIBRARY(NAME), as ADIOS2 names it */
        size_t ll = 0, nl = 0;
        const uint8_t *lib = plugin_param(p, n, "PluginLibrary", &ll);
        const uint8_t *nm = plugin_param(p, n, "PluginName", &nl);
        if (lib && nm) {
            snprintf(buf, sizeof buf, "%.*s(%.*s)", (int)ll, (const char *)lib, (int)nl,
                     (const char *)nm);
            s = buf;
        }
    } else if (!s) {
        snprintf(buf, sizeof buf, "unknown (type %u)", p[0]);
        s = buf;
    }
    if (strlen(s) >= cap)
        return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "the operator's name '%s' needs %zu bytes, %zu "
                         "given", s, strlen(s) + 1, cap);
    memcpy(name, s, strlen(s) + 1);
    return GPUBP_OK;
}

int bp5_op_parse(const uint8_t *p, size_t n, uint64_t raw_size, int *type, const uint8_t **raw)
{
    *raw = NULL;
    *type = -1;
    if (n < 4)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "operator buffer of %zu bytes", n);
    *type = p[0];
    switch (p[0]) {
    case BP5_OP_BLOSC:
    case BP5_OP_BZIP2:
        return GPUBP_OK;
    case BP5_OP_NULL: {
        if (n < 12)
            return gbp_error(GPUBP_ERR_FORMAT, 0, "null operator buffer of %zu bytes", n);
        uint64_t len = gbp_ld64(p + 4);
        if (len != n - 12 || len != raw_size)
            return gbp_error(GPUBP_ERR_FORMAT, 0,
                             "null operator buffer of %zu bytes says %llu, the block has %llu", n, (unsigned long long)len, (unsigned long long)raw_size);
        *raw = p + 12;
        return GPUBP_OK;
    }
    default: {
        char name[600]; /* every name fits, a plugin's LIBRARY(NAME) too; n >= 4 here */
        (void)bp5_op_name(p, n, name, sizeof name);
        return gbp_error(GPUBP_ERR_CODEC, 0,
                         "block compressed with operator '%s' (type %u), which libgpubp does not "
                         "decode (blosc, null, bzip2)", name, p[0]);
    }
    }
}
