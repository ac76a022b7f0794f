/* lib/compress/blosc_encx.h: the staged encoder's state (see blosc_enc.c), shared by blosc_enc.c
 * and blosc_encx.c (the outside codec's puts). */
#ifndef GBP_COMPRESS_BLOSC_ENCX_H
#define GBP_COMPRESS_BLOSC_ENCX_H

#include "compress/blosc_codec.h"
#include "compress/blosc_enc.h"
#include "compress/blosc_frame.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

enum { BLK_DONE, BLK_NOMEM, BLK_SKIP };
enum { S_RUN, S_CODED, S_RAW };
/* STORE_KEPT: a filtered stream that did not compress, kept in the unit's scratch by
 * compress_task (copied, not filtered again) */
enum { STORE_NONE, STORE_CODED, STORE_FILTERED, STORE_PLAIN, STORE_KEPT };
enum { CK_NORMAL, CK_MEMCPY, CK_ABANDONED };

#define NO_CHUNK SIZE_MAX /* a unit of an input under the threshold: stored raw after the prefix */

typedef struct unit {
    const uint8_t *src; /* the block's input bytes: in the piece, or in a carry buffer */
    size_t len;
    size_t chunk, block; /* its chunk and its index there (NO_CHUNK: raw input) */
    size_t in_off;       /* offset of its first byte in the whole input */
    int kind;            /* BLK_* (what a worker found) */
    atomic_int ready;    /* fused_batch: coded (walk_ready) */
    int late;            /* fused_batch: its streams are copied after the join */
    atomic_int claimed;  /* fused_batch: a worker copied its streams (copy_unit) */
    int store;           /* STORE_PLAIN: the whole block raw, at dst */
    uint8_t *dst;
    unsigned nst;        /* streams of the block: typesize when split, else 1 */
    size_t sidx;         /* outside codec: its first stream in e->xs */
    uint8_t *scr;        /* fused_batch: its scratch slot (NULL: its own) */
    int raw_fbuf;        /* it has filtered streams stored raw, in its coder's fbuf, not yet in
                          * its scratch (own_copy) */
    /* per stream, from sk to the end: zero when the unit is coded (UNIT_STREAMS_AT) */
    uint8_t sk[GBP_MAX_STREAMS];       /* per stream: S_* */
    uint8_t run[GBP_MAX_STREAMS];      /* S_RUN: the byte value */
    uint8_t sstore[GBP_MAX_STREAMS];   /* STORE_CODED / STORE_FILTERED / STORE_NONE */
    uint32_t clen[GBP_MAX_STREAMS];    /* S_CODED: length, at scratch + stream * neblock */
    uint8_t *sdst[GBP_MAX_STREAMS];    /* where the stream's bytes go */
} unit;

/* The per-stream arrays of a unit start here; the fields before are set when it is cut. The
 * threaded whole-buffer pass (gbp_blosc_enc_fused) zeroes the arrays in the worker that codes
 * the unit, not in the serial cut: 240 of the unit's 330 bytes, which at 16 KiB blocks made the
 * cut (one thread, before the workers start) about a tenth of a 16-thread compression
 * (docs/compression.md, "The serial cut"). */
#define UNIT_STREAMS_AT offsetof(unit, sk)
static inline void gbp_blosc_unit_zero_streams(unit *r)
{
    memset((uint8_t *)r + UNIT_STREAMS_AT, 0, sizeof *r - UNIT_STREAMS_AT);
}

/* fused_batch: per worker, the scratch slots of units it copied (still in its cache), which
 * the next units it codes take instead of their own (cold) slots; one cache line each. */
#define GBP_HOT_SLOTS 6
typedef struct hot_slots {
    uint8_t *s[GBP_HOT_SLOTS];
    size_t n;
    char pad[64 - (GBP_HOT_SLOTS + 1) * sizeof(size_t)];
} hot_slots;

/* A raw stream parked until its chunk ends (whole buffer: gbp_blosc_enc_settle). */
typedef struct pend_copy {
    uint8_t *dst;
    const uint8_t *src;
    size_t len;
} pend_copy;

typedef struct chunk_rec {
    uint64_t base; /* offset of the chunk in the operator buffer */
    size_t len;    /* header bytes (header + block starts, or the header alone) */
    size_t hoff;   /* where they are in e->hdrs */
} chunk_rec;

