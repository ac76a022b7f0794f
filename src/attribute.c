/* The public API, Attributes section of <gpubp.h>: define, list, inquire and read attributes. */
#include "engine/handles.h"

/* ---- attributes ------------------------------------------------------------------------------ */

static void gbp_attr_def_clear(gbp_attr_def *a)
{
    gbp_free(a->data);
    for (size_t j = 0; a->strings && j < a->n; j++) gbp_free(a->strings[j]);
    gbp_free(a->strings);
    a->data = NULL;
    a->strings = NULL;
}

static int attr_same(const gbp_attr_def *a, int type, const void *data, size_t n)
{
    if (a->type != type || a->n != n) return 0;
    if (type == GPUBP_TYPE_STRING) return !strcmp(a->strings[0], (const char *)data);
    if (type == GPUBP_TYPE_STRING_ARRAY) {
        const char *const *s = data;
        for (size_t i = 0; i < n; i++)
            if (strcmp(a->strings[i], s[i])) return 0;
        return 1;
    }
    return !memcmp(a->data, data, n * gbp_type_size(type));
}

int gpubp_define_attribute(gpubp_file *f, const char *name, gpubp_type type, const void *data,
                           size_t n)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(name);
    GBP_CHECK_ARG(data);
    GBP_RETURN_ERROR_IF(!gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "gpubp_define_attribute: %s is open for reading", f->path);
    GBP_RETURN_ERROR_IF(!*name || strlen(name) > 65535, GPUBP_ERR_INVALID_ARG,
                        "gpubp_define_attribute: invalid name");
    GBP_RETURN_ERROR_IF(n == 0, GPUBP_ERR_INVALID_ARG,
                        "gpubp_define_attribute: '%s': no elements", name);
    GBP_RETURN_ERROR_IF(!gbp_type_known(type) && type != GPUBP_TYPE_STRING_ARRAY,
                        GPUBP_ERR_INVALID_ARG, "gpubp_define_attribute: '%s': invalid type %d",
                        name, (int)type);
    int t = type == GPUBP_TYPE_STRING && n > 1 ? GPUBP_TYPE_STRING_ARRAY : (int)type;
    if (t == GPUBP_TYPE_STRING_ARRAY) {
        const char *const *s = data;
        for (size_t i = 0; i < n; i++)
            GBP_RETURN_ERROR_IF(!s[i] || strlen(s[i]) > 65534, GPUBP_ERR_INVALID_ARG,
                                "gpubp_define_attribute: '%s': string %zu is NULL or too long",
                                name, i);
    } else if (t == GPUBP_TYPE_STRING) {
        GBP_RETURN_ERROR_IF(strlen(data) > 65535, GPUBP_ERR_INVALID_ARG,
                            "gpubp_define_attribute: '%s': string too long", name);
    }
    gbp_attr_def *a = NULL;
    for (size_t i = 0; i < f->wr.nattrs; i++)
        if (!strcmp(f->wr.attrs[i].name, name)) a = &f->wr.attrs[i];
    if (a && attr_same(a, t, data, n)) return GPUBP_OK;
    /* build the new value aside, so that a failure leaves the attribute as it was */
    gbp_attr_def nv;
    memset(&nv, 0, sizeof nv);
    nv.type = t;
    nv.n = n;
    nv.dirty = 1;
    int rc = GPUBP_OK;
    if (t == GPUBP_TYPE_STRING || t == GPUBP_TYPE_STRING_ARRAY) {
        nv.strings = gbp_calloc(n, sizeof(char *));
        if (!nv.strings) rc = GPUBP_ERR_NOMEM;
        for (size_t i = 0; rc == GPUBP_OK && i < n; i++) {
            const char *src = t == GPUBP_TYPE_STRING_ARRAY ? ((const char *const *)data)[i] : (const char *)data;
            nv.strings[i] = gbp_strdup(src);
            if (!nv.strings[i]) rc = GPUBP_ERR_NOMEM;
        }
    } else {
        size_t bytes = n * gbp_type_size(t);
        nv.data = gbp_malloc(bytes);
        if (nv.data) memcpy(nv.data, data, bytes);
        else rc = GPUBP_ERR_NOMEM;
        for (size_t i = 0; nv.data && t == GPUBP_TYPE_LONG_DOUBLE && i < n; i++)
            memset(nv.data + 16 * i + 10, 0, 6); /* padding: zeros, as ADIOS2's are */
    }
    if (rc == GPUBP_OK && !a) {
        nv.name = gbp_strdup(name);
        if (!nv.name) rc = GPUBP_ERR_NOMEM;
        if (rc == GPUBP_OK &&
            gbp_grow((void **)&f->wr.attrs, &f->wr.cap_attrs, f->wr.nattrs + 1,
                     sizeof *f->wr.attrs))
            rc = GPUBP_ERR_NOMEM;
    }
    if (rc != GPUBP_OK) {
        gbp_free(nv.name);
        gbp_attr_def_clear(&nv);
        return gbp_error(GPUBP_ERR_NOMEM, 0, "gpubp_define_attribute: '%s': out of memory", name);
    }
    if (a) {
        gbp_attr_def_clear(a);
        a->type = nv.type;
        a->n = nv.n;
        a->data = nv.data;
        a->strings = nv.strings;
        a->dirty = 1;
    } else {
        nv.member_id = (uint32_t)f->wr.nattrs;
        f->wr.attrs[f->wr.nattrs++] = nv;
    }
    return GPUBP_OK;
}

