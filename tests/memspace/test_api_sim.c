/* The GPU cases of tests/support/device_cases.h through the public API, against the simulated device
 * ("device=simulated"): the pipeline, layouts, deferred puts and failure handling run in CI. */
#include <string.h>

#include "support/device_cases.h"

static void *sim_alloc(size_t n) { return gbp_sim_alloc(n); }
static void sim_free(void *p) { gbp_sim_free(p); }
static void sim_h2d(void *d, const void *h, size_t n) { memcpy(d, h, n); }
static void sim_d2h(void *h, const void *d, size_t n) { memcpy(h, d, n); }

static const tdev sim_dev = {"simulated", "device=simulated", sim_alloc, sim_free, sim_h2d,
                             sim_d2h, 1};
const tdev *td = &sim_dev;

static int slow_device(void **state)
{
    (void)state;
    gbp_sim_set_delay_us(20); /* copies complete late: the pipeline must wait for them */
    return 0;
}

static int reset_device(void **state)
{
    (void)state;
    gbp_sim_reset();
    return 0;
}

/* the cases above went through the simulated device's pipeline, not around it */
static void pipeline_was_used(void **state)
{
    (void)state;
    gbp_sim_stats st;
    gbp_sim_get_stats(&st);
    printf("sim: %ld copies, %ld reductions, %llu bytes\n", st.copies, st.reductions, st.bytes);
    assert_true(st.copies > 50);
    assert_true(st.reductions > 12);
    assert_true(st.bytes > (unsigned long long)50 << 20);
    assert_int_equal(st.pinned_live, 0); /* every pool was freed at close */
}

int main(void)
{
    const struct CMUnitTest tests[] = {TC_ALL_CASES, cmocka_unit_test(pipeline_was_used)};
    int rc = cmocka_run_group_tests_name("simulated device", tests, NULL, NULL);
    const struct CMUnitTest slow[] = {cmocka_unit_test(tc_steps_flip),
                                      cmocka_unit_test(tc_big_blocks_subbox),
                                      cmocka_unit_test(tc_deferred)};
    rc |= cmocka_run_group_tests_name("simulated device, slow copies", slow, slow_device,
                                      reset_device);
    return rc;
}
