/*
 * tools/gpubpls/ls_opts.h: the command line of gpubpls (ls_opts.c): bpls's options, long and short
 * (combined flags such as -la, values attached or in the next argument), the -s/-c index specs,
 * and the masks that select the names to list (shell patterns, or extended regular expressions
 * with -e). Used by gpubpls.c only; it calls ls.c.
 */
#ifndef GPUBPLS_LS_OPTS_H
#define GPUBPLS_LS_OPTS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "gpubpls/ls.h"

/* What the command line gave beside ls_options: the -s/-c specs, parsed once the dataset is
 * known to be listed (ls_parse_specs), and whether --help was printed. */
typedef struct ls_args {
    const char *start;
    const char *count;
    bool help;
} ls_args;

/* The compiled masks of -e (n of them compiled). */
typedef struct ls_masks {
    regex_t *re;
    size_t n;
} ls_masks;

/* bpls's command line into o and a: options anywhere; the first other argument is the file, the
 * rest are masks. Prints the help for -h. Returns 0, or the exit status (1: a bad option). */
int ls_parse_args(ls_options *o, ls_args *a, int argc, char **argv);

/* The -s and -c specs of a into o->istart and o->icount. Exits with 200 on a value out of range
 * or too many dimensions, as bpls. */
void ls_parse_specs(ls_options *o, const ls_args *a);

/* Compiles the masks of o as extended regular expressions matching whole names. Returns 0, 1 (no
 * memory) or 2 (a bad expression, reported on stderr); m is freed by ls_free_masks either way. */
int ls_compile_masks(const ls_options *o, ls_masks *m);
void ls_free_masks(ls_masks *m);

/* Whether name matches one of o's masks (all names when there are none). */
bool ls_matches_a_mask(const ls_options *o, const ls_masks *m, const char *name);

#endif /* GPUBPLS_LS_OPTS_H */
