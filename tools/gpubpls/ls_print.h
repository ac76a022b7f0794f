/* tools/gpubpls/ls_print.h: formatting of single values and of data dumps, as bpls prints them
 * (ls_print.c). Output goes to the context's stream. */
#ifndef GPUBPLS_LS_PRINT_H
#define GPUBPLS_LS_PRINT_H

#include "gpubpls/ls.h"

/* Checks a -f format: conversions of d i o u x X e E f F g G a A c s and %%, with flags, width and
 * precision, no '*' and no 'n'. Returns 0, or -1 with a message in msg. */
int ls_format_check(const char *fmt, char *msg, size_t msgsize);

/* Prints element `item` of data (type t) as bpls's print_data does. With allowformat the -f
 * format applies and floats print with %g; without it (min/max, attributes, -l values) floats
 * outside (-10000, 100000) print with %e. Strings: data is an array of `const char *`. */
void ls_print_value(ls_ctx *c, gpubp_type t, const void *data, size_t item, bool allowformat);

/* Prints a slice of a dump: c[0]*...*c[tdims-1] elements in row-major order whose first index is
 * s, with indices at the start of each line (width ndigits per dimension) and ncols per line. */
void ls_print_dataset(ls_ctx *c, const void *data, gpubp_type t, const uint64_t *s,
                      const uint64_t *cnt, int tdims, const int *ndigits);

/* Ends a dump: a newline unless the last line is complete. */
void ls_print_endline(ls_ctx *c);

/* Digits of n in decimal. */
int ls_ndigits(uint64_t n);

#endif /* GPUBPLS_LS_PRINT_H */
