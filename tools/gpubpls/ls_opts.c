/*
 * tools/gpubpls/ls_opts.c: gpubpls's command line, bpls's options and their parsing, and the
 * name masks (see ls_opts.h).
 */
#include "gpubpls/ls_opts.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- options -------------------------------------------------------------------------------- */

static void print_help(void)
{
    printf(
        "usage: gpubpls [OPTIONS] file [mask1 mask2 ...]\n"
        "\n"
        "List/dump the content of a BP4 or BP5 dataset (a name.bp directory) or a BP3\n"
        "file, as ADIOS2's bpls does.\n"
        "A mask is a shell pattern like with 'ls', e.g. \"*/x?\", or with -e an extended\n"
        "regular expression; it matches the whole name.\n"
        "Variables with several steps are listed with an extra, first dimension: the step.\n"
        "\n"
        "  --long      | -l           Print values of scalars and attributes, and min/max\n"
        "                               of arrays (from metadata, no data is read)\n"
        "  --attrs     | -a           List/match attributes too\n"
        "  --attrsonly | -A           List attributes only\n"
        "  --meshes    | -m           List meshes (as bpls: not implemented)\n"
        "  --timestep  | -t           Read step by step, following a dataset still being\n"
        "                               written until its writer closes it\n"
        "  --dump      | -d           Dump matched variables (attributes too with -a)\n"
        "  --regexp    | -e           Treat masks as extended regular expressions\n"
        "  --output    | -o <path>    Print to a file instead of stdout\n"
        "  --start     | -s \"spec\"    Offset indices in each dimension (default 0);\n"
        "                               <0 counts from the end as in python (-1 is last)\n"
        "  --count     | -c \"spec\"    Number of elements in each dimension;\n"
        "                               -1 means up to the end (the default)\n"
        "                               With several steps the first number is the step.\n"
        "  --noindex   | -y           Print data without array indices\n"
        "  --string    | -S           Print 8-bit integer arrays as strings\n"
        "  --columns   | -n \"cols\"    Number of data elements per row (default 6)\n"
        "  --format    | -f \"str\"     printf format of one data item, e.g. \"%%6.3f\"\n"
        "  --decomp    | -D           Show the blocks of each variable per step\n"
        "  --hidden_attrs             Accepted for bpls compatibility (no effect)\n"
        "  --ignore_flatten           Show the steps of a BP5 dataset written with\n"
        "                               FlattenSteps as written\n"
        "  --list_operators           List the operators used in the file (BP5)\n"
        "  --show-derived             Show the expression of derived variables\n"
        "  --engine    | -E <name>    Accepted for BP3, BP4, BP5, BPFile, FileStream, File\n"
        "  --engine-params | -P <str> Engine parameters, e.g. \"SelectSteps=0:n:2\": BP5\n"
        "                               datasets take SelectSteps and IgnoreFlattenSteps\n"
        "  --transport-parameters | -T <str>\n"
        "                             Accepted for bpls compatibility (no effect)\n"
        "\n"
        "  Examples for slicing:\n"
        "  -s \"0,0,0\"   -c \"1,99,1\":  Print 100 elements (of the 2nd dimension).\n"
        "  -s \"0,0\"     -c \"1,-1\":    Print the whole 2nd dimension however large it is.\n"
        "  -s \"-1,-1\"   -c \"1,1\":     Print the very last element (of a 2D array)\n"
        "\n"
        "Help options\n"
        "  --help      | -h           Print this help.\n"
        "  --verbose   | -v           Print information about what gpubpls is doing.\n"
        "  --version   | -V           Print the version; with a file, the file's format\n"
        "                               version.\n"
        "\n"
        "Typical use: gpubpls -la <file>\n");
}

enum opt_id {
    O_LONG, O_ATTRS, O_ATTRSONLY, O_MESHES, O_TIMESTEP, O_DUMP, O_REGEXP, O_NOINDEX, O_STRING,
    O_DECOMP, O_VERSION, O_VERBOSE, O_HELP, O_IGNORED_FLAG, O_LIST_OPERATORS, O_IGNORE_FLATTEN,
    O_SHOW_DERIVED,
    /* options with a value */
    O_OUTPUT, O_START, O_COUNT, O_COLUMNS, O_FORMAT, O_ENGINE, O_IGNORED_VALUE, O_ENGINE_PARAMS,
    O_ERROR
};

