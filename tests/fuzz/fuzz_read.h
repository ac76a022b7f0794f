/* The whole public read path over one dataset, shared by the fuzz targets that build a dataset
 * from their input (fuzz_open: BP4 and BP5 directories; fuzz_bp3: BP3 files): open it in random
 * access and in step mode, list variables and attributes, query every variable's steps, blocks,
 * shapes and min/max, and get every selection up to a size cap. Oracles: every failure is a
 * documented status (never INTERNAL) with a message; a get never writes past
 * gpubp_selection_size() bytes; a listed name can be inquired. */
#ifndef GBP_FUZZ_READ_H
#define GBP_FUZZ_READ_H

#include "common/common.h"
#include "fuzz/fuzz_util.h"
#include "gpubp.h"

#define MAX_GET_BYTES ((size_t)1 << 22)
#define MAX_ITEMS 64

static void check_err(int rc)
{
    /* every failure leaves a message; statuses are the documented ones */
    if (rc < 0 && gpubp_last_error()[0] == '\0') abort();
    if (rc < GPUBP_ERR_UNSUPPORTED_TYPE && rc != GPUBP_ERR_INTERNAL) abort();
    if (rc == GPUBP_ERR_INTERNAL) abort();
}
#define CK(expr) (gbp_error_clear(), check_err(expr))

static void get_current(gpubp_file *f, gpubp_variable *v)
{
    size_t bytes = 0;
    int rc;
    gbp_error_clear();
    rc = gpubp_selection_size(v, &bytes);
    check_err(rc);
    if (rc != GPUBP_OK || bytes > MAX_GET_BYTES) return;
    /* guard bytes after the buffer: a get must not write past gpubp_selection_size() bytes, and
     * this catches it in builds without AddressSanitizer too */
    size_t guard = bytes > 4096 ? bytes : 4096;
    uint8_t *buf = malloc(bytes + guard);
    if (!buf) return;
    memset(buf + bytes, 0x5A, guard);
    CK(gpubp_get(f, v, buf, GPUBP_SYNC));
    for (size_t i = 0; i < guard; i++)
        if (buf[bytes + i] != 0x5A) {
            fz_known_bug("BUG-3: gpubp_get wrote past the gpubp_selection_size() bytes (a "
                         "multi-step get of blocks whose size changes between steps)");
            break;
        }
    free(buf);
}

static void query_var(gpubp_file *f, gpubp_variable *v, int random_access)
{
    size_t nd = 0, ns = 0, dims[32];
    gpubp_type t;
    gpubp_shape_kind k;
    const char *name;
    uint8_t mn[16], mx[16];
    CK(gpubp_variable_name(v, &name));
    CK(gpubp_variable_type(v, &t));
    CK(gpubp_variable_shape_kind(v, &k));
    gbp_error_clear();
    if (gpubp_variable_ndims(v, &nd) != GPUBP_OK || nd > 32) abort();
    CK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
    CK(gpubp_variable_steps(v, &ns));
    CK(gpubp_variable_minmax(v, mn, mx));
    size_t steps = random_access ? (ns < MAX_ITEMS ? ns : MAX_ITEMS) : 1;
    for (size_t s = 0; s < steps; s++) {
        size_t nb = 0, st[32], ct[32];
        gbp_error_clear();
        int rc = gpubp_variable_blocks(v, s, &nb);
        check_err(rc);
        if (rc) continue;
        for (size_t b = 0; b < nb && b < MAX_ITEMS; b++) {
            CK(gpubp_variable_block_info(v, s, b, st, ct, mn, mx));
        }
        if (random_access) {
            gbp_error_clear();
            if (gpubp_set_step_selection(v, s, 1) != GPUBP_OK) continue;
            CK(gpubp_variable_shape(v, GPUBP_MEM_HOST, dims));
        }
        get_current(f, v);
        if (nb > 1) {
            CK(gpubp_set_block_selection(v, nb - 1));
            get_current(f, v);
        }
        if (nd > 0 && nd <= 32 && k == GPUBP_SHAPE_GLOBAL_ARRAY) {
            /* the upper half of the shape */
            size_t s0[32], c0[32];
            gbp_error_clear();
            if (gpubp_variable_shape(v, GPUBP_MEM_HOST, dims) == GPUBP_OK) {
                for (size_t i = 0; i < nd; i++) {
                    s0[i] = dims[i] / 2;
                    c0[i] = dims[i] - dims[i] / 2;
                }
                CK(gpubp_set_selection(v, nd, s0, c0));
                get_current(f, v);
            }
        }
    }
    if (random_access && ns > 1 && ns < MAX_ITEMS) {
        gbp_error_clear();
        if (gpubp_set_step_selection(v, 0, ns) == GPUBP_OK) get_current(f, v);
    }
}

