/*
 * gpubpls: lists and dumps BP4 and BP5 datasets the way ADIOS2's bpls does, through libgpubp's
 * public API.
 *
 * Outline: parse the options (ls_opts.c: bpls's names, combined short flags such as -la), open
 * the dataset in random-access mode (or READ mode for -t, following steps), merge variables and
 * attributes into one sorted listing, and for each entry that matches a mask print its line, then
 * its blocks (-D) or data (-d). Column widths, number formats and messages follow bpls so that its
 * users' scripts keep working; docs/gpubpls.md lists the differences.
 *
 * Exit status (as bpls): 0 success; 1 bad options or a read failure (a variable or attribute that
 * cannot be read is reported on stderr and the listing goes on); 2 a bad regular expression;
 * 4 a path that does not exist or cannot be opened as BP4 or BP5, or masks that matched nothing;
 * 30 an output file that cannot be created; 200 a bad -s/-c spec.
 */
#include "gpubpls/ls.h"
#include "gpubpls/ls_dump.h"
#include "gpubpls/ls_expr.h"
#include "gpubpls/ls_opts.h"
#include "gpubpls/ls_print.h"
#include "gpubpls/ls_shape.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- attributes ----------------------------------------------------------------------------- */

static int print_attribute_value(ls_ctx *c, const char *name)
{
    gpubp_type t;
    size_t n;
    int is_array;
    int rc = gpubp_inquire_attribute(c->f, name, &t, &n, &is_array);
    if (rc < 0)
        return ls_lib_error(c, rc, "reading attribute", name);
    void *data = NULL;
    if (t != GPUBP_TYPE_STRING) {
        data = malloc(n * gpubp_type_size(t) + 1);
        if (!data)
            return ls_nomem();
        if ((rc = gpubp_attribute_data(c->f, name, data)) < 0) {
            free(data);
            return ls_lib_error(c, rc, "reading attribute", name);
        }
    }
    if (is_array)
        fputc('{', c->out);
    for (size_t j = 0; j < n; j++) {
        if (t == GPUBP_TYPE_STRING) {
            const char *s;
            if ((rc = gpubp_attribute_string(c->f, name, j, &s)) < 0)
                return ls_lib_error(c, rc, "reading attribute", name);
            ls_print_value(c, t, &s, 0, false);
        } else {
            ls_print_value(c, t, data, j, false);
        }
        if (j + 1 < n)
            fputs(", ", c->out);
    }
    if (is_array)
        fputc('}', c->out);
    free(data);
    return LS_OK;
}

/* ---- variables ------------------------------------------------------------------------------ */

static int open_var(ls_ctx *c, const char *name, ls_var *v)
{
    memset(v, 0, sizeof *v);
    int rc = gpubp_inquire_variable(&v->v, c->f, name);
    if (rc >= 0)
        rc = gpubp_set_memory_space(v->v, GPUBP_MEM_HOST);
    if (rc >= 0)
        rc = gpubp_variable_name(v->v, &v->name);
    if (rc >= 0)
        rc = gpubp_variable_type(v->v, &v->type);
    if (rc >= 0)
        rc = gpubp_variable_shape_kind(v->v, &v->kind);
    if (rc >= 0)
        rc = gpubp_variable_ndims(v->v, &v->ndims);
    if (rc >= 0 && c->random_access)
        rc = gpubp_variable_steps(v->v, &v->nsteps);
    if (rc < 0)
        return ls_lib_error(c, rc, "inquiring variable", name);
    if (!c->random_access)
        v->nsteps = 1;
    if (v->kind == GPUBP_SHAPE_LOCAL_VALUE)
        v->ndims = 1;
    if (v->ndims + 1 > LS_MAX_DIMS) {
        fprintf(stderr, "gpubpls: error: variable %s has %zu dimensions, more than %d\n", name,
                v->ndims, LS_MAX_DIMS - 1);
        return LS_FAIL;
    }
    v->esize = gpubp_type_size(v->type);
    return LS_OK;
}

