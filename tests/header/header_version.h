/* tests/header/header_version.h: see header_version.c. */
#ifndef GBP_TEST_HEADER_VERSION_H
#define GBP_TEST_HEADER_VERSION_H

/* GPUBP_VERSION_STRING as <gpubp/version.h> alone defines it. */
const char *header_version_string(void);

#endif /* GBP_TEST_HEADER_VERSION_H */
