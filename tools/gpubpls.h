/*
 * gpubpls internals: shared by tools/gpubpls*.c only. The tool is a client of the public API
 * (<gpubp.h>); nothing here reaches into the library.
 *
 * Output follows ADIOS2's bpls byte for byte for BP4 datasets: the same column widths, number
 * formatting, index notation and block listing. docs/gpubpls.md describes the behaviour.
 */
#ifndef GPUBPLS_H
#define GPUBPLS_H

#include <gpubp.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Dimensions a -s/-c spec may give (bpls: MAX_DIMS). */
#define LS_SPEC_DIMS 16
/* Dimensions a variable may have, plus the step dimension. */
#define LS_MAX_DIMS 33
/* Elements read by one get while dumping (bpls: 10 MiB of data per read). */
#define LS_READ_BYTES (10u * 1024u * 1024u)

/* Outcomes of the listing functions. LS_STOP is bpls's "stop listing, exit 0" for a selection it
 * cannot print (the message is already on stdout); LS_FAIL is a library or system failure (the
 * message is already on stderr). */
enum { LS_OK = 0, LS_STOP = -1, LS_FAIL = -2 };

typedef struct ls_options {
    bool longopt;       /* -l: values of scalars and attributes, min/max of arrays */
    bool listattrs;     /* -a: attributes too */
    bool attrsonly;     /* -A: attributes only */
    bool dump;          /* -d: dump data */
    bool use_regexp;    /* -e: masks are extended regular expressions */
    bool timestep;      /* -t: step by step, through GPUBP_MODE_READ */
    bool noindex;       /* -y: no indices in dumps */
    bool byte_as_char;  /* -S: 8-bit integer arrays as strings */
    bool decomp;        /* -D: blocks per step */
    bool show_version;  /* -V */
    bool list_meshes;   /* -m */
    int verbose;        /* -v, counted */
    int ncols;          /* -n: values per dump line */
    const char *format; /* -f: printf format of one data item, or NULL */
    const char *outpath;
    const char *path;   /* the dataset */
    char **masks;       /* name patterns */
    size_t nmasks;
    int64_t istart[LS_MAX_DIMS]; /* -s, negative = from the end (python style) */
    int64_t icount[LS_MAX_DIMS]; /* -c, -1 = to the end */
} ls_options;

/* One variable as the listing sees it. */
typedef struct ls_var {
    gpubp_variable *v;
    const char *name;
    gpubp_type type;
    gpubp_shape_kind kind;
    size_t ndims;  /* array dims in row-major (file) order; 1 for local values; 0 for values */
    size_t nsteps; /* steps of the variable; 1 in -t mode */
    size_t esize;  /* bytes of one element; 0 for strings */
} ls_var;

/* The dataset steps in which one variable appears (see ls_abs_step). */
typedef struct ls_stepmap_entry {
    char *name;
    size_t *steps;
    size_t n, cap;
} ls_stepmap_entry;

/* One run of the tool. */
typedef struct ls_ctx {
    ls_options opt;
    FILE *out;
    char commentchar;   /* ' ', or ';' with -y */
    gpubp_file *f;
    bool random_access; /* GPUBP_MODE_READ_RANDOM_ACCESS (everything but -t) */
    size_t file_steps;
    int nextcol;        /* column of the next dumped value (a line may span reads) */
    /* Absolute steps of variables that skip steps, found once on demand (see ls_abs_step). */
    bool stepmap_done;
    ls_stepmap_entry *stepmap; /* sorted by name */
    size_t stepmap_n, stepmap_cap;
} ls_ctx;

/* ---- gpubpls.c ------------------------------------------------------------------------------ */

/* Reports a failed library call on stderr (with gpubp_last_error()) and returns LS_FAIL. */
int ls_lib_error(const ls_ctx *c, int status, const char *what, const char *name);

/* Reports a failed allocation on stderr and returns LS_FAIL. */
int ls_nomem(void);

/* ---- gpubpls_print.c: formatting of single values ------------------------------------------ */

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

/* ---- gpubpls_dump.c: shapes, blocks, data ----------------------------------------------------- */

/* The steps of v to read from: [step, step + n) in random access; nothing in -t mode. */
int ls_select_steps(ls_ctx *c, const ls_var *v, size_t step, size_t n);

/* The array shape of v at relative step `step` (the current step in -t mode). */
int ls_var_shape(ls_ctx *c, const ls_var *v, size_t step, size_t *dims);

/* The variable's shape as bpls keeps it after opening: the last step's shape (global arrays),
 * the first block's count (local arrays). */
int ls_var_last_shape(ls_ctx *c, const ls_var *v, size_t *dims);

/* The shape over all steps, 0 where a dimension changes ("__"); *nblocks for local arrays. */
int ls_global_signature(ls_ctx *c, const ls_var *v, size_t *dims);
int ls_local_signature(ls_ctx *c, const ls_var *v, size_t *nblocks, size_t *dims);

/* The data dump of a global array or value (bpls readVar). */
int ls_read_var(ls_ctx *c, const ls_var *v);

/* The block listing (-D), with the data of each block when dumping (bpls print_decomp). */
int ls_print_decomp(ls_ctx *c, const ls_var *v);

/* Prints the value of block b of a single value (global or local) at relative step `step`. */
int ls_print_block_value(ls_ctx *c, const ls_var *v, size_t step, size_t b, bool allowformat);

/* The step of the dataset (0-based) that is relative step `rel` of v. */
size_t ls_abs_step(ls_ctx *c, const ls_var *v, size_t rel);

/* Frees what the context holds (not the file). */
void ls_ctx_free(ls_ctx *c);

#endif /* GPUBPLS_H */