static void print_dims(ls_ctx *c, const size_t *d, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        fputs(j ? ", " : "{", c->out);
        if (d[j] > 0)
            fprintf(c->out, "%zu", d[j]);
        else
            fputs("__", c->out);
    }
    fputc('}', c->out);
}

/* " = min / max" over all steps, from metadata (ls_var_minmax). */
static int print_minmax(ls_ctx *c, const ls_var *v)
{
    if (!ls_type_has_minmax(c, v->type)) {
        /* BP4: bpls prints the empty strings it keeps for strings; BP5: nothing */
        if (v->type == GPUBP_TYPE_STRING && !c->bp5)
            fputs(" = \"\" / \"\"", c->out);
        return LS_OK;
    }
    unsigned char min[16], max[16];
    bool none;
    int rc = ls_var_minmax(c, v, min, max, &none);
    if (rc != LS_OK)
        return rc;
    if (none && c->bp5) {
        fputs(" = N/A / N/A", c->out);
        return LS_OK;
    }
    fputs(" = ", c->out);
    ls_print_value(c, v->type, min, 0, false);
    fputs(" / ", c->out);
    ls_print_value(c, v->type, max, 0, false);
    return LS_OK;
}

/* Ends the output of an entry that failed with rc inside its header line (in_line) or its data:
 * the line it stopped in is completed, so that the next entry starts on its own line. Returns rc. */
static int end_entry(ls_ctx *c, int rc, bool in_line)
{
    if (rc == LS_FAIL) {
        if (in_line)
            fputc('\n', c->out);
        else
            ls_print_endline(c);
    }
    return rc;
}

/* --list_operators: v's data has been dumped (ls_ctx.dumped) */
static int remember_dumped(ls_ctx *c, const ls_var *v)
{
    char *name = NULL;
    if (!c->opt.list_operators)
        return LS_OK;
    if (ls_grow((void **)&c->dumped, &c->capdumped, c->ndumped + 1, sizeof *c->dumped, 16) ||
        !(name = strdup(v->name)))
        return ls_nomem();
    c->dumped[c->ndumped++] = name;
    return LS_OK;
}

/* The rest of a variable's line, then its blocks (-D) or data (-d); bpls printVariableInfo. */
static int print_variable_info(ls_ctx *c, const ls_var *v)
{
    const ls_options *o = &c->opt;
    size_t d[LS_MAX_DIMS];
    int rc = LS_OK;
    bool single_value = v->nsteps == 1 && v->kind == GPUBP_SHAPE_GLOBAL_VALUE;

    if (!single_value) {
        fputs("  ", c->out);
        if (v->nsteps > 1)
            fprintf(c->out, "%zu*", v->nsteps);
        if (v->kind == GPUBP_SHAPE_LOCAL_ARRAY) {
            size_t nblocks;
            if ((rc = ls_local_signature(c, v, &nblocks, d)) != LS_OK)
                return end_entry(c, rc, true);
            if (nblocks > 0)
                fprintf(c->out, "[%zu]*", nblocks);
            else
                fputs("[__]*", c->out);
            print_dims(c, d, v->ndims);
        } else if (v->kind == GPUBP_SHAPE_GLOBAL_VALUE) {
            fputs("scalar", c->out);
        } else {
            if ((rc = ls_global_signature(c, v, d)) != LS_OK)
                return end_entry(c, rc, true);
            print_dims(c, d, v->ndims);
        }
        /* like bpls, whose min/max failures are caught: the line, blocks and data still follow */
        if (o->longopt && !o->timestep && print_minmax(c, v) == LS_FAIL)
            c->failed = true;
    } else {
        fputs("  scalar", c->out);
        if (o->longopt && !o->timestep) {
            fputs(" = ", c->out);
            if (ls_print_block_value(c, v, 0, 0, false) == LS_FAIL)
                c->failed = true;
        }
    }
    fputc('\n', c->out);

    if (o->decomp && (rc = ls_print_decomp(c, v)) != LS_OK)
        return end_entry(c, rc, false);
    if (o->decomp && o->dump && remember_dumped(c, v) != LS_OK) /* -dD read every block */
        return end_entry(c, LS_FAIL, false);

    const char *expr = NULL;
    if (o->show_derived && gpubp_variable_expression(v->v, &expr) == GPUBP_OK && expr) {
        /* bpls of an ADIOS2 built with derived variables prints its parser's canonical form */
        char *canon = NULL;
        if (ls_expr_canonical(expr, &canon) != 0)
            return end_entry(c, ls_nomem(), false);
        fprintf(c->out, "    Derived variable with expression: %s\n", canon ? canon : expr);
        free(canon);
    }

    if (o->dump && !o->decomp) {
        if (v->kind == GPUBP_SHAPE_LOCAL_ARRAY)
            rc = ls_print_decomp(c, v);
        else
            rc = ls_read_var(c, v);
        if (rc == LS_FAIL || rc == LS_ABORT)
            return end_entry(c, rc, false);
        fputc('\n', c->out);
        if (remember_dumped(c, v) != LS_OK)
            return end_entry(c, LS_FAIL, false);
    }
    return rc;
}