typedef struct opt_def {
    const char *lng;
    char shrt;
    enum opt_id id;
} opt_def;

static const opt_def kOptions[] = {
    {"--long", 'l', O_LONG},
    {"--attrs", 'a', O_ATTRS},
    {"--attrsonly", 'A', O_ATTRSONLY},
    {"--meshes", 'm', O_MESHES},
    {"--timestep", 't', O_TIMESTEP},
    {"--dump", 'd', O_DUMP},
    {"--regexp", 'e', O_REGEXP},
    {"--noindex", 'y', O_NOINDEX},
    {"--string", 'S', O_STRING},
    {"--decomp", 'D', O_DECOMP},
    {"--decompose", 0, O_DECOMP},
    {"--version", 'V', O_VERSION},
    {"--verbose", 'v', O_VERBOSE},
    {"--help", 'h', O_HELP},
    {"--hidden_attrs", 0, O_IGNORED_FLAG},
    {"--ignore_flatten", 0, O_IGNORE_FLATTEN},
    {"--show-derived", 0, O_SHOW_DERIVED},
    {"--list_operators", 0, O_LIST_OPERATORS},
    {"--output", 'o', O_OUTPUT},
    {"--start", 's', O_START},
    {"--count", 'c', O_COUNT},
    {"--columns", 'n', O_COLUMNS},
    {"--format", 'f', O_FORMAT},
    {"--engine", 'E', O_ENGINE},
    {"--transport-parameters", 'T', O_IGNORED_VALUE},
    {"--engine-params", 'P', O_ENGINE_PARAMS},
    {"--error", 'X', O_ERROR},
};
#define NOPTIONS (sizeof kOptions / sizeof kOptions[0])

/* Parses "0, 3; 027" into dims, as bpls: separators " ,;x\t\n", C integer syntax. Exits with 200
 * on a value out of range or too many dimensions. */
static void parse_dim_spec(const char *str, int64_t *dims)
{
    char *s = strdup(str);
    if (!s) {
        ls_nomem();
        exit(1);
    }
    char *save = NULL;
    size_t i = 0;
    char *tok = strtok_r(s, " ,;x\t\n", &save);
    while (tok != NULL && i < LS_SPEC_DIMS) {
        errno = 0;
        dims[i++] = (int64_t)strtoll(tok, NULL, 0);
        if (errno) {
            fprintf(stderr, "Error: could not convert field into a value: %s from \"%s\"\n", tok,
                    str);
            free(s);
            exit(200);
        }
        tok = strtok_r(NULL, " ,;x\t\n", &save);
    }
    if (tok != NULL) {
        fprintf(stderr, "Error: More dimensions specified in \"%s\" than we can handle (%d)\n",
                str, LS_SPEC_DIMS);
        free(s);
        exit(200);
    }
    free(s);
}

/* -P "key=value,...": ADIOS2's engine parameters (helper::BuildParametersMap: items split at ',',
 * key and value at the first '=', both trimmed; keys without case). The BP5 reader's SelectSteps
 * and IgnoreFlattenSteps change what is listed (applied to BP5 datasets, as bpls's BP5 engine
 * alone reads them); the others change nothing gpubpls prints and are accepted. Returns 0, or 1
 * for an item that is not key=value or has an empty value (bpls throws). */
