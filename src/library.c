/* The public API, Library section of <gpubp.h>: version, features, status strings, the error
 * record, type tables. */
#include "engine/engine.h"

#include "gpubp/cuda.h"

const char *gpubp_version(void) { return GPUBP_VERSION_STRING; }

unsigned gpubp_features(void) { return gbp_engine_features(); }

const char *gpubp_codec_versions(void) { return gbp_engine_codec_versions(); }

const char *gpubp_strerror(int status)
{
    switch (status) {
    case GPUBP_OK: return "success";
    case GPUBP_END_OF_STREAM: return "end of stream";
    case GPUBP_NOT_READY: return "not ready";
    case GPUBP_ERR_INVALID_ARG: return "invalid argument";
    case GPUBP_ERR_NOT_FOUND: return "not found";
    case GPUBP_ERR_INVALID_SELECTION: return "invalid selection";
    case GPUBP_ERR_INVALID_DIMS: return "invalid number of dimensions";
    case GPUBP_ERR_INVALID_STEP: return "invalid step";
    case GPUBP_ERR_WRONG_MODE: return "call not allowed in this mode or state";
    case GPUBP_ERR_TYPE_MISMATCH: return "type mismatch";
    case GPUBP_ERR_FORMAT: return "damaged or inconsistent BP4, BP5 or BP3 dataset";
    case GPUBP_ERR_NOT_BP4: return "not a BP4 dataset";
    case GPUBP_ERR_BP5: return "an ADIOS2 BP5 dataset (read only: BP4 steps cannot be added)";
    case GPUBP_ERR_IO: return "I/O error";
    case GPUBP_ERR_NOMEM: return "out of memory";
    case GPUBP_ERR_NOT_SUPPORTED: return "not supported";
    case GPUBP_ERR_DEVICE: return "GPU runtime error";
    case GPUBP_ERR_MEMORY_SPACE: return "pointer in the wrong memory space";
    case GPUBP_ERR_PARAM: return "invalid parameter";
    case GPUBP_ERR_EXISTS: return "already defined";
    case GPUBP_ERR_CODEC: return "unsupported compression operator or codec";
    case GPUBP_ERR_UNSUPPORTED_TYPE: return "unsupported type";
    case GPUBP_ERR_INTERNAL: return "internal error";
    default: return "unknown status";
    }
}

const char *gpubp_last_error(void) { return gbp_error_message(); }

int gpubp_last_errno(void) { return gbp_error_native(); }

size_t gpubp_type_size(gpubp_type type) { return gbp_type_size(type); }

const char *gpubp_type_name(gpubp_type type) { return gbp_type_name(type); }

int gpubp_long_double_from_double(void *dst, double x)
{
    GBP_CHECK_ARG(dst);
    gbp_ld_from_double(dst, x);
    return GPUBP_OK;
}

int gpubp_long_double_to_double(const void *src, double *x)
{
    GBP_CHECK_ARG(src);
    GBP_CHECK_ARG(x);
    *x = gbp_ld_to_double(src);
    return GPUBP_OK;
}
