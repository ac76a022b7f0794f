/* lib/format/bp5_ffs.h: see bp5_ffs.c: mmd.0 and its FFS format descriptions (§4, §5), the
 * ADIOS2 DataType numbers, and the damaged-input error of the BP5 decoders. */
#ifndef GBP_FORMAT_BP5_FFS_H
#define GBP_FORMAT_BP5_FFS_H

#include <stddef.h>
#include <stdint.h>

#include "format/bp5.h"

/* Records GPUBP_ERR_FORMAT "WHAT: damaged REGION at offset OFF: message" and returns it
 * (every BP5 decoder reports damaged input through it). */
int bp5_damaged(const char *what, const char *region, uint64_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((cold, format(printf, 4, 5)))
#endif
    ;

void bp5_formats_init(bp5_formats *ft);
void bp5_formats_free(bp5_formats *ft);
/* Parses the entries of mmd.0 after ft->parsed (p: the file as read so far). A partial last entry
 * is left for the next call when partial_ok, else it is an error. Identical duplicates are kept
 * once; a different description under a known id is an error. */
int bp5_formats_parse(bp5_formats *ft, const uint8_t *p, size_t n, int partial_ok,
                      const char *what);
/* Parses one FFS description (desc_len bytes, at mmd.0 offset file_off) into *f. Owns nothing of
 * p afterwards (the description is copied). Exposed for the fuzz target. */
int bp5_format_parse(bp5_format *f, const uint8_t id[BP5_ID_LEN], const uint8_t *p, size_t n,
                     uint64_t file_off, const char *what);
void bp5_format_free(bp5_format *f);
/* The ADIOS2 DataType of the elements of FFS field fl (§7.5; its dimensions aside), 0 when none. */
int bp5_ffs_value_type(const bp5_format *f, const bp5_ffs_field *fl);
const bp5_format *bp5_formats_find(bp5_formats *ft, const uint8_t id[BP5_ID_LEN]);

/* The record layout of a struct array whose elements are esize bytes, from its FFS description
 * f (ADIOS2 registers one per IO::DefineStruct; the variable's field name carries its id). *out is
 * a new definition (gbp_struct_def_free), or NULL with *why saying what it cannot present (a
 * pointer or string field, a size that differs); NOMEM only is an error. */
int bp5_struct_def(const bp5_format *f, size_t esize, gbp_struct_def **out, const char **why);

/* GPUBP type of an ADIOS2 DataType number, -1 when it has none here. */
int bp5_gpubp_type(int bp5_type);

#endif /* GBP_FORMAT_BP5_FFS_H */
