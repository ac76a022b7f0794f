/* Host example: writes a small multi-step dataset from host memory, then prints its listing in the
 * style of ADIOS2's `bpls -la` and the blocks of the array as `bpls -D` does, through the API.
 *
 *   host_steps [DIR.bp]          (default: host_steps.bp in the current directory)
 *
 * The dataset: 3 steps of a global 4x6 double array "temperature" written as two blocks of two
 * rows each (as two writers would), an int32 scalar "step", a string attribute "unit" and a double
 * attribute "dt". ADIOS2's bpls, and libgpubp's gpubpls, read it too. */
#include <gpubp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSTEPS 3
#define NX 4
#define NY 6

#define CHECK(call)                                                                           \
    do {                                                                                      \
        int rc_ = (call);                                                                     \
        if (rc_ < 0) {                                                                        \
            fprintf(stderr, "host_steps: %s failed: %s: %s\n", #call, gpubp_strerror(rc_),    \
                    gpubp_last_error());                                                      \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static void write_dataset(const char *path)
{
    const size_t shape[2] = {NX, NY}, count[2] = {NX / 2, NY}, start[2] = {0, 0};
    const double dt = 0.25;
    gpubp_file *w;
    gpubp_variable *temperature, *step;

    CHECK(gpubp_open(&w, path, GPUBP_MODE_WRITE, NULL));
    CHECK(gpubp_define_variable(&temperature, w, "temperature", GPUBP_TYPE_DOUBLE, 2, shape, start,
                                count));
    CHECK(gpubp_define_variable(&step, w, "step", GPUBP_TYPE_INT32, 0, NULL, NULL, NULL));
    CHECK(gpubp_define_attribute(w, "unit", GPUBP_TYPE_STRING, "kelvin", 1));
    CHECK(gpubp_define_attribute(w, "dt", GPUBP_TYPE_DOUBLE, &dt, 1));

    for (int s = 0; s < NSTEPS; s++) {
        double field[NX][NY];
        for (size_t i = 0; i < NX; i++)
            for (size_t j = 0; j < NY; j++) field[i][j] = 10.0 * s + (double)(i * NY + j) + 0.5;
        CHECK(gpubp_begin_step(w));
        for (size_t b = 0; b < 2; b++) { /* block b: rows [b * NX/2, (b + 1) * NX/2) */
            const size_t bstart[2] = {b * (NX / 2), 0};
            CHECK(gpubp_set_selection(temperature, 2, bstart, count));
            CHECK(gpubp_put(w, temperature, field[b * (NX / 2)], GPUBP_DEFERRED));
        }
        CHECK(gpubp_put(w, step, &s, GPUBP_SYNC));
        CHECK(gpubp_end_step(w)); /* performs the deferred puts; field may go out of scope */
    }
    CHECK(gpubp_close(w));
}

/* ---- the listing ---------------------------------------------------------------------------- */

/* Prints one value of `type` as bpls does (%g for floating point, (re,iim) for complex). */
static void print_value(gpubp_type type, const void *p)
{
    switch (type) {
    case GPUBP_TYPE_INT8: { signed char v; memcpy(&v, p, 1); printf("%d", v); break; }
    case GPUBP_TYPE_CHAR: { char v; memcpy(&v, p, 1); printf("%d", v); break; }
    case GPUBP_TYPE_INT16: { short v; memcpy(&v, p, 2); printf("%d", v); break; }
    case GPUBP_TYPE_INT32: { int v; memcpy(&v, p, 4); printf("%d", v); break; }
    case GPUBP_TYPE_INT64: { long long v; memcpy(&v, p, 8); printf("%lld", v); break; }
    case GPUBP_TYPE_UINT8: { unsigned char v; memcpy(&v, p, 1); printf("%u", v); break; }
    case GPUBP_TYPE_UINT16: { unsigned short v; memcpy(&v, p, 2); printf("%u", v); break; }
    case GPUBP_TYPE_UINT32: { unsigned v; memcpy(&v, p, 4); printf("%u", v); break; }
    case GPUBP_TYPE_UINT64: { unsigned long long v; memcpy(&v, p, 8); printf("%llu", v); break; }
    case GPUBP_TYPE_FLOAT: { float v; memcpy(&v, p, 4); printf("%g", v); break; }
    case GPUBP_TYPE_DOUBLE: { double v; memcpy(&v, p, 8); printf("%g", v); break; }
    case GPUBP_TYPE_FLOAT_COMPLEX: {
        float v[2];
        memcpy(v, p, sizeof v);
        printf("(%g,i%g)", v[0], v[1]);
        break;
    }
    case GPUBP_TYPE_DOUBLE_COMPLEX: {
        double v[2];
        memcpy(v, p, sizeof v);
        printf("(%g,i%g)", v[0], v[1]);
        break;
    }
    default: printf("?"); break;
    }
}

static void print_dims(size_t ndims, const size_t *dims)
{
    printf("{");
    for (size_t d = 0; d < ndims; d++) printf("%s%zu", d ? ", " : "", dims[d]);
    printf("}");
}

static void print_attribute(gpubp_file *f, const char *name)
{
    gpubp_type type;
    size_t n;
    int is_array;
    CHECK(gpubp_inquire_attribute(f, name, &type, &n, &is_array));
    printf("attr   = %s", is_array ? "{" : "");
    if (type == GPUBP_TYPE_STRING) {
        for (size_t i = 0; i < n; i++) {
            const char *s;
            CHECK(gpubp_attribute_string(f, name, i, &s));
            printf("%s\"%s\"", i ? ", " : "", s);
        }
    } else {
        size_t esize = gpubp_type_size(type);
        unsigned char *data = malloc(n * esize + 1);
        if (!data) exit(1);
        CHECK(gpubp_attribute_data(f, name, data));
        for (size_t i = 0; i < n; i++) {
            printf("%s", i ? ", " : "");
            print_value(type, data + i * esize);
        }
        free(data);
    }
    printf("%s\n", is_array ? "}" : "");
}

/* "3*{4, 6} = 0.5 / 43.5", "3*scalar = 0 / 2", "scalar = 7" */
static void print_variable(gpubp_file *f, const char *name)
{
    gpubp_variable *v;
    gpubp_type type;
    gpubp_shape_kind kind;
    size_t nsteps, ndims, dims[32];
    unsigned char min[16], max[16];

    CHECK(gpubp_inquire_variable(&v, f, name));
    CHECK(gpubp_variable_type(v, &type));
    CHECK(gpubp_variable_shape_kind(v, &kind));
    CHECK(gpubp_variable_steps(v, &nsteps));
    CHECK(gpubp_variable_ndims(v, &ndims));
    if (nsteps > 1) printf("%zu*", nsteps);
    if (ndims == 0) {
        printf("scalar");
    } else {
        CHECK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
        print_dims(ndims, dims);
    }
    if (type == GPUBP_TYPE_STRING) {
        printf("\n");
        return;
    }
    CHECK(gpubp_variable_minmax(v, min, max));
    printf(" = ");
    print_value(type, min);
    if (nsteps > 1 || ndims > 0) {
        printf(" / ");
        print_value(type, max);
    }
    printf("\n");
}

struct entry {
    const char *name;
    int is_variable;
    gpubp_type type;
};

static int cmp_entries(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static void list_dataset(const char *path)
{
    gpubp_file *f;
    size_t nvars, nattrs, nsteps, tw = 0, nw = 0;
    const char *const *vars, *const *attrs;

    CHECK(gpubp_open(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL));
    CHECK(gpubp_steps(f, &nsteps));
    CHECK(gpubp_available_variables(f, &nvars, &vars));
    CHECK(gpubp_available_attributes(f, &nattrs, &attrs));

    /* bpls lists variables and attributes together, sorted by name, in aligned columns. */
    size_t n = nvars + nattrs;
    struct entry *e = malloc((n ? n : 1) * sizeof *e);
    if (!e) exit(1);
    for (size_t i = 0; i < n; i++) {
        e[i].is_variable = i < nvars;
        e[i].name = e[i].is_variable ? vars[i] : attrs[i - nvars];
        if (e[i].is_variable) {
            gpubp_variable *v;
            CHECK(gpubp_inquire_variable(&v, f, e[i].name));
            CHECK(gpubp_variable_type(v, &e[i].type));
        } else {
            size_t count;
            int is_array;
            CHECK(gpubp_inquire_attribute(f, e[i].name, &e[i].type, &count, &is_array));
        }
        if (strlen(gpubp_type_name(e[i].type)) > tw) tw = strlen(gpubp_type_name(e[i].type));
        if (strlen(e[i].name) > nw) nw = strlen(e[i].name);
    }
    qsort(e, n, sizeof *e, cmp_entries);

    printf("%s: %zu steps (bpls -la style listing)\n", path, nsteps);
    for (size_t i = 0; i < n; i++) {
        printf("  %-*s  %-*s  ", (int)tw, gpubp_type_name(e[i].type), (int)nw, e[i].name);
        if (e[i].is_variable) print_variable(f, e[i].name);
        else print_attribute(f, e[i].name);
    }
    free(e);

    /* The blocks of the array, step by step (bpls -D), with each block's min/max. */
    gpubp_variable *t;
    size_t tsteps, start[2], count[2];
    double bmin, bmax;
    CHECK(gpubp_inquire_variable(&t, f, "temperature"));
    CHECK(gpubp_variable_steps(t, &tsteps));
    printf("blocks of temperature (bpls -D style):\n");
    for (size_t s = 0; s < tsteps; s++) {
        size_t nblocks;
        CHECK(gpubp_variable_blocks(t, s, &nblocks));
        printf("        step %zu:\n", s);
        for (size_t b = 0; b < nblocks; b++) {
            CHECK(gpubp_variable_block_info(t, s, b, start, count, &bmin, &bmax));
            printf("          block %zu: [%zu:%zu, %zu:%zu] = %g / %g\n", b, start[0],
                   start[0] + count[0] - 1, start[1], start[1] + count[1] - 1, bmin, bmax);
        }
    }
    CHECK(gpubp_close(f));
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "host_steps.bp";
    write_dataset(path);
    list_dataset(path);
    return 0;
}
