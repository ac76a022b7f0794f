// Header test, C++: <gpubp.h> comes first and alone (then <gpubp/cuda.h>), compiled with
// -pedantic-errors -Wall -Wextra -Werror as C++11 and C++20, then linked (extern "C" linkage) and
// called.
#include <gpubp.h>
#include <gpubp/cuda.h>

#include <cstdio>
#include <cstring>

static_assert(GPUBP_OK == 0, "GPUBP_OK is 0");
static_assert(GPUBP_TYPE_DOUBLE == 6 && GPUBP_TYPE_UINT64 == 54, "BP4 type ids");

namespace {

const char *checks()
{
    if (std::strcmp(gpubp_version(), GPUBP_VERSION_STRING) != 0)
        return "gpubp_version() differs from GPUBP_VERSION_STRING";
    const gpubp_type t = GPUBP_TYPE_FLOAT;
    if (gpubp_type_size(t) != sizeof(float)) return "gpubp_type_size(GPUBP_TYPE_FLOAT)";
    if (std::strcmp(gpubp_type_name(GPUBP_TYPE_INT64), "int64_t") != 0) return "gpubp_type_name";
    const char *s = gpubp_strerror(GPUBP_ERR_INVALID_SELECTION);
    if (s == nullptr || *s == '\0') return "gpubp_strerror";
    if (gpubp_close(nullptr) != GPUBP_OK) return "gpubp_close(nullptr)";
    gpubp_file *f = nullptr;
    const gpubp_mode m = GPUBP_MODE_READ_RANDOM_ACCESS;
    if (gpubp_open(&f, nullptr, m, nullptr) != GPUBP_ERR_INVALID_ARG || f != nullptr)
        return "gpubp_open(nullptr path) is not GPUBP_ERR_INVALID_ARG with *out nullptr";
    if (gpubp_last_error() == nullptr) return "gpubp_last_error() is nullptr";
    if (gpubp_set_stream(nullptr, nullptr) != GPUBP_ERR_INVALID_ARG)
        return "gpubp_set_stream(nullptr file) is not GPUBP_ERR_INVALID_ARG";
    gpubp_memory_space space = GPUBP_MEM_DETECT;
    gpubp_launch launch = GPUBP_DEFERRED;
    gpubp_shape_kind kind = GPUBP_SHAPE_LOCAL_ARRAY;
    (void)space;
    (void)launch;
    (void)kind;
    (void)gpubp_features();
    return nullptr;
}

} // namespace

int main()
{
    const char *why = checks();
    if (why != nullptr) {
        std::fprintf(stderr, "header_cxx (C++%ld): %s\n", static_cast<long>(__cplusplus), why);
        return 1;
    }
    std::printf("header_cxx (C++%ld): ok\n", static_cast<long>(__cplusplus));
    return 0;
}
