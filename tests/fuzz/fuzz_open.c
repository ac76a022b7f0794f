/* Fuzz target: the whole read path through the public API, on a dataset directory built from
 * the input: md.idx SEP md.0 SEP data.0 [SEP mmd.0] (a missing part is a missing file; with mmd.0
 * the dataset is BP5). Opens it in random
 * access and in step mode, lists variables and attributes, queries every variable's steps,
 * blocks, shapes and min/max, and gets every selection up to a size cap. A damaged file must
 * give an error status with a message, never a crash, a hang or a huge allocation. */
#include "common/common.h"
#include "fuzz/fuzz_util.h"
#include "gpubp.h"
#include "fuzz/fuzz_target.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_part parts[FZ_MAX_PARTS];
    fz_split(data, size, parts);
    const char *dir = fz_tmpdir();
    char ds[600];
    snprintf(ds, sizeof ds, "%s/o.bp", dir);
    mkdir(ds, 0777);
    fz_put_file(ds, "md.idx", &parts[0]);
    fz_put_file(ds, "md.0", &parts[1]);
    fz_put_file(ds, "data.0", &parts[2]);
    fz_put_file(ds, "mmd.0", &parts[3]);

    gpubp_file *f = NULL;
    gbp_error_clear();
    int rc = gpubp_open(&f, ds, GPUBP_MODE_READ_RANDOM_ACCESS, NULL);
    check_err(rc);
    if (rc == GPUBP_OK) {
        size_t ns;
        CK(gpubp_steps(f, &ns));
        read_vars(f, 1);
        attrs(f);
        CK(gpubp_close(f));
    }
    gbp_error_clear();
    rc = gpubp_open(&f, ds, GPUBP_MODE_READ, "timeout=0");
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
    return 0;
}
