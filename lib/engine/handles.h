/* lib/engine/handles.h: see handles.c. */
#ifndef GBP_ENGINE_HANDLES_H
#define GBP_ENGINE_HANDLES_H

#include "engine/engine_internal.h"

int gbp_is_write_mode_value(gpubp_mode m);
int gbp_is_write_mode(const gpubp_file *f);
void gbp_reverse(size_t *d, size_t n);
/* Whether dims given in `space` are stored reversed in the file. */
int gbp_space_reverses(const gpubp_file *f, gpubp_memory_space space);
/* Prefixes the error record's message with the dataset path (when it lacks it); returns rc. */
int gbp_error_with_path(int rc, const char *path);
int gbp_file_add_var(gpubp_file *f, gpubp_variable *v);
/* A new handle owned by f (type, kind set; memory space DETECT). */
int gbp_file_new_var(gpubp_file *f, const char *name, int type, int kind, gpubp_variable **out);
gpubp_variable *gbp_file_var(const gpubp_file *f, const char *name);
int gbp_resolve_space(gpubp_variable *v, const void *ptr, gpubp_memory_space *space);
/* Sorts n names in strcmp order. */
void gbp_sort_names(const char **names, size_t n);

/* A reader's attribute `name` (its index), or NULL. */
const gbp_attr *gbp_file_find_attr(const gpubp_file *f, const char *name);
/* Whether the reader's variable rv has blocks in the open step f->rd.cur_step. */
int gbp_file_step_has(const gpubp_file *f, const gbp_var *rv);
/* The device of f's memory context: gbp_mem_device_status's GPUBP_OK, GPUBP_ERR_NOMEM or
 * another status when GPU memory is not supported. */
int gbp_file_device_status(const gpubp_file *f);
/* The CUDA stream of f's device work (gbp_mem_set_stream). */
int gbp_file_set_stream(gpubp_file *f, void *cuda_stream);

#endif /* GBP_ENGINE_HANDLES_H */