struct gbp_blosc_enc {
    size_t n, ts, m; /* input size, typesize, chunk size */
    int level, filter, threads, codec, shuffle, fmt;
    size_t dbsz; /* gbp_blosc_enc_set_blocks: the GPU blocks' size (0: Blosc2's) */
    atomic_int store_nomem; /* a copy task found no memory */
    int plain_only;         /* after fused_task: store_task copies plain blocks, raw inputs */
    /* fused_batch's shared words, each on its own cache line (others poll them while the
     * walker writes the walk state) */
    char pad0[64];
    atomic_int walking;     /* fused_batch: a worker walks (walk_ready) */
    char pad1[64];
    atomic_size_t walked;   /* fused_batch: units walked, published for the copies */
    char pad2[64];
    atomic_size_t copy_next; /* fused_batch: the next walked unit to claim for copying */
    char pad3[64];
    size_t front;           /* fused_batch: units walked, for the walker */
    int after;              /* fused_batch: some unit's bytes are copied after the join */
    atomic_size_t dead_ck;  /* the last chunk abandoned (NO_CHUNK: none): not coded further */
    int walk_rc;
    uint8_t *direct; /* whole-buffer mode: everything goes to its final place here */
    const uint8_t *in_base; /* whole-buffer mode: the input */
    pend_copy *pend;        /* the unfiltered raw streams of chunk pend_ck, parked */
    size_t npend, cap_pend, pend_ck;
    int pend_place;         /* chunk pend_ck shrank: its parked streams are placed */
    int inplace;     /* direct, one thread: streams coded during the walk (walk_block) */
    size_t bsz_max;
    /* put */
    size_t taken;         /* input bytes taken so far */
    int put_pending;      /* a put waits for its emit */
    uint8_t *carry[2];    /* a partial block; the other buffer may back a unit of this put */
    int cur;
    size_t carry_len;
    unit *u;
    size_t nu, cap_u;
    uint8_t *scratch;     /* per unit, bsz_max bytes */
    size_t scratch_units;
    size_t scratch_spare; /* its size when it came from gbp_spare_take (fused_batch), else 0 */
    int nw;               /* workers at most */
    uint8_t **fbuf;       /* per worker: the filtered block (its codec state's buffer) */
    hot_slots *hot;       /* per worker (fused_batch), on cache lines of their own */
    void *hot_mem;        /* what was allocated for hot */
    gbp_codec_ws **ws;    /* per worker: codec state (taken on first use, given back at close) */
    /* walk */
    int started;          /* a chunk is being walked */
    size_t ck, ck_in0, ck_n, ck_bsz, ck_nb;
    int ck_split;
    uint64_t ck_base, nt;
    int ck_mode;
    int all_zero;
    size_t zpend;         /* zero runs not written yet (the chunk may be a special-zero one) */
    uint64_t zpend_at;
    size_t bst;           /* offset of the current chunk's block starts in hdrs */
    uint64_t out_end;     /* end of the last finished chunk */
    uint8_t *hdrs;
    size_t hdrs_len, hdrs_cap;
    chunk_rec *ch;
    size_t nch, cap_ch;
    uint8_t prefix[GBP_BLOSC_PREFIX];
    /* emit */
    uint8_t *out;
    size_t o, ocap;
    gbp_blosc_extent *ext;
    size_t next, cap_ext;
    gbp_blosc_redo *redo;
    size_t nredo, cap_redo;
    size_t ck_u0, ck_ext0, ck_o0; /* this emit: first unit, extent and out byte of the chunk */
    /* outside codec (put_ext / emit_ext): the streams to code, the segments that place them */
    int xmode;
    gbp_blosc_xstream *xs;
    size_t nxs, cap_xs;
    int held;             /* a second put_ext waits behind the pending one: its units here */
    unit *hu;
    gbp_blosc_xstream *hxs;
    size_t hnu, hcap_u, hnxs, hcap_xs;
    gbp_dz_seg *seg;
    size_t nseg, cap_seg, ck_seg0;
};

/* Cuts the next len input bytes into units (blosc_enc.c). in NULL: the outside codec's put
 * (put_ext), which reads nothing and must end on a block boundary or at the end of the input. */
int gbp_blosc_enc_cut(gbp_blosc_enc *e, const void *in, size_t len);

/* The encoder's steps that blosc_fused.c's threaded pass uses (blosc_enc.c): code unit `task`
 * (filter, then each stream into the unit's scratch); keep unit t's raw filtered streams from
 * its filtered block in its scratch; copy its streams into place (part: all
 * (0), all but unfiltered raw streams (1), those only (2)); place unit t in block order by
 * blosc_c's rules; copy what is left after the pass (on the pool); scratch for e->nu units
 * (spare: kept between calls); start an emit. */
void gbp_blosc_enc_code(gbp_blosc_enc *e, size_t task, int worker);
void gbp_blosc_enc_keep_raw(gbp_blosc_enc *e, size_t t, const uint8_t *blk);
void gbp_blosc_enc_store_streams(gbp_blosc_enc *e, size_t task, int worker, int part);
int gbp_blosc_enc_emit_one(gbp_blosc_enc *e, size_t t);
int gbp_blosc_enc_store_all(gbp_blosc_enc *e);
int gbp_blosc_enc_settle(gbp_blosc_enc *e);
int gbp_blosc_enc_unit_scratch(gbp_blosc_enc *e, int spare);
void gbp_blosc_enc_emit_start(gbp_blosc_enc *e);

/* The threaded pass of the whole buffer (blosc_fused.c): every unit is a task of fused_task,
 * which zeroes its stream arrays before anything reads them. */
static inline int gbp_blosc_enc_fused(const gbp_blosc_enc *e) { return e->direct && !e->inplace; }

/* Unit t's scratch slot: the one the threaded pass gave it, else its own. */
static inline uint8_t *gbp_blosc_enc_unit_scr(const gbp_blosc_enc *e, size_t t)
{
    return e->u[t].scr ? e->u[t].scr : e->scratch + t * e->bsz_max;
}

/* *p holding *cap elements of el bytes grows to hold need (blosc_enc.c). */
int gbp_blosc_enc_grow(void **p, size_t *cap, size_t need, size_t el);

#endif /* GBP_COMPRESS_BLOSC_ENCX_H */
