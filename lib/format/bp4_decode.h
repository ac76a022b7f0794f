/* lib/format/bp4_decode.h: see bp4_decode.c: BP4 decoding (md.idx's header and records, md.0's
 * step blocks), every length and offset checked before use. */
#ifndef GBP_FORMAT_BP4_DECODE_H
#define GBP_FORMAT_BP4_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "format/bp4.h"
#include "format/index.h"

/* Checks md.idx's header (BP version 4, little-endian). `what` names the file in messages. */
int bp4_check_idx_header(const uint8_t *p, size_t n, const char *what);
/* Parses record i (0-based) of md.idx (p is the whole file) and checks it: step == i + 1, the
 * four md.0 pointers ordered and within [64, md0_size]. */
int bp4_parse_idx_record(const uint8_t *p, size_t n, size_t i, uint64_t md0_size,
                         bp4_idx_record *r, const char *what);

/* Parses the step block of record r, calling the sink. p holds md.0 bytes [base, base + n), which
 * must cover the step. *column_major receives the first PG entry's flag. Unknown variable types
 * are skipped. */
int bp4_parse_step(const uint8_t *p, uint64_t base, size_t n, const bp4_idx_record *r,
                   int *column_major, const gbp_step_sink *sink, const char *what);
/* Parses the variable entries in p[0, n) (md.0 bytes starting at offset base). */
int bp4_parse_var_entries(const uint8_t *p, uint64_t base, size_t n, const gbp_step_sink *sink,
                          const char *what);

/* One characteristic set of an index entry (bp4_walk_sets): the entry's offset in p (its length
 * field), the length of its header (from that field to its first set: member id, names, type and
 * set count), the set's offset and length (count and length fields included) and its time index
 * (0 when the walk is not timed). A non-zero return stops the walk and is returned. */
typedef int (*bp4_set_fn)(void *ctx, size_t entry_at, size_t hdr_len, size_t set_at,
                          size_t set_len, uint32_t step);
/* Calls fn for every characteristic set of the index entries in p[0, n) (file offset base, for
 * messages), in order. timed: each set is parsed (variables: its time index is given); else only
 * its framing is checked (attributes). BP3's index of all steps (format/bp3.c) is cut into steps
 * with it: an entry with a path (BP3's two bytes after the name, empty in ADIOS2's files; ADIOS
 * 1.x's paths) is GPUBP_ERR_NOT_SUPPORTED. */
int bp4_walk_sets(const uint8_t *p, uint64_t base, size_t n, int timed, bp4_set_fn fn,
                  void *ctx, const char *what);

#endif /* GBP_FORMAT_BP4_DECODE_H */
