/* Helpers of the staging-pipeline test (test_pipeline.c, pipe_pieces.c, pipe_fail.c): the
 * simulated device's parameters, scratch files, reference patterns and boxes, and the write and
 * read cases every part runs. */
#ifndef GPUBP_TESTS_PIPE_UTIL_H
#define GPUBP_TESTS_PIPE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "memspace/box.h"
#include "memspace/memspace.h"

/* A reference copy: pieces of a walk copied from a to b (pt_apply_piece). */
typedef struct pt_copy_ref {
    const uint8_t *a;
    uint8_t *b;
    int pieces;
} pt_copy_ref;

/* gbp_mem_open of p, asserting success. */
gbp_mem *pt_mem_open(gbp_params p);
/* The pipeline parameters on the simulated device: pool slots, chunk bytes, I/O threads. */
gbp_params pt_sim_params(int slots, size_t chunk, int threads);
/* A new empty scratch file (ts_path(name)) opened read-write. */
int pt_open_tmp(const char *name);
/* n bytes of fd at off, in a new buffer (caller frees). */
uint8_t *pt_read_back(int fd, uint64_t off, size_t n);
/* A deterministic, non-repeating byte pattern (so misplaced bytes show). */
void pt_fill_pattern(void *p, size_t n, unsigned seed);
/* n doubles of a deterministic pattern. */
void pt_fill_doubles(double *d, size_t n, unsigned seed);
/* Packs box b of the host array `base` (row-major), the reference for a write. */
uint8_t *pt_pack_ref(const void *base, const gbp_box *b, size_t el);
/* A box of nd dims: dims, start, count; returns the elements of dims. */
size_t pt_make_box(gbp_box *b, size_t nd, const size_t *dims, const size_t *start,
                   const size_t *count);
/* n bytes of simulated-device memory holding pt_fill_pattern(seed), and *b the dense 1-D box of
 * them. */
uint8_t *pt_dev_pattern(size_t n, unsigned seed, gbp_box *b);
/* gbp_box_walk3d callback: copies a piece from c->a to c->b (a pt_copy_ref) and counts it. */
int pt_apply_piece(void *vc, const gbp_piece *p);
/* Writes box `b` of a simulated-device array through the pipeline and checks the file and
 * min/max against host references. */
void pt_write_case(gbp_params p, size_t nd, const size_t *dims, const size_t *start,
                   const size_t *count, int type, uint64_t off);
/* Reads box (fstart, count) of a file block of bdims at off through the pipeline into box
 * (dstart, count) of an array of ddims in memory space sp (host memory, or the simulated
 * device); checks it against a host copy. */
void pt_read_into(gpubp_memory_space sp, gbp_params p, size_t nd, const size_t *bdims,
                  const size_t *fstart, const size_t *count, const size_t *ddims,
                  const size_t *dstart, size_t el, uint64_t off);
/* pt_read_into the simulated device. */
void pt_read_case(gbp_params p, size_t nd, const size_t *bdims, const size_t *fstart,
                  const size_t *count, const size_t *ddims, const size_t *dstart, size_t el,
                  uint64_t off);
/* After a failure and gbp_sim_reset(): the n device bytes at dev written whole at offset 0 of
 * fd, and the file checked. */
void pt_recovers(gbp_mem *m, int fd, const uint8_t *dev, size_t n);
/* Slot bytes the pipeline reused while a device copy still touched them, since the last reset
 * (the simulated device's check_idle, called at every pread into a slot and at every release of
 * a device write's slot). */
long pt_hazards(void);
/* pt_sim_params with piece_bytes: transfers copied in pieces. */
gbp_params pt_piece_params(int slots, size_t chunk, int threads, size_t piece);

#endif
