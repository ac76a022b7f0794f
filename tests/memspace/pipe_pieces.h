/* The staging pipeline with chunks copied in pieces, slot hazards and refused copies: cases of test_memspace_pipeline (test_pipeline.c runs them). */
#ifndef GPUBP_TESTS_PIPE_PIECES_H
#define GPUBP_TESTS_PIPE_PIECES_H

void transfers_in_pieces(void **state);
void writes_share_slots(void **state);
void files_wait_for_slots(void **state);
void reads_reuse_slots_in_pieces(void **state);
void failure_in_pieces(void **state);
void hazard_check(void **state);
void refused_copies_and_events(void **state);

#endif