static int engine_params(ls_options *o, const char *spec)
{
    char *s = strdup(spec), *save = NULL;
    if (!s)
        return ls_nomem(), 1;
    for (char *item = strtok_r(s, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '='), *k = item, *v = eq ? eq + 1 : NULL;
        if (eq)
            *eq = '\0';
        char *ends[2] = {k + strlen(k), v ? v + strlen(v) : NULL};
        for (int j = 0; j < 2 && eq; j++) {
            char **p = j ? &v : &k;
            while (**p && strchr(" \n\r\t", **p))
                (*p)++;
            while (ends[j] > *p && strchr(" \n\r\t", ends[j][-1]))
                *--ends[j] = '\0';
        }
        if (!eq || !*v) {
            fprintf(stderr, "gpubpls: engine parameter '%s%s%s': the format is key=value\n", k,
                    eq ? "=" : "", eq ? v : "");
            free(s);
            return 1;
        }
        if (!strcasecmp(k, "SelectSteps")) {
            if (strlen(v) >= sizeof o->select_steps) {
                fprintf(stderr, "gpubpls: engine parameter SelectSteps: longer than %zu bytes\n",
                        sizeof o->select_steps - 1);
                free(s);
                return 1;
            }
            memcpy(o->select_steps, v, strlen(v) + 1);
        } else if (!strcasecmp(k, "IgnoreFlattenSteps")) {
            if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on")) {
                o->ignore_flatten = true;
            } else if (strcasecmp(v, "no") && strcasecmp(v, "false") && strcasecmp(v, "off")) {
                fprintf(stderr, "gpubpls: engine parameter IgnoreFlattenSteps: '%s' is not a "
                        "boolean (yes, true, on, no, false, off)\n", v);
                free(s);
                return 1;
            }
        }
    }
    free(s);
    return 0;
}

/* Applies option `d` with value `val` (NULL for flags). Returns 0, or the exit status. */
static int apply_option(ls_options *o, ls_args *ps, const opt_def *d, const char *val)
{
    switch (d->id) {
    case O_LONG: o->longopt = true; break;
    case O_ATTRS: o->listattrs = true; break;
    case O_ATTRSONLY: o->attrsonly = true; break;
    case O_MESHES: o->list_meshes = true; break;
    case O_TIMESTEP: o->timestep = true; break;
    case O_DUMP: o->dump = true; break;
    case O_REGEXP: o->use_regexp = true; break;
    case O_NOINDEX: o->noindex = true; break;
    case O_STRING: o->byte_as_char = true; break;
    case O_DECOMP: o->decomp = true; break;
    case O_VERSION: o->show_version = true; break;
    case O_VERBOSE: o->verbose++; break;
    case O_HELP:
        if (!ps->help)
            print_help();
        ps->help = true;
        break;
    case O_IGNORED_FLAG:
    case O_IGNORED_VALUE:
        break;
    case O_LIST_OPERATORS: o->list_operators = true; break;
    case O_IGNORE_FLATTEN: o->ignore_flatten = true; break;
    case O_SHOW_DERIVED: o->show_derived = true; break;
    case O_ENGINE_PARAMS: return engine_params(o, val);
    case O_ERROR:
        fprintf(stderr, "gpubpls: --error (read accuracy) is not supported\n");
        return 1;
    case O_OUTPUT: o->outpath = val; break;
    case O_START: ps->start = val; break;
    case O_COUNT: ps->count = val; break;
    case O_FORMAT: o->format = val; break;
    case O_COLUMNS: {
        char *end;
        errno = 0;
        long n = strtol(val, &end, 10);
        if (errno || end == val || *end || n < INT32_MIN || n > INT32_MAX) {
            fprintf(stderr, "Parsing arguments failed: bad number of columns \"%s\"\n", val);
            return 1;
        }
        o->ncols = (int)n;
        break;
    }
    case O_ENGINE:
        if (strcasecmp(val, "BP3") && strcasecmp(val, "BP4") && strcasecmp(val, "BP5") &&
            strcasecmp(val, "BPFile") && strcasecmp(val, "FileStream") && strcasecmp(val, "File")) {
            fprintf(stderr, "gpubpls: engine %s is not supported: gpubpls reads BP3, BP4 and BP5 "
                    "files\n", val);
            return 1;
        }
        o->engine[0] = '\0';
        if (!strncasecmp(val, "BP", 2) && val[2] >= '3' && val[2] <= '5')
            snprintf(o->engine, sizeof o->engine, "BP%c", val[2]);
        break;
    }
    return 0;
}

static const opt_def *find_long(const char *arg, const char **val)
{
    *val = NULL;
    for (size_t i = 0; i < NOPTIONS; i++) {
        size_t n = strlen(kOptions[i].lng);
        if (strncmp(arg, kOptions[i].lng, n) != 0)
            continue;
        if (arg[n] == '\0')
            return &kOptions[i];
        if (arg[n] == '=' && kOptions[i].id >= O_OUTPUT) {
            *val = arg + n + 1;
            return &kOptions[i];
        }
    }
    return NULL;
}

