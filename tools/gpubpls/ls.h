/*
 * tools/gpubpls/ls.h: what every file of gpubpls shares: the options, a variable as the listing
 * sees it, the context of one run, and the error reports (ls.c). The tool is a client of the
 * public API (<gpubp.h>); nothing here reaches into the library.
 *
 * Files, each calling only those below it: gpubpls.c (main, listing) -> ls_opts.c (options,
 * masks), ls_expr.c (derived expressions as bpls prints them) and ls_dump.c (shapes, blocks, data)
 * -> ls_steps.c (dataset steps of a variable's steps) and ls_print.c (formatting of values) ->
 * ls.c (errors, the context, growing arrays).
 *
 * Output follows ADIOS2's bpls byte for byte for BP4 and BP5 datasets: the same column widths,
 * number formatting, index notation and block listing, and where bpls presents the two formats
 * differently (BP5: relative step numbers, no min/max for complex, char and string, "N/A" for
 * missing statistics), the format's presentation. docs/gpubpls.md describes the behaviour.
 */
#ifndef GPUBPLS_LS_H
#define GPUBPLS_LS_H

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
 * message is already on stderr). A failure ends the entry it happened in, never the listing: the
 * next variable or attribute is listed and the tool exits 1 at the end (ls_ctx.failed).
 * LS_ABORT is bpls's caught exception (BP5: data of a variable written as statistics only): its
 * report is on stdout and the listing stops with exit 1. */
enum { LS_OK = 0, LS_STOP = -1, LS_FAIL = -2, LS_ABORT = -3 };

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
    bool show_derived;  /* --show-derived: a derived variable's expression under its line */
    bool list_operators; /* --list_operators: the operators used, after the listing */
    bool ignore_flatten; /* --ignore_flatten: BP5 steps as written (IgnoreFlattenSteps) */
    char select_steps[1024]; /* -P SelectSteps=...: BP5 steps read (ADIOS2's syntax), or "" */
    char engine[4];     /* -E BP3, BP4 or BP5: the dataset must be one; "" (BPFile, File, ...) any */
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
    bool bp5;           /* an ADIOS2 BP5 dataset: bpls's BP5 presentation (ls_dump.h) */
    size_t bp5_last_writers; /* BP5 whose writer count changes: the last step's (ADIOS2's
                              * min/max counts only those writers in every step), else 0 */
    size_t file_steps;
    /* The count of the last piece read of the local array being listed with -dD (ADIOS2's
     * Variable::m_Count after bpls's SetSelection; BP5 block widths follow it), valid when
     * sel_set */
    bool sel_set;
    uint64_t sel_count[LS_MAX_DIMS];
    int nextcol;        /* column of the next dumped value (a line may span reads) */
    bool failed;        /* an entry could not be listed (the message is on stderr): exit 1 once
                         * the listing is complete */
    /* Absolute steps of variables that skip steps, found once on demand (see ls_abs_step). */
    bool stepmap_done;
    ls_stepmap_entry *stepmap; /* sorted by name */
    size_t stepmap_n, stepmap_cap;
    /* --list_operators: the variables whose data was dumped (bpls no longer lists the operator
     * of a variable it has read: its reader then knows the operator) */
    char **dumped;
    size_t ndumped, capdumped;
} ls_ctx;

/* Reports a failed library call on stderr (with gpubp_last_error()) and returns LS_FAIL. */
int ls_lib_error(const ls_ctx *c, int status, const char *what, const char *name);

/* Reports a failed allocation on stderr and returns LS_FAIL. */
int ls_nomem(void);

/* Makes room for `need` elements of `size` bytes in *arr (*cap allocated; capacities double from
 * `first`): 0, or 1 when out of memory (*arr unchanged). */
int ls_grow(void **arr, size_t *cap, size_t need, size_t size, size_t first);

/* Frees what the context holds (not the file). */
void ls_ctx_free(ls_ctx *c);

#endif /* GPUBPLS_LS_H */
