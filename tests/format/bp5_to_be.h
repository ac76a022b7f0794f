/* tests/format: a little-endian BP5 dataset rewritten as a big-endian writer lays it out
 * (bp5_to_be.c says what is converted). */
#ifndef GBP_TEST_BP5_TO_BE_H
#define GBP_TEST_BP5_TO_BE_H

#include <stddef.h>

/* Writes the big-endian encoding of dataset src into the folder dst (created). Returns 0, -2
 * when src holds what cannot be converted (operators, long double; *why says which), -1 on an
 * error (*why). */
int bp5_to_be(const char *src, const char *dst, char *why, size_t wn);

#endif
