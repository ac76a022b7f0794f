/* GPUBP_TEST_ONLY=PATTERN runs only the CMocka cases whose names match it (CMocka's filter: `*`
 * and `?`), e.g. one case of a GPU program under compute-sanitizer. Compiled into every program
 * of gpubp_add_test (tests/CMakeLists.txt): a constructor in the support library would not be
 * linked into programs that use nothing else of its file. */
#include "support/test_only.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

__attribute__((constructor)) void ts_test_only_from_env(void)
{
    const char *p = getenv("GPUBP_TEST_ONLY");
    if (p && *p) cmocka_set_test_filter(p);
}
