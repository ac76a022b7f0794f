/* tests/header/header_c11.h: see header_c11.c. */
#ifndef GBP_TEST_HEADER_C11_H
#define GBP_TEST_HEADER_C11_H

/* The checks of <gpubp.h> as C11: NULL when all pass, else the first failure. */
const char *header_c11_checks(const char *version_h_string);

#endif /* GBP_TEST_HEADER_C11_H */