static void attrs(gpubp_file *f)
{
    size_t n = 0;
    const char *const *names;
    gbp_error_clear();
    if (gpubp_available_attributes(f, &n, &names) != GPUBP_OK) return;
    for (size_t i = 0; i < n && i < MAX_ITEMS; i++) {
        gpubp_type t;
        size_t cnt = 0;
        int arr;
        gbp_error_clear();
        if (gpubp_inquire_attribute(f, names[i], &t, &cnt, &arr) != GPUBP_OK) abort();
        if (t == GPUBP_TYPE_STRING) {
            for (size_t j = 0; j < cnt && j < MAX_ITEMS; j++) {
                const char *s;
                gbp_error_clear();
                if (gpubp_attribute_string(f, names[i], j, &s) != GPUBP_OK) abort();
                volatile size_t l = strlen(s);
                (void)l;
            }
        } else {
            size_t es = gpubp_type_size(t);
            if (es == 0) { /* a type id this library cannot read: listed, its data refused */
                uint8_t one[16];
                gbp_error_clear();
                if (gpubp_attribute_data(f, names[i], one) != GPUBP_ERR_UNSUPPORTED_TYPE) abort();
                if (gpubp_last_error()[0] == '\0') abort();
                continue;
            }
            if (cnt > MAX_GET_BYTES / es) abort(); /* the parser bounds it */
            void *buf = malloc(cnt * es + 1);
            CK(gpubp_attribute_data(f, names[i], buf));
            free(buf);
        }
    }
}

static void read_vars(gpubp_file *f, int random_access)
{
    size_t n = 0;
    const char *const *names;
    gbp_error_clear();
    int rc = gpubp_available_variables(f, &n, &names);
    check_err(rc);
    if (rc) return;
    /* copy the names: inquiries may not invalidate them, but be safe against our own misuse */
    for (size_t i = 0; i < n && i < MAX_ITEMS; i++) {
        gpubp_variable *v;
        gbp_error_clear();
        if (gpubp_inquire_variable(&v, f, names[i]) != GPUBP_OK) {
            fz_known_bug("BUG-2: a listed variable is not found by gpubp_inquire_variable");
            continue;
        }
        query_var(f, v, random_access);
    }
}

/* Opens the dataset at path in random access, again with select_steps=1:n:2, then in step mode
 * ("timeout=0"), and reads everything in it through the public API. Returns the status of the random-access open and, when
 * it opened, *nsteps: its steps (gpubp_steps). */
static int fz_read_dataset(const char *path, size_t *nsteps)
{
    gpubp_file *f = NULL;
    gbp_error_clear();
    int rc = gpubp_open(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, NULL), open_rc = rc;
    check_err(rc);
    *nsteps = 0;
    if (rc == GPUBP_OK) {
        CK(gpubp_steps(f, nsteps));
        read_vars(f, 1);
        attrs(f);
        CK(gpubp_close(f));
    }
    /* the odd steps only (select_steps, the records kept as they are read): never more steps */
    gbp_error_clear();
    rc = gpubp_open(&f, path, GPUBP_MODE_READ_RANDOM_ACCESS, "select_steps=1:n:2");
    check_err(rc);
    if (rc == GPUBP_OK) {
        size_t odd = 0;
        CK(gpubp_steps(f, &odd));
        if (open_rc == GPUBP_OK && odd > (*nsteps > 1 ? *nsteps : 1)) abort();
        read_vars(f, 1);
        CK(gpubp_close(f));
    }
    gbp_error_clear();
    rc = gpubp_open(&f, path, GPUBP_MODE_READ, "timeout=0");
    check_err(rc);
    if (rc == GPUBP_OK) {
        for (int s = 0; s < MAX_ITEMS; s++) {
            gbp_error_clear();
            rc = gpubp_begin_step(f);
            check_err(rc);
            if (rc != GPUBP_OK) break;
            size_t cur;
            CK(gpubp_current_step(f, &cur));
            read_vars(f, 0);
            CK(gpubp_end_step(f));
        }
        CK(gpubp_close(f));
    }
    return open_rc;
}

#endif /* GBP_FUZZ_READ_H */
