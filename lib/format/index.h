/* lib/format: the reader's index, independent of the on-disk format.
 *
 * What a reader knows about a dataset: its variables (in order of first appearance), the steps
 * each appears in, the blocks of each (variable, step) with count/shape/start, min/max or value,
 * operator and where the block's bytes are (subfile, payload offset), and the attributes. A
 * format's filling code (BP4: bp4_index_add_step / bp4_index_summarize_step in bp4_index.c; BP5:
 * its own) adds variables, steps and summaries through the filler calls below; everything above
 * the format (selections, box copies, device paths, deferred gets, remote and parallel readers,
 * gpubpls) reads the index through the query calls only.
 *
 * The blocks of a (variable, step) are either supplied by the filler when it adds the step
 * (gbp_var_step.blocks set, in the index's arena) or loaded on first use by the index's loader
 * hook (gbp_load_fn), which the filler chooses at gbp_index_init; loaded blocks are kept. Dims,
 * strings and operator records live in an arena owned by the index: nothing moves once added.
 * No I/O, no CUDA: a loader that needs file bytes gets them through its own context. */
#ifndef GBP_INDEX_H
#define GBP_INDEX_H

#include <stdint.h>

#include "common/common.h"

#define GBP_MAX_OP_NAME 32
/* Shape values with a meaning (ADIOS2's): a local value's shape[0], a joined dimension. */
#define GBP_LOCAL_VALUE_DIM ((uint64_t)-3)
#define GBP_JOINED_DIM ((uint64_t)-2)

/* The operator (compression) of a block. */
typedef struct gbp_op {
    char name[GBP_MAX_OP_NAME + 1];
    uint8_t pre_type;
    uint64_t raw_size;  /* uncompressed bytes */
    uint64_t size;      /* compressed bytes at payload_offset */
} gbp_op;

/* One block of a variable in one step, as the metadata describes it. dims points at 3 * ndims
 * values: count[ndims], shape[ndims], start[ndims] (storage owned by whoever built the block; in
 * the index, row-major as the reader sees them). */
typedef struct gbp_block {
    uint64_t vmd_offset;     /* a format cookie (BP4: the block's [VMD record in data.K; BP5:
                              * the rank of the writer that wrote it) */
    uint64_t payload_offset; /* where the block's bytes start in its subfile */
    uint64_t *dims;
    char *str;          /* string value (NUL-terminated), or NULL */
    gbp_op *op;         /* NULL when not compressed */
    uint32_t subfile;   /* the data file holding the bytes: data.<subfile> */
    uint32_t step;      /* time index, 1-based */
    uint32_t str_len;
    uint8_t ndims;
    uint8_t has_minmax;
    uint8_t has_value;
    uint8_t mm[32];     /* min in [0,16), max in [16,32); or the value in [0,16) */
    uint32_t split;     /* a sub-block of a global-array put the writer cut (split_mib): its
                         * number j in the high 16 bits, the put's sub-blocks n (2 or more) in the
                         * low 16 bits (GBP_SPLIT_*); 0: the block is a whole put */
} gbp_block;

#define GBP_SPLIT_MAKE(j, n) (((uint32_t)(j) << 16) | (uint32_t)(n))
#define GBP_SPLIT_INDEX(s) ((s) >> 16)
#define GBP_SPLIT_COUNT(s) ((s) & 0xffffu)

#define GBP_COUNT(b) ((b)->dims)
#define GBP_SHAPE(b) ((b)->dims + (b)->ndims)
#define GBP_START(b) ((b)->dims + 2 * (b)->ndims)

/* A parsed attribute value (numeric: n elements in data; strings: n NUL-terminated strings). */
typedef struct gbp_attr {
    char *name;
    int type;       /* a gpubp_type; string arrays are GPUBP_TYPE_STRING with is_array set */
    int is_array;
    size_t n;
    uint8_t *data;  /* numeric values */
    char **strings; /* string values */
    uint32_t step;
} gbp_attr;

/* Frees a's contents (not a itself) and clears it. */
void gbp_attr_free(gbp_attr *a);

/* Callbacks from parsing one step's metadata. A non-zero return stops parsing and is returned. */
#define GBP_SINK_COUNT 1 /* var_begin: count this entry's blocks, do not parse them */

