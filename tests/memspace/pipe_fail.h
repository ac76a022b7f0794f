/* The staging pipeline under failures, queued commits and the pinned-pool cache: cases of test_memspace_pipeline (test_pipeline.c runs them). */
#ifndef GPUBP_TESTS_PIPE_FAIL_H
#define GPUBP_TESTS_PIPE_FAIL_H

void failure_mid_copy(void **state);
void commits_after_writes(void **state);
void handed_on_slot_keeps_pending_reads(void **state);
void failure_mid_write_and_read(void **state);
void failure_pinned_alloc(void **state);
void pool_cache(void **state);

#endif
