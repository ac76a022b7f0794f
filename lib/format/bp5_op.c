/* BP5 operator buffers (§9.3): byte 0 names the operator (ADIOS2's core::Operator::OperatorType),
 * byte 1 is its buffer version, bytes 2-3 are zero. The metadata never names the operator. */
#include "format/bp5_op.h"

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
    case 11: return "sz3";
    case 127: return "null";
    default: return "unknown";
    }
}

int bp5_op_parse(const uint8_t *p, size_t n, uint64_t raw_size, int *type, const uint8_t **raw,
                 size_t *raw_len, const char *what)
{
    *raw = NULL;
    *raw_len = 0;
    *type = -1;
    if (n < 4)
        return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: operator buffer of %zu bytes", what, n);
    *type = p[0];
    switch (p[0]) {
    case BP5_OP_BLOSC:
    case BP5_OP_BZIP2:
        return GPUBP_OK;
    case BP5_OP_NULL: {
        if (n < 12)
            return gbp_error(GPUBP_ERR_FORMAT, 0, "%s: null operator buffer of %zu bytes", what, n);
        uint64_t len = gbp_ld64(p + 4);
        if (len != n - 12 || len != raw_size)
            return gbp_error(GPUBP_ERR_FORMAT, 0,
                             "%s: null operator buffer of %zu bytes says %llu, the block has %llu",
                             what, n, (unsigned long long)len, (unsigned long long)raw_size);
        *raw = p + 12;
        *raw_len = (size_t)len;
        return GPUBP_OK;
    }
    default:
        return gbp_error(GPUBP_ERR_CODEC, 0,
                         "%s: block compressed with operator '%s' (type %u), which libgpubp does "
                         "not decode (blosc, null, bzip2)", what, op_name(p[0]), p[0]);
    }
}