typedef struct gbp_step_sink {
    void *ctx;
    /* the step's first process-group entry has been read: its column-major flag */
    int (*step_begin)(void *ctx, int column_major);
    /* a variable entry: name (not NUL-terminated), type id, number of characteristic sets, and
     * where the entry is in the metadata (offset of its length field, and that length) */
    int (*var_begin)(void *ctx, const char *name, size_t name_len, int type, uint64_t nsets,
                     uint64_t entry_off, uint32_t entry_len);
    /* one block of the variable last begun (dims and strings must be copied if kept) */
    int (*var_block)(void *ctx, const gbp_block *blk);
    int (*attr)(void *ctx, gbp_attr *a); /* takes ownership of *a's contents */
    /* when var_begin returned GBP_SINK_COUNT: the entry's characteristic sets are only counted
     * (each set's length checked), then var_count gets the count */
    int (*var_count)(void *ctx, uint64_t nblocks);
} gbp_step_sink;

typedef struct gbp_var_step {
    uint32_t step;        /* dataset step, 0-based */
    uint32_t nblocks;
    uint64_t entry_off;   /* the loader's cookie (BP4: md.0 offset of the entry's length field) */
    uint32_t entry_len;   /* the loader's cookie (BP4: bytes after the length field) */
    uint32_t shape_id;    /* global and joined arrays: this step's shape in gbp_var.shapes */
    gbp_block *blocks;    /* NULL until loaded */
} gbp_var_step;           /* 32 bytes: a 10,000-step dataset keeps one per (variable, step) */

/* gbp_index_puts' cache of a var-step: the blocks as they were put (the sub-blocks of one split
 * put merged into one); NULL until asked, == the step's blocks when none was split. */
typedef struct gbp_var_puts {
    gbp_block *blocks;
    size_t n;
} gbp_var_puts;

/* A struct variable's record layout (BP5: ADIOS2's IO::DefineStruct), from the dataset. */
typedef struct gbp_struct_field {
    char *name;
    int type;             /* GPUBP_TYPE_* of its elements */
    size_t offset, count; /* in the record; elements */
} gbp_struct_field;

typedef struct gbp_struct_def {
    char *name;
    size_t size, nfields;
    gbp_struct_field *fields;
    uint8_t id[12];       /* the description's id in the dataset (BP5: its mmd.0 format id) */
} gbp_struct_def;

void gbp_struct_def_free(gbp_struct_def *d); /* d itself too; NULL is fine */

typedef struct gbp_var {
    char *name;
    int type;
    gbp_struct_def *sdef; /* GPUBP_TYPE_STRUCT: its layout (owned); NULL otherwise */
    char *expr;           /* a derived variable stored without data: its expression (owned) */
    int kind;             /* gpubp_shape_kind, from the first block; -1 until one is seen */
    size_t ndims;         /* of the first block */
    gbp_var_step *steps;  /* in step order */
    size_t nsteps, cap_steps;
    gbp_var_puts *puts;   /* per var-step, allocated on the first gbp_index_puts; cap_puts */
    size_t cap_puts;
    uint64_t *shapes;     /* ndims values per distinct consecutive shape */
    size_t nshapes, cap_shapes;
    int has_mm;
    uint8_t mm[32];       /* min in [0,16), max in [16,32) over every block of every step */
    int mm_missing;       /* some block (not a value) has no min/max (written without statistics:
                           * ADIOS2 StatsLevel=0); mm skips such blocks */
    uint64_t joined;      /* filler scratch: running sum along the joined dimension */
    uint32_t joined_first; /* BP5 joined array: shape id after the blocks of the first writer of
                            * its first step (ADIOS2's variable shape, bp5_index_finish) */
    uint32_t joined_dim;  /* joined array: the joined dimension (reader order) */
    size_t sum_pos;       /* filler scratch (summary pass): the next var-step to summarize */
    uint32_t sum_seen;    /* filler scratch (summary pass): blocks seen in the current var-step */
    size_t loaded;        /* var-steps whose blocks are loaded */
    size_t pos;           /* index in gbp_index.vars */
} gbp_var;

/* Bytes per element of v: its type's size, a struct's record size. */
static inline size_t gbp_var_esize(const gbp_var *v)
{
    return v->sdef ? v->sdef->size : gbp_type_size(v->type);
}

typedef struct gbp_index gbp_index;
typedef struct gbp_arena_chunk gbp_arena_chunk;

/* The loader hook: adds the blocks of v's step vs, in order, with gbp_index_load_block (ctx: the
 * one given to gbp_index_init). gbp_index_blocks then checks their number against
 * v->steps[vs].nblocks and keeps them. Returns 0 or a status with the record set. */