/* ---- listing -------------------------------------------------------------------------------- */

typedef struct entry {
    const char *name;
    bool is_var;
    bool is_struct;
    const char *type;
} entry;

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int r = strcmp(x->name, y->name);
    return r ? r : (int)y->is_var - (int)x->is_var;
}

/* Lists the variables (of the current step in -t mode) and attributes; bpls doList_vars. */
static int list_entries(ls_ctx *c, const ls_masks *m, size_t *matched)
{
    const ls_options *o = &c->opt;
    size_t nv = 0, na = 0;
    const char *const *vnames = NULL, *const *anames = NULL;
    int rc;
    if (!o->attrsonly && (rc = gpubp_available_variables(c->f, &nv, &vnames)) < 0)
        return ls_lib_error(c, rc, "listing variables of", o->path);
    if (o->listattrs && (rc = gpubp_available_attributes(c->f, &na, &anames)) < 0)
        return ls_lib_error(c, rc, "listing attributes of", o->path);

    entry *e = calloc(nv + na + 1, sizeof *e);
    if (!e)
        return ls_nomem();
    size_t n = 0;
    for (size_t i = 0; i < nv; i++) {
        gpubp_variable *v;
        gpubp_type t;
        if ((rc = gpubp_inquire_variable(&v, c->f, vnames[i])) < 0 ||
            (rc = gpubp_variable_type(v, &t)) < 0) {
            free(e);
            return ls_lib_error(c, rc, "inquiring variable", vnames[i]);
        }
        e[n++] = (entry){vnames[i], true, t == GPUBP_TYPE_STRUCT, gpubp_type_name(t)};
    }
    for (size_t i = 0; i < na; i++) {
        gpubp_type t;
        size_t count;
        if ((rc = gpubp_inquire_attribute(c->f, anames[i], &t, &count, NULL)) < 0) {
            free(e);
            return ls_lib_error(c, rc, "inquiring attribute", anames[i]);
        }
        e[n++] = (entry){anames[i], false, false, gpubp_type_name(t)};
    }
    qsort(e, n, sizeof *e, cmp_entry);

    /* a name that is both a variable and an attribute lists as the variable (bpls's map) */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || strcmp(e[k - 1].name, e[i].name) != 0)
            e[k++] = e[i];
    n = k;

    int maxlen = 4, maxtypelen = 7;
    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(e[i].name);
        if (len > maxlen)
            maxlen = len;
        len = (int)strlen(e[i].type);
        if (len > maxtypelen)
            maxtypelen = len;
    }

    rc = LS_OK;
    for (size_t i = 0; i < n && rc != LS_STOP && rc != LS_ABORT; i++) {
        if (!ls_matches_a_mask(o, m, e[i].name))
            continue;
        (*matched)++;
        fprintf(c->out, "%c %-*s  %-*s", c->commentchar, maxtypelen, e[i].type, maxlen,
                e[i].name);
        if (!e[i].is_var) {
            if (o->longopt || o->dump) {
                fputs("  attr   = ", c->out);
                rc = print_attribute_value(c, e[i].name);
                fputc('\n', c->out);
            } else {
                fputs("  attr\n", c->out);
            }
        } else if (e[i].is_struct) {
            /* bpls prints nothing more for a struct variable, not even the end of the line (its
             * printVariableInfo has no struct case): the next entry follows on the same line */
            continue;
        } else {
            ls_var v;
            if ((rc = open_var(c, e[i].name, &v)) == LS_OK)
                rc = print_variable_info(c, &v);
            else
                end_entry(c, rc, true);
        }
        if (rc == LS_FAIL) { /* the message is on stderr: go on with the next entry */
            c->failed = true;
            rc = LS_OK;
        }
    }
    free(e);
    return rc;
}

