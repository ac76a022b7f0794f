/* lib/format/bp5_idx.h: see bp5_idx.c: md.idx (§3): the header, the writers' maps and the step
 * records, parsed incrementally. */
#ifndef GBP_FORMAT_BP5_IDX_H
#define GBP_FORMAT_BP5_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "format/bp5.h"

void bp5_idx_init(bp5_idx *ix);
void bp5_idx_free(bp5_idx *ix);
/* Parses md.idx (p: the whole file as read so far, n bytes), continuing after ix->parsed: the
 * header on the first call, then every complete record. A partial last record is left for the next
 * call when the header says the writer is active (or `partial_ok`), else it is an error. Each step
 * record is checked: its length, its md.0 block against md0_size (pass UINT64_MAX to skip), and a
 * writer map must precede it. Errors: FORMAT (naming `what` and the offset), NOT_SUPPORTED (BP5
 * minor version other than 2), NOMEM. On error ix keeps the records parsed before it. */
int bp5_idx_parse(bp5_idx *ix, const uint8_t *p, size_t n, uint64_t md0_size, int partial_ok,
                  const char *what);
/* The same over q, the file's bytes [base, base + n) (base <= the offset parsed so far; 0 for the
 * first call, whose bytes hold the header): md.idx read in pieces. more: bytes follow in the file,
 * so a record cut at the end of q waits for the next piece. */
int bp5_idx_parse_at(bp5_idx *ix, const uint8_t *q, size_t n, size_t base, int more,
                     uint64_t md0_size, int partial_ok, const char *what);
/* Where a block of writer w in step s lies: loc is its DataBlockLocation (§9.2). */
int bp5_locate(const bp5_idx *ix, size_t s, uint64_t w, uint64_t loc, uint64_t *subfile,
               uint64_t *offset, const char *what);

#endif /* GBP_FORMAT_BP5_IDX_H */
