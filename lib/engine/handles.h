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

#endif /* GBP_ENGINE_HANDLES_H */