/* Whether dataset step k is among those -P SelectSteps reads (ADIOS2's rules "first[:last
 * [:stride]]", space-separated, last may be n; "" selects every step). The library applies the
 * same rules (select_steps); a value it refuses fails the open anyway. */
static bool step_selected(const char *rules, uint64_t k)
{
    bool any = false;
    for (const char *s = rules; *s;) {
        char *e;
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        any = true;
        uint64_t a = strtoull(s, &e, 10), b = a, st = 1;
        if (*e == ':' && e[1] && e[1] != ' ' && e[1] != ':')
            b = (e[1] == 'n' || e[1] == 'N') ? (e += 2, UINT64_MAX) : strtoull(e + 1, &e, 10);
        else if (*e == ':')
            e++;
        if (*e == ':' && e[1] && e[1] != ' ')
            st = strtoull(e + 1, &e, 10);
        if (k >= a && k <= b && st && (k - a) % st == 0)
            return true;
        while (*s && *s != ' ')
            s++;
    }
    return !any;
}

/* An ADIOS2 BP5 dataset: a directory whose md.idx header says BP version 5 (byte 37). bpls
 * presents some things differently for BP5 (ls.h); a gpubp:// URL lists as BP4. For BP5, also
 * the writer count of the last step read when it differs from the first step's (md.idx 'w'
 * records: u64 length, then u64 writers, in the file's byte order; 's' records, one a step; the
 * steps read: rules, -P SelectSteps), else 0 (ls.h). */
static bool is_bp5_dir(const char *path, const char *rules, size_t *quirk_writers)
{
    char name[4096];
    unsigned char h[64];
    *quirk_writers = 0;
    if (strncmp(path, "gpubp://", 8) == 0 ||
        snprintf(name, sizeof name, "%s/md.idx", path) >= (int)sizeof name)
        return false;
    FILE *idx = fopen(name, "rb");
    if (!idx)
        return false;
    bool bp5 = fread(h, 1, sizeof h, idx) == sizeof h && h[37] == 5;
    uint64_t first = 0, last = 0, cur = 0, step = 0;
    unsigned char rec[17];
    bool be = h[36] != 0; /* the file's byte order */
    while (bp5 && fread(rec, 1, 9, idx) == 9) {
        uint64_t len = 0, nw = 0;
        for (int i = 0; i < 8; i++)
            len = len << 8 | rec[1 + (be ? i : 7 - i)];
        if (rec[0] == 'w') {
            if (len < 8 || fread(rec + 9, 1, 8, idx) != 8)
                break;
            for (int i = 0; i < 8; i++)
                nw = nw << 8 | rec[9 + (be ? i : 7 - i)];
            cur = nw;
            len -= 8;
        } else if (rec[0] == 's' && step_selected(rules, step++)) {
            first = first ? first : cur;
            last = cur;
        }
        if (len > (uint64_t)LONG_MAX || fseek(idx, (long)len, SEEK_CUR) != 0)
            break;
    }
    if (first != last)
        *quirk_writers = (size_t)last;
    fclose(idx);
    return bp5;
}

