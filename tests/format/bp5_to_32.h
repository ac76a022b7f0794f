/* tests/format: a 64-bit writer's BP5 dataset rewritten as a 32-bit writer lays it out
 * (bp5_to_32.c says what changes). */
#ifndef GBP_TEST_BP5_TO_32_H
#define GBP_TEST_BP5_TO_32_H

#include <stddef.h>

/* Writes the 32-bit-writer encoding of dataset src into the folder dst (created). Returns 0, -2
 * when src holds what the format description does not lay out for a 32-bit writer (long double;
 * *why says so), -1 on an error (*why). */
int bp5_to_32(const char *src, const char *dst, char *why, size_t wn);

#endif
