/* Handles: the variable table of a file, layout flips, memory-space resolution, the path
 * prefix of messages, name sorting. */
#include "engine/handles.h"

#include "compress/blosczlib.h"
#include "gpubp/cuda.h"
#include "memspace/box.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int gbp_is_write_mode_value(gpubp_mode m)
{
    return m == GPUBP_MODE_WRITE || m == GPUBP_MODE_APPEND;
}

int gbp_is_write_mode(const gpubp_file *f) { return gbp_is_write_mode_value(f->mode); }

void gbp_reverse(size_t *d, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        size_t t = d[i];
        d[i] = d[n - 1 - i];
        d[n - 1 - i] = t;
    }
}

int gbp_space_reverses(const gpubp_file *f, gpubp_memory_space space)
{
    return space == GPUBP_MEM_GPU && !f->params.gpu_row_major;
}

int gbp_error_with_path(int rc, const char *path)
{
    gbp_saved_error e;
    gbp_error_save(&e, rc, sizeof e.msg);
    if (strstr(e.msg, path)) return gbp_error_restore(&e, rc);
    return gbp_error(rc, e.native, "%s: %s", path, e.msg);
}

int gbp_file_add_var(gpubp_file *f, gpubp_variable *v)
{
    GBP_FORWARD_IF_ERROR(gbp_grow((void **)&f->vars, &f->cap_vars, f->nvars + 1, sizeof *f->vars));
    f->vars[f->nvars++] = v;
    return GPUBP_OK;
}

int gbp_file_new_var(gpubp_file *f, const char *name, int type, int kind, gpubp_variable **out)
{
    gpubp_variable *v = gbp_calloc(1, sizeof *v);
    GBP_CHECK_ALLOC(v);
    v->name = gbp_strdup(name);
    if (!v->name || gbp_file_add_var(f, v) != GPUBP_OK) {
        gbp_free(v->name);
        gbp_free(v);
        return gbp_nomem();
    }
    v->file = f;
    v->type = type;
    v->kind = kind;
    v->space = GPUBP_MEM_DETECT;
    *out = v;
    return GPUBP_OK;
}

gpubp_variable *gbp_file_var(const gpubp_file *f, const char *name)
{
    for (size_t i = 0; i < f->nvars; i++)
        if (!strcmp(f->vars[i]->name, name)) return f->vars[i];
    return NULL;
}

int gbp_resolve_space(gpubp_variable *v, const void *ptr, gpubp_memory_space *space)
{
    gpubp_memory_space det;
    GBP_FORWARD_IF_ERROR(gbp_mem_detect(v->file->mem, ptr, &det));
    if (v->space == GPUBP_MEM_DETECT) {
        v->space = det;
    } else if (v->space != det) {
        return gbp_error(GPUBP_ERR_MEMORY_SPACE, 0,
                         "variable '%s' is set to %s memory but the buffer %p is %s memory",
                         v->name, v->space == GPUBP_MEM_GPU ? "GPU" : "host", ptr,
                         det == GPUBP_MEM_GPU ? "device" : "host");
    }
    *space = v->space;
    return GPUBP_OK;
}

/* ---- listings and attributes ---------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void gbp_sort_names(const char **names, size_t n) { qsort(names, n, sizeof *names, cmp_str); }

const gbp_attr *gbp_file_find_attr(const gpubp_file *f, const char *name)
{
    return gbp_index_find_attr(&f->rd.ix, name);
}

int gbp_file_step_has(const gpubp_file *f, const gbp_var *rv)
{
    return gbp_var_find_step(rv, f->rd.cur_step) != NULL;
}

int gbp_file_device_status(const gpubp_file *f) { return gbp_mem_device_status(f->mem); }

int gbp_file_set_stream(gpubp_file *f, void *cuda_stream)
{
    return gbp_mem_set_stream(f->mem, cuda_stream);
}