int gpubp_define_variable_attribute(gpubp_file *f, const char *var, const char *name,
                                    gpubp_type type, const void *data, size_t n)
{
    GBP_CHECK_ARG(var);
    GBP_CHECK_ARG(name);
    size_t a = strlen(var), b = strlen(name);
    char *full = gbp_malloc(a + b + 2);
    GBP_CHECK_ALLOC(full);
    memcpy(full, var, a);
    full[a] = '/';
    memcpy(full + a + 1, name, b + 1);
    int rc = gpubp_define_attribute(f, full, type, data, n);
    gbp_free(full);
    return rc;
}

int gpubp_available_attributes(const gpubp_file *fc, size_t *n, const char *const **names)
{
    GBP_CHECK_ARG(fc);
    GBP_CHECK_ARG(n);
    GBP_CHECK_ARG(names);
    gpubp_file *f = (gpubp_file *)fc;
    gbp_free(f->anames);
    size_t cap = (gbp_is_write_mode(f) ? f->wr.nattrs : f->rd.ix.nattrs) + 1;
    f->anames = gbp_malloc(cap * sizeof *f->anames);
    GBP_CHECK_ALLOC(f->anames);
    size_t k = 0;
    if (gbp_is_write_mode(f)) {
        for (size_t i = 0; i < f->wr.nattrs; i++) f->anames[k++] = f->wr.attrs[i].name;
    } else {
        for (size_t i = 0; i < f->rd.ix.nattrs; i++) f->anames[k++] = f->rd.ix.attrs[i].name;
    }
    gbp_sort_names(f->anames, k);
    f->nanames = k;
    *n = k;
    *names = f->anames;
    return GPUBP_OK;
}

static int gbp_find_attr(const gpubp_file *f, const char *name, const gbp_attr **a)
{
    GBP_RETURN_ERROR_IF(gbp_is_write_mode(f), GPUBP_ERR_WRONG_MODE,
                        "attribute queries need a file open for reading");
    *a = gbp_file_find_attr(f, name);
    GBP_RETURN_ERROR_IF(!*a, GPUBP_ERR_NOT_FOUND, "attribute '%s' is not in %s", name, f->path);
    return GPUBP_OK;
}

/* An attribute of a type this library cannot read is listed; its data is not readable. */
static int attr_readable(const gpubp_file *f, const gbp_attr *a)
{
    if (gbp_type_known(a->type)) return GPUBP_OK;
    return gbp_error(GPUBP_ERR_UNSUPPORTED_TYPE, 0,
                     "attribute '%s' of %s has BP4 type id %d, which libgpubp cannot read",
                     a->name, f->path, a->type);
}

int gpubp_inquire_attribute(const gpubp_file *f, const char *name, gpubp_type *type, size_t *n,
                            int *is_array)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(name);
    const gbp_attr *a;
    GBP_FORWARD_IF_ERROR(gbp_find_attr(f, name, &a));
    if (type) *type = (gpubp_type)a->type;
    if (n) *n = a->n;
    if (is_array) *is_array = a->is_array;
    return GPUBP_OK;
}

int gpubp_attribute_data(const gpubp_file *f, const char *name, void *data)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(name);
    GBP_CHECK_ARG(data);
    const gbp_attr *a;
    GBP_FORWARD_IF_ERROR(gbp_find_attr(f, name, &a));
    GBP_FORWARD_IF_ERROR(attr_readable(f, a));
    GBP_RETURN_ERROR_IF(a->type == GPUBP_TYPE_STRING, GPUBP_ERR_TYPE_MISMATCH,
                        "attribute '%s' is a string: use gpubp_attribute_string", name);
    memcpy(data, a->data, a->n * gbp_type_size(a->type));
    return GPUBP_OK;
}

int gpubp_attribute_string(const gpubp_file *f, const char *name, size_t i, const char **s)
{
    GBP_CHECK_ARG(f);
    GBP_CHECK_ARG(name);
    GBP_CHECK_ARG(s);
    const gbp_attr *a;
    GBP_FORWARD_IF_ERROR(gbp_find_attr(f, name, &a));
    GBP_FORWARD_IF_ERROR(attr_readable(f, a));
    GBP_RETURN_ERROR_IF(a->type != GPUBP_TYPE_STRING, GPUBP_ERR_TYPE_MISMATCH,
                        "attribute '%s' is not a string", name);
    GBP_RETURN_ERROR_IF(i >= a->n, GPUBP_ERR_INVALID_SELECTION,
                        "attribute '%s' has %zu strings; %zu requested", name, a->n, i);
    *s = a->strings[i];
    return GPUBP_OK;
}