static int open_dataset(ls_ctx *c)
{
    struct stat sb;
    const char *path = c->opt.path;
    /* a gpubp:// URL names a dataset on a gpubp-serve daemon: the open says whether it exists */
    if (strncmp(path, "gpubp://", 8) != 0 && stat(path, &sb) != 0) {
        fprintf(stderr, "\nError: input path %s does not exist\n", path);
        return 4;
    }
    if (c->opt.list_operators && c->opt.timestep) {
        fprintf(stderr,
                "--list_operators incompatible with --timestep, turning off timestep mode\n");
        c->opt.timestep = false;
    }
    c->random_access = !c->opt.timestep;
    c->bp5 = is_bp5_dir(path, c->opt.select_steps, &c->bp5_last_writers);
    /* -E BP3 / BP4 / BP5: that engine only, as bpls (whose engine fails on another format) */
    bool remote = strncmp(path, "gpubp://", 8) == 0;
    const char *kind = c->bp5 ? "BP5" : !remote && S_ISREG(sb.st_mode) ? "BP3" : "BP4";
    if (c->opt.engine[0] && !remote && strcmp(c->opt.engine, kind)) {
        printf("Failed to open with %s engine: %s is a %s dataset\n", c->opt.engine, path, kind);
        fflush(stdout);
        fprintf(stderr, "\nError: Could not open this file with any ADIOS2 file reading engines\n");
        return 4;
    }
    /* block_view=stored: every stored block, as bpls lists them (a split put's sub-blocks too);
     * the BP5 reader's parameters for BP5 datasets only, as bpls (its BP4 engine has none) */
    char params[1200];
    snprintf(params, sizeof params, "block_view=stored%s%s%s",
             c->bp5 && c->opt.ignore_flatten ? ",ignore_flatten=1" : "",
             c->bp5 && c->opt.select_steps[0] ? ",select_steps=" : "",
             c->bp5 ? c->opt.select_steps : "");
    int rc = gpubp_open(&c->f, path,
                        c->random_access ? GPUBP_MODE_READ_RANDOM_ACCESS : GPUBP_MODE_READ, params);
    if (rc != GPUBP_OK) {
        const char *msg = gpubp_last_error();
        fprintf(stderr, "\nError: Could not open %s: %s\n", path, *msg ? msg : gpubp_strerror(rc));
        c->f = NULL;
        return 4;
    }
    if (c->random_access && (rc = gpubp_steps(c->f, &c->file_steps)) < 0) {
        ls_lib_error(c, rc, "counting the steps of", path);
        return 1;
    }
    return 0;
}