typedef int (*gbp_load_fn)(void *ctx, gbp_index *ix, gbp_var *v, size_t vs, const char *what);

struct gbp_index {
    gbp_var **vars;       /* in order of first appearance */
    size_t nvars, cap_vars;
    size_t *hash;         /* open addressing: index + 1 into vars, 0 = empty */
    size_t hash_cap;
    gbp_attr *attrs;      /* latest value of each attribute, in order of first appearance */
    size_t nattrs, cap_attrs;
    size_t nsteps;        /* steps added */
    uint8_t *colmajor;    /* per step: written by a column-major writer */
    size_t cap_colmajor;
    gbp_arena_chunk *arena;
    size_t steps_hint;    /* steps expected in all: sizes per-variable arrays */
    int light;            /* filler: count the blocks of known variables without parsing them;
                             shapes and min/max then come from a summary pass */
    int summarized;       /* shapes and min/max of every step are known */
    size_t sum_steps;     /* steps summarized so far */
    gbp_load_fn load;     /* on-demand block loads */
    void *load_ctx;
    /* filler state */
    gbp_var *cur;
    size_t cur_pos;
    gbp_var_step *cur_vs;
    uint32_t cur_step;
    int cur_colmajor;
    gbp_block *pending;   /* blocks being loaded */
    size_t npending, cap_pending;
};

/* ---- queries --------------------------------------------------------------------------------- */

/* An empty index whose blocks are loaded through load(load_ctx, ...) (NULL: every filler supplies
 * its blocks). */
void gbp_index_init(gbp_index *ix, gbp_load_fn load, void *load_ctx);
void gbp_index_free(gbp_index *ix);
gbp_var *gbp_index_find(const gbp_index *ix, const char *name);
const gbp_attr *gbp_index_find_attr(const gbp_index *ix, const char *name);
/* The var's entry for dataset step s (0-based), or NULL when the variable is absent there. */
const gbp_var_step *gbp_var_find_step(const gbp_var *v, size_t s);
/* The blocks of the variable's step vs (an index into v->steps), loaded on first use. */
int gbp_index_blocks(gbp_index *ix, gbp_var *v, size_t vs, const gbp_block **blocks,
                     const char *what);
/* The blocks of a global array's step vs as they were put: the sub-blocks of a put the writer
 * split (gbp_block.split: consecutive, numbered 0 … n-1) become one block, their bounding box,
 * with the min of their mins and the max of their maxes (and the first sub-block's location,
 * which nothing reads: a global array is read by boxes). Other kinds, and steps without split
 * blocks: the stored blocks. A malformed run of markers is left as stored blocks. */
int gbp_index_puts(gbp_index *ix, gbp_var *v, size_t vs, const gbp_block **puts, size_t *nputs,
                   const char *what);
/* The shape (ndims values) of a global or joined array at its step vs. */
static inline const uint64_t *gbp_var_shape(const gbp_var *v, size_t vs)
{
    return v->shapes + (size_t)v->steps[vs].shape_id * v->ndims;
}

/* ---- filling (format code only) -------------------------------------------------------------- */

/* n bytes of the index's arena (16-byte aligned; NULL when out of memory, record not set). */
void *gbp_index_alloc(gbp_index *ix, size_t n);
/* The variable named name[0, nl), or NULL. */
gbp_var *gbp_index_find_n(const gbp_index *ix, const char *name, size_t nl);
/* Appends a new variable (kind -1) and returns it in *out. */
int gbp_index_new_var(gbp_index *ix, const char *name, size_t nl, int type, gbp_var **out);
/* Keeps *a as the attribute's latest value (taking its contents; *a is cleared). */
int gbp_index_set_attr(gbp_index *ix, gbp_attr *a);
/* Classifies and checks a block of the current (variable, step) (ix->cur, ix->cur_vs, step
 * ix->cur_step, dims reversed when ix->cur_colmajor) and folds it into the summary: the step's
 * shape, min/max over everything. The block itself is not kept. */
int gbp_index_summarize_block(gbp_index *ix, const gbp_block *blk);
/* From a loader: one more block of the (variable, step) being loaded, copied into the arena
 * (dims reversed when reverse and ndims > 1). */
int gbp_index_load_block(gbp_index *ix, const gbp_block *blk, int reverse);

#endif /* GBP_INDEX_H */
