/* lib/engine/engine.h: see engine.c. */
#ifndef GBP_ENGINE_ENGINE_H
#define GBP_ENGINE_ENGINE_H

#include "engine/engine_internal.h"

/* gpubp_features: the codecs this build has (lib/compress) and CUDA when a device is usable
 * (a memory context of the default parameters is opened and closed to find out). */
unsigned gbp_engine_features(void);
/* gpubp_codec_versions: the codec libraries' versions as the running libraries report them. */
const char *gbp_engine_codec_versions(void);
/* Frees a file and everything it holds (no I/O of the format: gbp_engine_close first). */
void gbp_engine_free(gpubp_file *f);
/* Opens a file (comm: a parallel open, taken over; NULL: serial); *out is set on success. */
int gbp_engine_open(gpubp_file **out, const char *path, gpubp_mode mode, const char *params,
                     gbp_comm *comm);
/* The role choice (reader, serial writer, parallel writer) of the step calls; src/ checks the
 * arguments and the mode first. */
int gbp_engine_begin_step(gpubp_file *f);
int gbp_engine_end_step(gpubp_file *f);
/* A put: checked, its block added, and for a SYNC put performed (serial) or staged (parallel);
 * a parallel writer's failed put fails the step on every rank. */
int gbp_engine_put(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch mode);
/* perform_puts of an open step. */
int gbp_engine_perform_puts(gpubp_file *f);
/* Ends the open step and finishes the file (writers: the empty first step, the last commit, the
 * writer-active flag; parallel files agree); the file is then freed with gbp_engine_free. */
int gbp_engine_close(gpubp_file *f);

#endif /* GBP_ENGINE_ENGINE_H */