static const opt_def *find_short(char ch)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if (kOptions[i].shrt == ch)
            return &kOptions[i];
    return NULL;
}

/* bpls's command line: options anywhere; the first other argument is the file, the rest are
 * masks. Short flags combine (-la); an option's value is the next argument (or attached, -n4). */
int ls_parse_args(ls_options *o, ls_args *ps, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == '\0') {
            if (o->path == NULL) {
                o->path = a;
            } else {
                char **m = realloc(o->masks, (o->nmasks + 1) * sizeof *m);
                if (!m)
                    return ls_nomem(), 1;
                o->masks = m;
                o->masks[o->nmasks++] = argv[i];
            }
            continue;
        }
        const opt_def *d;
        const char *val = NULL;
        if (a[1] == '-') {
            d = find_long(a, &val);
            if (!d) {
                fprintf(stderr, "Unknown long option: %s\n", a);
                return 1;
            }
            if (d->id >= O_OUTPUT && val == NULL) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "Parsing arguments failed: %s needs a value\n", a);
                    return 1;
                }
                val = argv[++i];
            }
            int rc = apply_option(o, ps, d, val);
            if (rc)
                return rc;
            continue;
        }
        for (const char *p = a + 1; *p; p++) {
            d = find_short(*p);
            if (!d) {
                fprintf(stderr, "Parsing arguments failed: unknown option -%c in %s\n", *p, a);
                return 1;
            }
            val = NULL;
            if (d->id >= O_OUTPUT) {
                if (p[1] != '\0') {
                    val = p + 1;
                } else if (i + 1 < argc) {
                    val = argv[++i];
                } else {
                    fprintf(stderr, "Parsing arguments failed: -%c needs a value\n", *p);
                    return 1;
                }
            }
            int rc = apply_option(o, ps, d, val);
            if (rc)
                return rc;
            if (val)
                break;
        }
    }
    return 0;
}

void ls_parse_specs(ls_options *o, const ls_args *a)
{
    if (a->start)
        parse_dim_spec(a->start, o->istart);
    if (a->count)
        parse_dim_spec(a->count, o->icount);
}

/* ---- masks ---------------------------------------------------------------------------------- */

int ls_compile_masks(const ls_options *o, ls_masks *m)
{
    m->re = calloc(o->nmasks ? o->nmasks : 1, sizeof *m->re);
    if (!m->re)
        return ls_nomem(), 1;
    for (size_t i = 0; i < o->nmasks; i++) {
        /* the whole name must match, as std::regex_match in bpls */
        size_t len = strlen(o->masks[i]) + 5;
        char *anchored = malloc(len);
        if (!anchored)
            return ls_nomem(), 1;
        snprintf(anchored, len, "^(%s)$", o->masks[i]);
        int err = regcomp(&m->re[i], anchored, REG_EXTENDED | REG_NOSUB);
        free(anchored);
        if (err) {
            char buf[256];
            regerror(err, &m->re[i], buf, sizeof buf);
            fprintf(stderr, "Error: \"%s\" is an invalid extended regular expression: %s\n",
                    o->masks[i], buf);
            return 2;
        }
        m->n = i + 1;
    }
    return 0;
}

void ls_free_masks(ls_masks *m)
{
    for (size_t i = 0; i < m->n; i++)
        regfree(&m->re[i]);
    free(m->re);
}

bool ls_matches_a_mask(const ls_options *o, const ls_masks *m, const char *name)
{
    if (o->nmasks == 0)
        return true;
    for (size_t i = 0; i < o->nmasks; i++) {
        if (o->use_regexp) {
            if (regexec(&m->re[i], name, 0, NULL, 0) == 0 ||
                (name[0] == '/' && regexec(&m->re[i], name + 1, 0, NULL, 0) == 0))
                return true;
        } else {
            /* a mask without a leading '/' matches a name with one from its second character */
            int skip = o->masks[i][0] != '/' && name[0] == '/';
            if (fnmatch(o->masks[i], name + skip, FNM_PATHNAME) == 0)
                return true;
        }
    }
    return false;
}
