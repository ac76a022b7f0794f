/* Header test, C11: this file includes <gpubp.h> and nothing else, so the header must be
 * self-contained, strict C11 (-std=c11 -pedantic-errors) and free of warnings. It is included twice
 * to check the include guard. header_main.c runs the checks and prints the first failure. */
#include <gpubp.h>
#include <gpubp.h>

#if defined(ZLIB_VERSION) || defined(MPI_VERSION) || defined(CUDART_VERSION) || \
    defined(__CUDA_RUNTIME_H__)
#error "gpubp.h must not include zlib, MPI or CUDA headers"
#endif

/* Pinned values (the contract): statuses and the BP4 type ids. */
_Static_assert(GPUBP_OK == 0, "GPUBP_OK is 0");
_Static_assert(GPUBP_END_OF_STREAM > 0 && GPUBP_NOT_READY > 0, "step outcomes are positive");
_Static_assert(GPUBP_END_OF_STREAM != GPUBP_NOT_READY, "distinct step outcomes");
_Static_assert(GPUBP_ERR_INVALID_ARG < 0 && GPUBP_ERR_INTERNAL < 0, "errors are negative");
_Static_assert(GPUBP_TYPE_INT8 == 0 && GPUBP_TYPE_INT16 == 1 && GPUBP_TYPE_INT32 == 2 &&
               GPUBP_TYPE_INT64 == 4, "BP4 signed type ids");
_Static_assert(GPUBP_TYPE_FLOAT == 5 && GPUBP_TYPE_DOUBLE == 6 && GPUBP_TYPE_STRING == 9 &&
               GPUBP_TYPE_FLOAT_COMPLEX == 10 && GPUBP_TYPE_DOUBLE_COMPLEX == 11,
               "BP4 float, string and complex type ids");
_Static_assert(GPUBP_TYPE_UINT8 == 50 && GPUBP_TYPE_UINT16 == 51 && GPUBP_TYPE_UINT32 == 52 &&
               GPUBP_TYPE_UINT64 == 54, "BP4 unsigned type ids");
_Static_assert(GPUBP_MEM_DETECT != GPUBP_MEM_HOST && GPUBP_MEM_HOST != GPUBP_MEM_GPU,
               "memory spaces are distinct");
_Static_assert(GPUBP_SYNC != GPUBP_DEFERRED, "launch modes are distinct");

static int same(const char *a, const char *b)
{
    if (!a || !b) return 0;
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

#include "header/header_c11.h"

/* Returns NULL when every check passes, else a description of the first failure. */
const char *header_c11_checks(const char *version_h_string)
{
    if (!same(gpubp_version(), GPUBP_VERSION_STRING))
        return "gpubp_version() differs from GPUBP_VERSION_STRING";
    if (!same(version_h_string, GPUBP_VERSION_STRING))
        return "<gpubp/version.h> alone gives another GPUBP_VERSION_STRING";
    if (GPUBP_VERSION_NUMBER !=
        GPUBP_VERSION_MAJOR * 10000 + GPUBP_VERSION_MINOR * 100 + GPUBP_VERSION_PATCH)
        return "GPUBP_VERSION_NUMBER";
    (void)gpubp_features();
    const char *s = gpubp_strerror(GPUBP_ERR_NOT_FOUND);
    if (!s || !*s) return "gpubp_strerror(GPUBP_ERR_NOT_FOUND) is empty";
    if (!same(gpubp_strerror(-12345), "unknown status"))
        return "gpubp_strerror(unknown) is not \"unknown status\"";
    if (!gpubp_last_error()) return "gpubp_last_error() is NULL";
    if (gpubp_type_size(GPUBP_TYPE_INT8) != 1 || gpubp_type_size(GPUBP_TYPE_DOUBLE) != 8 ||
        gpubp_type_size(GPUBP_TYPE_DOUBLE_COMPLEX) != 16 || gpubp_type_size(GPUBP_TYPE_STRING) != 0)
        return "gpubp_type_size";
    if (!same(gpubp_type_name(GPUBP_TYPE_INT32), "int32_t") ||
        !same(gpubp_type_name(GPUBP_TYPE_DOUBLE), "double"))
        return "gpubp_type_name";
    if (gpubp_close(NULL) != GPUBP_OK) return "gpubp_close(NULL) is not GPUBP_OK";
    if (gpubp_open(NULL, "header_test.bp", GPUBP_MODE_READ, NULL) != GPUBP_ERR_INVALID_ARG)
        return "gpubp_open(NULL out) is not GPUBP_ERR_INVALID_ARG";
    s = gpubp_last_error();
    if (!s || !*s) return "gpubp_open(NULL out) left no message in gpubp_last_error()";
    gpubp_file *f = 0;
    if (gpubp_open(&f, 0, GPUBP_MODE_READ, 0) != GPUBP_ERR_INVALID_ARG || f != 0)
        return "gpubp_open(NULL path) is not GPUBP_ERR_INVALID_ARG with *out NULL";
    return 0;
}
