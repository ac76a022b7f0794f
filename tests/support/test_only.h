/* tests/support/test_only.h: see test_only.c. */
#ifndef GPUBP_TESTS_SUPPORT_TEST_ONLY_H
#define GPUBP_TESTS_SUPPORT_TEST_ONLY_H

/* Sets CMocka's case filter from GPUBP_TEST_ONLY (nothing when it is unset or empty) and, with
 * GPUBP_TEST_BACKTRACE=1, the fatal-signal handler that prints the call stack. Runs by itself
 * before main in every program of gpubp_add_test; callable again (idempotent). */
void ts_test_only_from_env(void);

#endif
