/* The decomposition the MPI tests write (tests/mpi), as plain C arithmetic: which blocks each rank
 * of P writes and the value of every element, so that a reader can compute what any box, block or
 * value must hold. No libgpubp or MPI call here: the ADIOS2 oracle program (outside the repository,
 * docs/scaling.md) includes this header to write the same dataset with ADIOS2.
 *
 * Variables of the "decomp" dataset (every step; values depend on the step):
 *   g1      double   1-D global {sum(3+r)}: rank r writes one block of 3+r elements (uneven)
 *   g2      float    2-D global {3*py, 5*px}: a py x px process grid, blocks {3, 5}
 *   g3      int32_t  3-D global {2, 3, 4*P}: rank r writes {2, 3, 4} at {0, 0, 4r}
 *   multi   uint16_t 1-D global: rank 0 writes no block (when P > 1), rank 1 (or the only rank)
 *                    two blocks, every other rank one; block b of a rank has 2+b elements; blocks
 *                    are laid out in (rank, block) order
 *   loc     int64_t  local array: rank 1 writes two blocks (1 and 2 elements), rank r != 1 one
 *                    block of r+1 elements
 *   step    int32_t  global value, put by rank 0 only: the step
 *   rankval int32_t  global value, put by every rank: 10*r + step
 *   note    string   global value, put by rank 0 only: "step S"
 * Attributes (defined by every rank): dt = 0.25 (double), unit = "kelvin", g2/units = "m/s". */
#ifndef GPUBP_TESTS_MPI_CASE_H
#define GPUBP_TESTS_MPI_CASE_H

#include <stddef.h>
#include <stdint.h>

#define MC_MAX_BLOCKS 2 /* blocks one rank writes of one variable, at most */

/* g1 */
static inline size_t mc_g1_count(int r) { return 3 + (size_t)r; }
static inline size_t mc_g1_start(int r) { return 3 * (size_t)r + (size_t)r * (size_t)(r - 1) / 2; }
static inline size_t mc_g1_shape(int p) { return mc_g1_start(p); }
static inline double mc_g1_value(size_t step, size_t i) { return (double)step * 1000.0 + (double)i + 0.5; }

/* g2: a py x px grid of ranks, row-major rank order */
static inline int mc_g2_py(int p) { return (p >= 4 && p % 2 == 0) ? 2 : 1; }
static inline int mc_g2_px(int p) { return p / mc_g2_py(p); }
static inline void mc_g2_block(int p, int r, size_t shape[2], size_t start[2], size_t count[2])
{
    shape[0] = 3 * (size_t)mc_g2_py(p);
    shape[1] = 5 * (size_t)mc_g2_px(p);
    start[0] = 3 * (size_t)(r / mc_g2_px(p));
    start[1] = 5 * (size_t)(r % mc_g2_px(p));
    count[0] = 3;
    count[1] = 5;
}
static inline float mc_g2_value(size_t step, size_t i, size_t j)
{
    return (float)(step * 1000 + i * 100 + j);
}

/* g3 */
static inline void mc_g3_block(int p, int r, size_t shape[3], size_t start[3], size_t count[3])
{
    shape[0] = 2, shape[1] = 3, shape[2] = 4 * (size_t)p;
    start[0] = 0, start[1] = 0, start[2] = 4 * (size_t)r;
    count[0] = 2, count[1] = 3, count[2] = 4;
}
static inline int32_t mc_g3_value(size_t step, size_t i, size_t j, size_t k)
{
    return (int32_t)(step * 10000 + i * 1000 + j * 100 + k);
}

/* multi: blocks in (rank, block) order */
static inline int mc_multi_nblocks(int p, int r)
{
    if (p > 1 && r == 0) return 0;
    return (r == 1 || p == 1) ? 2 : 1;
}
static inline size_t mc_multi_count(int b) { return 2 + (size_t)b; }
/* start of block b of rank r; with r = p, b = 0: the shape */
static inline size_t mc_multi_start(int p, int r, int b)
{
    size_t s = 0;
    for (int q = 0; q < r; q++)
        for (int c = 0; c < mc_multi_nblocks(p, q); c++) s += mc_multi_count(c);
    for (int c = 0; c < b; c++) s += mc_multi_count(c);
    return s;
}
static inline size_t mc_multi_shape(int p) { return mc_multi_start(p, p, 0); }
static inline uint16_t mc_multi_value(size_t step, size_t i) { return (uint16_t)(step * 100 + i); }

/* loc */
static inline int mc_loc_nblocks(int r) { return r == 1 ? 2 : 1; }
static inline size_t mc_loc_count(int r, int b) { return r == 1 ? (size_t)b + 1 : (size_t)r + 1; }
static inline int64_t mc_loc_value(size_t step, int r, int b, size_t i)
{
    return (int64_t)step * 1000000 + (int64_t)r * 1000 + (int64_t)b * 100 + (int64_t)i;
}
/* the writer rank and block of the k-th block of loc in a step (blocks in rank order) */
static inline void mc_loc_owner(int p, size_t k, int *r, int *b)
{
    for (int q = 0; q < p; q++)
        for (int c = 0; c < mc_loc_nblocks(q); c++)
            if (k-- == 0) {
                *r = q, *b = c;
                return;
            }
    *r = -1, *b = -1;
}
static inline size_t mc_loc_total_blocks(int p)
{
    size_t n = 0;
    for (int q = 0; q < p; q++) n += (size_t)mc_loc_nblocks(q);
    return n;
}

static inline int32_t mc_rankval(size_t step, int r) { return (int32_t)(10 * r + (int)step); }

/* The box reader q of Q reads of an n-element dimension: it starts at q*n/(Q+1) and covers half of
 * n (at least one element), so boxes of different readers differ and span several writers'
 * blocks. */
static inline void mc_reader_box(size_t n, int q, int nq, size_t *start, size_t *count)
{
    *start = (size_t)q * n / (size_t)(nq + 1);
    size_t c = n / 2 ? n / 2 : 1;
    if (*start + c > n) c = n - *start;
    *count = c;
}

#endif
