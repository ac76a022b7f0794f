/* lib/format/bp5_meta.h: see bp5_meta.c: the FFS-encoded metadata and attribute blocks of md.0
 * (§6-§8). */
#ifndef GBP_FORMAT_BP5_META_H
#define GBP_FORMAT_BP5_META_H

#include <stddef.h>
#include <stdint.h>

#include "format/bp5.h"

/* Frees the decoders' scratch storage and clears *s (NULL is allowed). */
void bp5_scratch_free(bp5_scratch *s);

/* Decodes one writer's metadata block (n bytes at md.0 offset file_off). */
int bp5_decode_metadata(bp5_formats *ft, const uint8_t *p, size_t n, uint64_t file_off,
                        uint64_t writer, int column_major, bp5_scratch *s,
                        const bp5_md_sink *sink, const char *what);
/* Decodes one attribute block (either encoding, §8). */
int bp5_decode_attrs(bp5_formats *ft, const uint8_t *p, size_t n, uint64_t file_off,
                     const bp5_md_sink *sink, const char *what);
/* Decodes step s's md.0 block: p holds its MetadataSize bytes (md.0 offset md_pos). Writers'
 * blocks in rank order, then the attribute blocks in slot order. */
int bp5_decode_step(const bp5_idx *ix, bp5_formats *ft, size_t s, const uint8_t *p, size_t n,
                    bp5_scratch *scr, const bp5_md_sink *sink, const char *what);

#endif /* GBP_FORMAT_BP5_META_H */