/* Follows the steps (-t), listing each one: bpls's "Step N:" loop. */
static int list_steps(ls_ctx *c, const ls_masks *m, size_t *matched)
{
    for (;;) {
        int st = gpubp_begin_step(c->f);
        if (st == GPUBP_END_OF_STREAM)
            return LS_OK;
        if (st == GPUBP_NOT_READY) { /* the writer is still active: wait for its next step */
            fflush(c->out);
            sleep(1);
            continue;
        }
        if (st < 0) {
            fflush(c->out);
            fprintf(stderr, "\nError: Cannot read more steps due to errors\n");
            return ls_lib_error(c, st, "starting a step of", c->opt.path);
        }
        size_t step = 0;
        gpubp_current_step(c->f, &step);
        fflush(c->out);
        fprintf(stdout, "Step %zu:\n", step);
        fflush(stdout);
        int rc = list_entries(c, m, matched);
        if (rc == LS_FAIL || rc == LS_ABORT)
            return rc;
        if ((st = gpubp_end_step(c->f)) < 0)
            return ls_lib_error(c, st, "ending a step of", c->opt.path);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --list_operators: the operators of the file's variables, each named once, sorted (bpls's
 * doList_operators: the operator of block 0 of each variable's first step; BP5 only, where
 * ADIOS2's reader records that a variable has one; nothing for BP4, BP3 and struct variables,
 * nor for the variables dumped before, whose operator bpls's reader has then replaced). */
static int list_operators(ls_ctx *c)
{
    size_t nv = 0, n = 0;
    const char *const *names = NULL;
    char **ops = NULL;
    int rc = c->bp5 ? gpubp_available_variables(c->f, &nv, &names) : GPUBP_OK;
    if (rc < 0)
        return ls_lib_error(c, rc, "listing variables of", c->opt.path);
    if (nv && !(ops = calloc(nv, sizeof *ops)))
        return ls_nomem();
    int out = LS_OK;
    for (size_t i = 0; i < nv; i++) {
        gpubp_variable *v;
        gpubp_type t;
        size_t nsteps = 0, nb = 0, cnt[LS_MAX_DIMS], nd = 0, elems = 1;
        char name[600];
        if ((rc = gpubp_inquire_variable(&v, c->f, names[i])) < 0 ||
            (rc = gpubp_variable_type(v, &t)) < 0 || (rc = gpubp_variable_steps(v, &nsteps)) < 0 ||
            (rc = gpubp_variable_ndims(v, &nd)) < 0) {
            out = ls_lib_error(c, rc, "inquiring variable", names[i]);
            continue;
        }
        bool dumped = false;
        for (size_t k = 0; k < c->ndumped && !dumped; k++)
            dumped = strcmp(c->dumped[k], names[i]) == 0;
        if (dumped || t == GPUBP_TYPE_STRUCT || nsteps == 0 || nd >= LS_MAX_DIMS ||
            gpubp_variable_blocks(v, 0, &nb) < 0 || nb == 0 ||
            gpubp_variable_block_info(v, 0, 0, NULL, cnt, NULL, NULL) < 0)
            continue;
        for (size_t k = 0; k < nd; k++)
            elems *= cnt[k];
        if (elems == 0) /* bpls reads nothing of an empty block: no operator is seen */
            continue;
        if ((rc = gpubp_variable_block_operator(v, 0, 0, name, sizeof name)) < 0) {
            out = ls_lib_error(c, rc, "finding the operator of", names[i]);
            continue;
        }
        if (!name[0])
            continue;
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++)
            seen = strcmp(ops[k], name) == 0;
        if (!seen && !(ops[n++] = strdup(name))) {
            out = ls_nomem();
            n--;
            break;
        }
    }
    if (n) /* ops is NULL without variables: qsort wants an array */
        qsort(ops, n, sizeof *ops, cmp_str);
    fflush(c->out);
    fprintf(c->out, "Operators used in this file:\n");
    for (size_t k = 0; k < n; k++) {
        fprintf(c->out, " * %s\n", ops[k]);
        free(ops[k]);
    }
    free(ops);
    return out;
}

static int do_list(ls_ctx *c, const ls_masks *m)
{
    int rc = open_dataset(c);
    if (rc)
        return rc;
    if (c->opt.verbose) {
        printf("File info:\n");
        if (c->random_access) {
            size_t nv = 0, na = 0;
            const char *const *names;
            gpubp_available_variables(c->f, &nv, &names);
            gpubp_available_attributes(c->f, &na, &names);
            printf("  of variables:  %zu\n", nv);
            printf("  of attributes: %zu\n", na);
        }
        if (c->opt.longopt)
            printf("  statistics:    Min / Max \n");
        printf("\n");
        fflush(stdout);
    }
    if (c->opt.list_meshes)
        fprintf(c->out, "Mesh info: is not implemented in adios 2.x at the moment\n"); /* bpls */

    size_t matched = 0;
    rc = c->random_access ? list_entries(c, m, &matched) : list_steps(c, m, &matched);
    if (c->opt.list_operators && rc != LS_FAIL && rc != LS_ABORT && list_operators(c) != LS_OK)
        c->failed = true;
    int crc = gpubp_close(c->f);
    c->f = NULL;
    if (rc == LS_FAIL || rc == LS_ABORT)
        return 1;
    if (crc < 0) {
        ls_lib_error(c, crc, "closing", c->opt.path);
        return 1;
    }
    if (c->opt.nmasks > 0 && matched == 0) {
        fflush(c->out);
        fprintf(stderr,
                "\nError: None of the variables/attributes matched any name/regexp you provided\n");
        return 4;
    }
    return c->failed ? 1 : 0;
}

/* ---- -V ------------------------------------------------------------------------------------- */

/* A BP file (BP3, or ADIOS 1.x's versions 1 and 2): its 56-byte mini-footer, checked as bpls
 * checks it; 0 if it is none. */
static int print_bp3_version(FILE *f)
{
    unsigned char b[56];
    if (fseek(f, 0, SEEK_END) != 0) return 0;
    long len = ftell(f);
    if (len < 56 || fseek(f, -56, SEEK_END) != 0 || fread(b, 1, 56, f) != 56) return 0;
    int be = b[52], type = b[54], ver = b[55];
    if (be > 1 || (type != 0 && type != 2 && type != 3) || ver < 1 || ver > 3) return 0;
    uint64_t pg, var, attr;
    memcpy(&pg, b + 28, 8);
    memcpy(&var, b + 36, 8);
    memcpy(&attr, b + 44, 8);
    if (!be && (pg >= var || var >= attr || attr >= (uint64_t)len)) return 0;
    if (ver < 3) {
        printf("ADIOS-BP Version %d\n", ver);
        return 1;
    }
    int major = b[24], minor = b[25], patch = b[26];
    if (major > '0') { /* ASCII digits, minor 12 as '<' */
        major -= '0';
        minor -= '0';
        patch -= '0';
    }
    printf("ADIOS-BP Version %d %s - ADIOS v%d.%d.%d\n", ver, be ? "Big Endian" : "Little Endian",
           major, minor, patch);
    return 1;
}

static void print_file_version(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        char name[4096];
        unsigned char h[64];
        snprintf(name, sizeof name, "%s/md.0", path);
        FILE *md = fopen(name, "rb");
        if (md)
            fclose(md);
        snprintf(name, sizeof name, "%s/md.idx", path);
        FILE *idx = md ? fopen(name, "rb") : NULL;
        size_t got = idx ? fread(h, 1, sizeof h, idx) : 0;
        if (idx && got == 0 && !ferror(idx)) {
            fclose(idx);
            printf("This could be an active ADIOS BP output just opened but not written to "
                   "yet\n");
            return;
        }
        if (idx)
            fclose(idx);
        if (!idx || got < sizeof h || memcmp(h, "ADIOS-BP ", 9) != 0) {
            printf("gpubpls does not recognize this directory as an ADIOS dataset\n");
            return;
        }
        /* version bytes are '0' + value, so minor 12 is '<' */
        int major = h[32] - '0', minor = h[33] - '0', patch = h[34] - '0';
        const char *endian = h[36] ? "Big Endian" : "Little Endian";
        if (h[37] == 5)
            printf("ADIOS-BP Version %d.%d %s - ADIOS v%d.%d.%d %s%s\n", h[37], h[38], endian,
                   major, minor, patch, h[39] ? "- active" : "", h[41] ? "- flatten_steps " : "");
        else
            printf("ADIOS-BP Version %d %s - ADIOS v%d.%d.%d %s\n", h[37], endian, major, minor,
                   patch, h[37] == 4 && h[38] ? "- active" : "");
        return;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("File cannot be opened: %s\n", path);
        return;
    }
    unsigned char h[8];
    static const unsigned char hdf5[8] = {137, 72, 68, 70, 13, 10, 26, 10};
    if (fread(h, 1, 8, f) == 8 && memcmp(h, hdf5, 8) == 0)
        printf("Hierarchical Data Format (version 5) data\n");
    else if (!print_bp3_version(f))
        printf("gpubpls does not recognize this file\n");
    fclose(f);
}

