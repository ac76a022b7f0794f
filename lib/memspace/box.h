/* Internal to lib/memspace: walking the contiguous runs of boxes, the 3-D strided copies that a
 * pair of boxes decomposes into, and the cutting of a box into chunks that fit a staging slot. */
#ifndef GBP_BOX_H
#define GBP_BOX_H

#include "memspace/memspace.h"

/* Called for each contiguous run: byte offsets of the run in array a and in array b (0 when b is
 * NULL), and its length in bytes. A non-zero return stops the walk and is returned. */
typedef int (*gbp_run_fn)(void *ctx, size_t a_off, size_t b_off, size_t bytes);

/* Walks the runs of box a (and of box b, which has the same counts) in row-major order. */
int gbp_box_foreach_run(const gbp_box *a, const gbp_box *b, size_t elsize, gbp_run_fn fn,
                        void *ctx);

/* Copies the runs of box a, read out of src, into box b of dst (same counts), in host memory:
 * src holds a's array from its byte `sub` on (a's runs lie at or after it), dst b's whole array. */
void gbp_box_copy_runs(const gbp_box *a, const gbp_box *b, size_t elsize, const uint8_t *src,
                       size_t sub, uint8_t *dst);

/* The bytes of each run that gbp_box_foreach_run(a, b, ...) calls fn for (b may be NULL). */
size_t gbp_box_run_bytes(const gbp_box *a, const gbp_box *b, size_t elsize);

/* Bytes from the first to the last byte of box a in its array (0 for an empty box). */
size_t gbp_box_span(const gbp_box *a, size_t elsize);

/* Reading a strided box: one pread of its whole span (then dropping what lies between the
 * runs), or one pread per run (only the runs' bytes leave the page cache, at the price of a
 * call each). Measured on warm files (docs/performance.md, "Strided reads"): a call costs about
 * what copying 2-4 KiB does, so the runs are read one by one where the bytes skipped between
 * them are GBP_SPARSE_GAP or more per run on average. */
#define GBP_SPARSE_GAP ((size_t)4096)
int gbp_box_sparse_pays(size_t span, size_t bytes, size_t run);

/* One 3-D strided piece of a box-to-box copy: byte offsets of its first byte in arrays a and b,
 * `width` contiguous bytes per row, `height` rows, `depth` slices, and the byte strides of rows
 * and slices in each array. */
typedef struct gbp_piece {
    size_t a_off, b_off;
    size_t width, height, depth;
    size_t apitch, aslice, bpitch, bslice;
} gbp_piece;
typedef int (*gbp_piece_fn)(void *ctx, const gbp_piece *p);

/* Decomposes the copy of box a into box b (same counts) into as few 3-D pieces as the strides
 * allow (dims of count 1 dropped, dims contiguous in both arrays merged), in row-major order. */
int gbp_box_walk3d(const gbp_box *a, const gbp_box *b, size_t elsize, gbp_piece_fn fn, void *ctx);

/* Cuts a box into chunks, each a sub-box that is contiguous in the box's packed row-major order:
 * fixed indices in dims < cut, a range of indices in dim `cut`, everything in dims > cut.
 * by_span 0: a chunk's packed size is at most `limit` bytes (writes: the slot holds the packed
 * chunk). by_span 1: the extent in the box's array from a chunk's first to last byte is at most
 * `limit` (reads: the slot holds that span of the file). `limit` must be >= elsize. */
typedef struct gbp_chunker {
    gbp_box box;
    size_t elsize;
    size_t cut, step;            /* dim cut; indices per chunk in it */
    size_t idx[GBP_MAX_DIMS];    /* next chunk's start, relative to box->start */
    int done;
} gbp_chunker;

typedef struct gbp_chunk {
    gbp_box a;          /* the chunk as a box of the array of `box` (dims, absolute start) */
    size_t count[GBP_MAX_DIMS];
    size_t rel[GBP_MAX_DIMS];  /* its start relative to the box */
    size_t packed_off;  /* byte offset of its first element in the box's packed order */
    size_t bytes;       /* packed bytes */
    size_t span_off;    /* byte offset in the array of its first byte */
    size_t span;        /* bytes from its first to its last byte in the array */
} gbp_chunk;

void gbp_chunker_init(gbp_chunker *c, const gbp_box *box, size_t elsize, size_t limit,
                      int by_span);
int gbp_chunker_next(gbp_chunker *c, gbp_chunk *out); /* 1: a chunk; 0: no more */

/* The same sub-box (counts `count`, start relative `rel`) placed in another box. */
void gbp_box_sub(gbp_box *out, const gbp_box *in, const size_t *rel, const size_t *count);

#endif
