/* lib/format: the BP4 on-disk format in memory (docs/format/bp4.md). Encoding and
 * decoding only: no I/O, no CUDA. Every read is bounds-checked; failures are GPUBP_ERR_FORMAT
 * with the file name and offset in the message.
 *
 * This header holds what the BP4 files share: sizes, ids and the md.idx record. The functions are
 * declared in the header of the .c that defines them: format/bp4_encode.h (headers, records,
 * md.0 entries), format/bp4_decode.h (md.idx and md.0 parsing), format/bp4_merge.h (the merge of
 * several writers' step metadata), format/bp4_index.h (the reader's index filled from md.0). */
#ifndef GBP_BP4_H
#define GBP_BP4_H

#include <stdint.h>

#include "common/common.h"
#include "format/index.h"

#define BP4_HEADER_SIZE 64
#define BP4_IDX_RECORD_SIZE 64
/* The header byte that says a writer is still active (md.idx): 1 while writing, 0 once closed. */
#define BP4_IDX_ACTIVE_AT 38
/* The BP4 type id of a string array (attributes only); 9 is a single string. */
#define BP4_TYPE_STRING_ARRAY 12
#define BP4_LOCAL_VALUE_DIM GBP_LOCAL_VALUE_DIM
#define BP4_JOINED_DIM GBP_JOINED_DIM

enum { BP4_KIND_INDEX = 0, BP4_KIND_METADATA = 1, BP4_KIND_DATA = 2 };

/* Characteristic ids (docs/format/bp4.md 5.4). */
enum {
    BP4_CHR_VALUE = 0, BP4_CHR_MIN = 1, BP4_CHR_MAX = 2, BP4_CHR_OFFSET = 3, BP4_CHR_DIMENSIONS = 4,
    BP4_CHR_VAR_ID = 5, BP4_CHR_PAYLOAD_OFFSET = 6, BP4_CHR_FILE_INDEX = 7, BP4_CHR_TIME_INDEX = 8,
    BP4_CHR_BITMAP = 9, BP4_CHR_STAT = 10, BP4_CHR_TRANSFORM = 11, BP4_CHR_MINMAX = 12
};
/* The statistics of a BP4_CHR_STAT characteristic, in the order they follow each other (the bits
 * of the BP4_CHR_BITMAP before it). libgpubp writes only BP4_STAT_CNT: the split marker. */
enum {
    BP4_STAT_MIN = 0, BP4_STAT_MAX = 1, BP4_STAT_CNT = 2, BP4_STAT_SUM = 3, BP4_STAT_SUM_SQUARE = 4,
    BP4_STAT_HIST = 5, BP4_STAT_FINITE = 6
};

/* One md.idx record (docs/format/bp4.md 4): written by bp4_make_idx_record, read by
 * bp4_parse_idx_record. */
typedef struct bp4_idx_record {
    uint64_t step, rank, pg_off, var_off, attr_off, end, timestamp;
} bp4_idx_record;

/* ---- the loader context of the reader's index (format/bp4_index.h) ------------------------- */

/* Reads n bytes of md.0 at off into buf (exactly, or an error). */
typedef int (*bp4_read_fn)(void *ctx, uint64_t off, size_t n, uint8_t *buf);

/* The loader context of a BP4 index: md.0 through read(ctx, ...). */
typedef struct bp4_md0 {
    bp4_read_fn read;
    void *ctx;
} bp4_md0;

#endif /* GBP_BP4_H */
