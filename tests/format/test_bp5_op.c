/* The names of operator buffers (lib/format/bp5_op.c bp5_op_name), as ADIOS2 names them for
 * `bpls --list_operators`: every operator type byte of ADIOS2 2.12 (core::Operator::OperatorType),
 * a plugin operator's LIBRARY(NAME) from its header's parameters (PluginLibrary, PluginName; in
 * any order, among others), "plugin" when the header lacks them or is cut, bytes ADIOS2 does not
 * know, and the errors: an empty buffer, a name longer than the room given. */
#include <stdio.h>
#include <string.h>

#include "format/bp5_op.h"
#include "support/test_support.h"

static void expect(const uint8_t *p, size_t n, const char *want)
{
    char name[600] = "?";
    TS_OK(bp5_op_name(p, n, name, sizeof name));
    assert_string_equal(name, want);
}

static void test_types(void **state)
{
    (void)state;
    static const struct { uint8_t t; const char *name; } known[] = {
        {0, "blosc"},       {1, "bzip2"},  {2, "libpressio"}, {3, "mgard"},  {4, "png"},
        {5, "sirius"},      {6, "sz"},     {7, "zfp"},        {8, "mgardplus"}, {9, "bigwhoop"},
        {10, "mgard_complex"}, {11, "sz3"}, {41, "mdr"},      {42, "prodm"}, {45, "caesar"},
        {53, "plugin"},     {127, "null"}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        uint8_t b[4] = {known[i].t, 1, 0, 0};
        expect(b, known[i].t == 53 ? 4 : 1, known[i].name);
    }
    uint8_t u[4] = {200, 0, 0, 0};
    expect(u, 4, "unknown (type 200)");
    u[0] = 12;
    expect(u, 1, "unknown (type 12)");
    char name[8];
    TS_ERR(bp5_op_name(u, 0, name, sizeof name), GPUBP_ERR_FORMAT);
    u[0] = 11; /* "sz3" needs 4 bytes */
    TS_ERR(bp5_op_name(u, 1, name, 3), GPUBP_ERR_INVALID_ARG);
    assert_non_null(strstr(gpubp_last_error(), "needs 4 bytes"));
    TS_OK(bp5_op_name(u, 1, name, 4));
    assert_string_equal(name, "sz3");
}

/* a plugin header: 4 common bytes, then count and (u8 length, key, u8 length, value) pairs */
static size_t plugin(uint8_t *b, const char *const *kv, int n)
{
    size_t at = 0;
    b[at++] = 53;
    b[at++] = 1;
    b[at++] = 0;
    b[at++] = 0;
    b[at++] = (uint8_t)n;
    for (int i = 0; i < 2 * n; i++) {
        size_t l = strlen(kv[i]);
        b[at++] = (uint8_t)l;
        memcpy(b + at, kv[i], l);
        at += l;
    }
    return at;
}

static void test_plugin(void **state)
{
    (void)state;
    uint8_t b[1024];
    const char *kv[] = {"PluginName", "MyOp", "PluginLibrary", "my_op_lib", "level", "3"};
    size_t n = plugin(b, kv, 3);
    b[n++] = 0xAB; /* the plugin's own bytes follow */
    expect(b, n, "my_op_lib(MyOp)");
    const char *kv2[] = {"x", "", "PluginLibrary", "L", "PluginName", "N"};
    n = plugin(b, kv2, 3);
    expect(b, n, "L(N)");
    for (size_t cut = 0; cut < n; cut++) /* a cut header: never read past, named "plugin" */
        expect(b, cut ? cut : 1, "plugin");
    const char *kv3[] = {"PluginName", "OnlyName"};
    n = plugin(b, kv3, 1);
    expect(b, n, "plugin");
    b[4] = 200; /* more parameters than the buffer holds */
    expect(b, n, "plugin");
    char small[4];
    n = plugin(b, kv, 3);
    TS_ERR(bp5_op_name(b, n, small, sizeof small), GPUBP_ERR_INVALID_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_types), cmocka_unit_test(test_plugin)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
