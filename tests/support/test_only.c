/* Two environment hooks compiled into every program of gpubp_add_test (tests/CMakeLists.txt): a
 * constructor in the support library would not be linked into programs that use nothing else of
 * its file.
 * - GPUBP_TEST_ONLY=PATTERN runs only the CMocka cases whose names match it (CMocka's filter: `*`
 *   and `?`), e.g. one case of a GPU program under compute-sanitizer.
 * - GPUBP_TEST_BACKTRACE=1 prints the call stack (glibc's backtrace: module+offset, for addr2line)
 *   on stderr when the program dies of SIGABRT, SIGSEGV or SIGBUS, then dies of the signal as
 *   before: where glibc found a corrupted heap, when no debugger is at hand (the GPU machine).
 *   GPUBP_TEST_BACKTRACE=raise does the same and raises SIGABRT at once (the hook's own test,
 *   ctest test_support_backtrace). */
#include "support/test_only.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef __GLIBC__
#include <execinfo.h>

static void ts_backtrace_on_signal(int sig)
{
    static const char head[] = "\ngpubp-test: fatal signal, call stack:\n";
    void *frames[64];
    int n = backtrace(frames, 64);
    (void)!write(STDERR_FILENO, head, sizeof head - 1);
    backtrace_symbols_fd(frames, n, STDERR_FILENO); /* no malloc: safe in a handler */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void ts_backtrace_from_env(void)
{
    const char *p = getenv("GPUBP_TEST_BACKTRACE");
    int now = p && strcmp(p, "raise") == 0;
    if (!p || (strcmp(p, "1") != 0 && !now)) return;
    void *warm[1];
    (void)backtrace(warm, 1); /* loads libgcc now, not inside the handler */
    static const int sigs[] = {SIGABRT, SIGSEGV, SIGBUS};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], ts_backtrace_on_signal);
    if (now) raise(SIGABRT);
}
#else
static void ts_backtrace_from_env(void) {}
#endif

__attribute__((constructor)) void ts_test_only_from_env(void)
{
    const char *p = getenv("GPUBP_TEST_ONLY");
    if (p && *p) cmocka_set_test_filter(p);
    ts_backtrace_from_env();
}
