/* A parser of the text that ADIOS2's bpls prints: `bpls -d` (values), `bpls -D` (blocks) and
 * `bpls -la` (min/max and attributes), into one dump_set per dataset. The checks against a
 * dataset read through libgpubp are bpls_dump.h's. */
#ifndef GPUBP_TEST_BPLS_PARSE_H
#define GPUBP_TEST_BPLS_PARSE_H

#include <stddef.h>

#define DUMP_MAXDIMS 16

typedef enum { DV_GLOBAL_ARRAY, DV_SCALAR, DV_LOCAL_ARRAY, DV_ATTRIBUTE } dump_kind;

typedef struct dump_block {
    size_t step;
    size_t ndims;
    size_t start[DUMP_MAXDIMS], count[DUMP_MAXDIMS];
    char *value;      /* -D of a single value: the printed value ("= v"), else NULL */
    int null_box;     /* bpls printed "[null]": a block with a zero count */
    char **tok;       /* -d of a local array: the block's values, in order */
    size_t ntok;
} dump_block;

typedef struct dump_var {
    char type[32];
    char name[4096];
    dump_kind kind;
    size_t nsteps;               /* the "N*" prefix, 1 when absent */
    size_t ndims;
    size_t shape[DUMP_MAXDIMS];  /* global arrays; 0 where bpls prints "__" */
    int changing;                /* a "__" in the shape of a global array */
    dump_block *blocks;          /* from -D */
    size_t nblocks;
    dump_block *dblocks;         /* from -d, local arrays: blocks with their values */
    size_t ndblocks;
    char **vals;                 /* from -d: global arrays (steps x shape) and single values */
    size_t nvals;
    int have_values;
    char *min, *max;             /* from -la (variables) */
    int no_minmax;               /* -la printed no min/max (BP5: complex types, strings) */
    char **attr;                 /* from -la (attributes): the elements */
    size_t nattr;
    int attr_is_list;            /* printed as {a, b} */
} dump_var;

typedef struct dump_set {
    dump_var *vars;
    size_t n;
    int have_d, have_blocks, have_la;
} dump_set;

/* Parses prefix.d.txt, prefix.blocks.txt and prefix.la.txt (those that exist). Returns 0 on
 * success, -1 (message on stderr) on a parse error. */
int dump_load(dump_set *ds, const char *prefix);
void dump_free(dump_set *ds);
dump_var *dump_find(dump_set *ds, const char *name);

#endif