/* ---- main ----------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    ls_ctx c;
    memset(&c, 0, sizeof c);
    ls_options *o = &c.opt;
    o->ncols = 6;
    for (int i = 0; i < LS_MAX_DIMS; i++) {
        o->istart[i] = 0;
        o->icount[i] = -1;
    }
    ls_args ps = {0};
    int rc = ls_parse_args(o, &ps, argc, argv);
    if (rc || ps.help) {
        free(o->masks);
        return rc;
    }
    if (o->show_version) {
        if (o->path == NULL) {
            if (o->verbose) {
                unsigned feat = gpubp_features();
                printf("gpubpls: BP4 dataset introspection utility (libgpubp)\n");
                printf("libgpubp version: %s\n", gpubp_version());
                printf("Features: CUDA %s, MPI %s, zlib %s\n",
                       feat & GPUBP_FEATURE_CUDA ? "yes" : "no",
                       feat & GPUBP_FEATURE_MPI ? "yes" : "no",
                       feat & GPUBP_FEATURE_ZLIB ? "yes" : "no");
                printf("Codecs (blosc operator):%s%s%s%s%s\n",
                       feat & GPUBP_FEATURE_BLOSCLZ ? " blosclz" : "",
                       feat & GPUBP_FEATURE_LZ4 ? " lz4 lz4hc" : "",
                       feat & GPUBP_FEATURE_ZLIB ? " zlib" : "",
                       feat & GPUBP_FEATURE_ZSTD ? " zstd" : "",
                       feat & (GPUBP_FEATURE_BLOSCLZ | GPUBP_FEATURE_LZ4 | GPUBP_FEATURE_ZLIB |
                               GPUBP_FEATURE_ZSTD) ? "" : " none");
                printf("Codec libraries: %s\n", gpubp_codec_versions());
            } else {
                printf("%s\n", gpubp_version());
            }
        } else {
            print_file_version(o->path);
        }
        free(o->masks);
        return 0;
    }
    if (o->path == NULL) {
        fprintf(stderr, "Missing file name\n");
        free(o->masks);
        return 1;
    }
    ls_parse_specs(o, &ps);
    if (o->format) {
        char msg[512];
        if (ls_format_check(o->format, msg, sizeof msg) != 0) {
            fprintf(stderr, "gpubpls: %s\n", msg);
            free(o->masks);
            return 1;
        }
    }
    ls_masks m = {0};
    if (o->use_regexp && (rc = ls_compile_masks(o, &m)) != 0) {
        ls_free_masks(&m);
        free(o->masks);
        return rc;
    }
    c.commentchar = o->noindex ? ';' : ' ';
    if (o->attrsonly)
        o->listattrs = true;

    c.out = stdout;
    if (o->outpath && (c.out = fopen(o->outpath, "w")) == NULL) {
        fprintf(stderr, "Error at opening for writing file %s: %s\n", o->outpath,
                strerror(errno));
        ls_free_masks(&m);
        free(o->masks);
        return 30;
    }

    /* bpls drops one trailing '/' of the path */
    char *path = strdup(o->path);
    if (!path) {
        ls_nomem();
        rc = 1;
    } else {
        size_t len = strlen(path);
        if (len > 1 && path[len - 1] == '/')
            path[len - 1] = '\0';
        o->path = path;
        rc = do_list(&c, &m);
    }
    if (c.out != stdout) {
        if (fclose(c.out) != 0 && rc == 0) {
            fprintf(stderr, "Error at writing file %s: %s\n", o->outpath, strerror(errno));
            rc = 30;
        }
    } else if (fflush(stdout) != 0 && rc == 0) {
        rc = 1;
    }
    ls_ctx_free(&c);
    free(path);
    ls_free_masks(&m);
    free(o->masks);
    return rc;
}
