/* The api fixtures (tests/support/api_util.h). */
#include "support/api_util.h"

gpubp_file *au_open(const char *path, gpubp_mode mode) { return ts_open(path, mode, NULL); }

gpubp_variable *au_inq(gpubp_file *f, const char *name)
{
    gpubp_variable *v = NULL;
    TS_OK(gpubp_inquire_variable(&v, f, name));
    assert_non_null(v);
    return v;
}

gpubp_file *au_reopen(gpubp_file *w, const char *path, gpubp_mode mode)
{
    TS_OK(gpubp_close(w));
    AU_CHECK(path);
    return au_open(path, mode);
}

gpubp_file *au_close_inq(gpubp_file *w, const char *path, const char *name, gpubp_variable **rv)
{
    TS_OK(gpubp_close(w));
    gpubp_file *r = au_open(path, GPUBP_MODE_READ_RANDOM_ACCESS);
    *rv = au_inq(r, name);
    return r;
}

void au_steps(gpubp_file *f, size_t want)
{
    size_t n = 0;
    TS_OK(gpubp_steps(f, &n));
    assert_int_equal(n, want);
}

void au_var_steps(gpubp_variable *v, size_t want)
{
    size_t n = 0;
    TS_OK(gpubp_variable_steps(v, &n));
    assert_int_equal(n, want);
}

void au_get_step(gpubp_file *r, gpubp_variable *v, size_t step, void *buf, size_t bytes)
{
    size_t n = 0;
    TS_OK(gpubp_set_step_selection(v, step, 1));
    TS_OK(gpubp_selection_size(v, &n));
    assert_int_equal(n, bytes);
    TS_OK(gpubp_get(r, v, buf, GPUBP_SYNC));
}

void au_write_one(const char *path, gpubp_mode mode, const char *name, gpubp_type type,
                  size_t ndims, const size_t *shape, const void *data)
{
    gpubp_file *w = au_open(path, mode);
    ts_put_step(w, ts_define(w, name, type, ndims, shape, NULL), data, GPUBP_SYNC);
    TS_OK(gpubp_close(w));
}
