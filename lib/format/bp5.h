/* lib/format: the ADIOS2 BP5 on-disk format in memory, reading side (docs: the BP5 format
 * description the project follows, sections named "§n" below). Decoding only: no I/O, no CUDA.
 *
 * A BP5 dataset is md.idx (a header and 'w'/'s' records), mmd.0 (FFS format descriptions keyed by
 * a 12-byte id), md.0 (per step: a size table, one FFS-encoded metadata block per writer, then
 * attribute blocks) and data.K (raw payloads). Only the restricted subset of FFS that BP5 uses is
 * decoded: fields of the sizes and kinds the descriptions give, dynamic arrays and strings as
 * offsets from the base record, sub-structures; 4- or 8-byte pointers, either byte order.
 *
 * Every read is bounds-checked; failures are GPUBP_ERR_FORMAT with the file name and offset in the
 * message. Content this library cannot present (long doubles of 10 or 12 bytes) is reported to the
 * sink with bp5_var_field.unsupported set, never decoded; a struct whose description cannot be
 * presented is found so by the index (bp5_unsupported).
 *
 * This header holds what the BP5 files share: sizes, byte-order loads and the types of md.idx, of
 * the formats, of the decoded records and of the reader. The functions are declared in the header
 * of the .c that defines them: format/bp5_idx.h (md.idx), format/bp5_ffs.h (mmd.0 and the FFS
 * descriptions; bp5_damaged), format/bp5_meta.h (metadata and attribute blocks), format/bp5_index.h
 * (the reader's index filled from BP5), format/bp5_op.h (operator buffers). */
#ifndef GBP_BP5_H
#define GBP_BP5_H

#include <stdint.h>

#include "common/common.h"
#include "format/index.h"

#define BP5_HEADER_SIZE 64
#define BP5_ID_LEN 12
#define BP5_NO_DATA ((uint64_t)-1)       /* DataBlockLocation of a stats-only block */
#define BP5_JOINED_DIM ((uint64_t)-2)
#define BP5_LOCAL_VALUE_DIM ((uint64_t)-3)

/* GPUBP type of a BP5 long double ("localvals" adds it to the API; 7 as in ADIOS2's BP4 ids). */
#ifdef GPUBP_TYPE_LONG_DOUBLE
#define BP5_GPUBP_LONG_DOUBLE GPUBP_TYPE_LONG_DOUBLE
#else
#define BP5_GPUBP_LONG_DOUBLE 7
#endif

/* Byte-order aware loads (be: the data is big-endian). */
static inline uint16_t bp5_ld16(const uint8_t *p, int be)
{
    return be ? (uint16_t)(p[0] << 8 | p[1]) : gbp_ld16(p);
}
static inline uint32_t bp5_ld32(const uint8_t *p, int be)
{
    return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
              : gbp_ld32(p);
}
static inline uint64_t bp5_ld64(const uint8_t *p, int be)
{
    return be ? (uint64_t)bp5_ld32(p, 1) << 32 | bp5_ld32(p + 4, 1) : gbp_ld64(p);
}

/* ---- md.idx (§3) ------------------------------------------------------------------------------ */

typedef struct bp5_map {          /* a 'w' record: which sub-file each writer writes */
    uint64_t nwriters, naggregators, nsubfiles;
    uint64_t *subfile;            /* nwriters entries, each < nsubfiles */
} bp5_map;

typedef struct bp5_step_rec {     /* an 's' record */
    uint64_t md_pos, md_size;     /* the step's block in md.0 */
    uint64_t nflush;              /* F: flushes during the step */
    uint64_t *pieces;             /* per writer 2F+1 values: F (pos, size) pairs, final pos (in
                                     bp5_idx.slabs) */
    size_t map;                   /* index into bp5_idx.maps */
} bp5_step_rec;

typedef struct bp5_idx {
    int big_endian;               /* byte 36 */
    int active;                   /* byte 39: the writer had not closed when it was read */
    int column_major;             /* byte 40 == 'y' */
    int flatten;                  /* byte 41 != 0 */
    uint32_t file_id;             /* bytes 42-45 (HEAD writers), 0 = none */
    bp5_map *maps;
    size_t nmaps, cap_maps;
    bp5_step_rec *steps;
    size_t nsteps, cap_steps;
    size_t parsed;                /* bytes of md.idx consumed (whole records only) */
    /* readers: keep(keep_ctx, n) says whether the n-th step record (0-based, as written) is
     * read (ADIOS2's SelectSteps; NULL: every one); the others are checked, then left out, so
     * steps[] holds the steps the reader presents. nseen counts every step record. */
    int (*keep)(const void *keep_ctx, uint64_t step);
    const void *keep_ctx;
    uint64_t nseen;
    int ignore_flatten;           /* flatten stays 0 whatever byte 41 says (IgnoreFlattenSteps) */
    uint64_t **slabs;             /* the steps' pieces live here (bp5_idx.c: slab_alloc) */
    size_t nslabs, cap_slabs, slab_used, slab_cap;
} bp5_idx;

/* ---- FFS format descriptions (§4, §5) ----------------------------------------------------------- */

enum { BP5_FT_INT = 1, BP5_FT_UINT, BP5_FT_FLOAT, BP5_FT_CHAR, BP5_FT_STRING, BP5_FT_SUB };

#define BP5_FFS_MAX_DIMS 4

typedef struct bp5_ffs_field {
    const char *name;             /* into the format's copy of its description */
    const char *type;
    int32_t size, offset;         /* element size; position in the struct */
    uint8_t base;                 /* BP5_FT_* */
    uint8_t is_ptr;               /* a pointer in the struct (string or dynamic dims) */
    uint8_t ndims;
    int sub;                      /* BP5_FT_SUB: index of the sub-structure */
    int ctrl[BP5_FFS_MAX_DIMS];   /* per dimension: index of the control field, or -1 */
    uint64_t dim[BP5_FFS_MAX_DIMS]; /* per dimension: its static length (when ctrl < 0) */
} bp5_ffs_field;

typedef struct bp5_ffs_struct {
    const char *name;
    int32_t record_length;
    uint32_t nfields;
    bp5_ffs_field *fields;
} bp5_ffs_struct;

/* Field offsets of one MetaArray… sub-structure (§7.4); -1 = absent. */
typedef struct bp5_meta_array {
    int dims, blockcount, dbcount, shape, count, offset, location, dbsize, minmax;
} bp5_meta_array;

enum { BP5_UNSUP_NONE = 0, BP5_UNSUP_STRUCT = 1, BP5_UNSUP_LDOUBLE = 3 };

/* One variable field of a MetaData format (§7.3). */
typedef struct bp5_var_field {
    char *name;                   /* the ADIOS variable name (NUL-terminated copy) */
    int kind;                     /* GPUBP_SHAPE_* */
    int type;                     /* GPUBP_TYPE_*; -1 when unsupported */
    int bp5_type;                 /* ADIOS2 DataType number (§1) */
    uint32_t esize;               /* element size (a struct's record size) */
    uint8_t sid[BP5_ID_LEN];      /* struct arrays (bp5_type 16): their description's mmd.0 id */
    char *expr;                   /* a derived variable stored without data: its expression */
    int unsupported;              /* BP5_UNSUP_*: listed by name only, never decoded */
    uint32_t field;               /* index of the field in the MetaData structure */
    uint32_t bit;                 /* its bit in BitField */
    int has_op, has_mm;           /* MetaArrayOp…, MetaArray…MM… */
    bp5_meta_array ma;            /* arrays: the sub-structure's fields */
} bp5_var_field;

enum { BP5_FMT_OTHER = 0, BP5_FMT_METADATA, BP5_FMT_ATTRS, BP5_FMT_OLD_ATTRS };

typedef struct bp5_format {
    uint8_t id[BP5_ID_LEN];
    uint8_t *desc;                /* owned copy of the description */
    size_t desc_len;
    uint64_t file_off;            /* mmd.0 offset of the description (messages) */
    int big_endian;               /* record byte order */
    int ptr_size;                 /* 4 or 8 */
    int rep_version;
    int variant;                  /* the main structure has pointers: 24-byte block header */
    int kind;                     /* BP5_FMT_* */
    bp5_ffs_struct *structs;      /* main structure first */
    size_t nstructs;
    /* BP5_FMT_METADATA */
    int f_bfcount, f_bitfield;    /* field indexes of BitFieldCount and BitField */
    bp5_var_field *vars;
    size_t nvars;
    /* BP5_FMT_ATTRS: field indexes in the main, PrimAttr and StrAttr structures */
    int a_pcount, a_prims, a_scount, a_strs;
    int a_pname, a_psize, a_pvals, a_sname, a_scount_e, a_svals;
} bp5_format;

typedef struct bp5_formats {
    bp5_format **v;
    size_t n, cap;
    size_t last;                  /* lookup cache */
    size_t parsed;                /* bytes of mmd.0 consumed */
    int big_endian;               /* byte order of mmd.0's lengths (md.idx byte 36); set by the caller */
} bp5_formats;

/* ---- metadata and attribute blocks (§6-§8) ------------------------------------------------------ */

/* One writer's record of an array variable in one step; arrays are valid until the sink returns.
 * Dimensions are already reversed for column-major writers (when asked). */
typedef struct bp5_array_rec {
    uint64_t ndims, nblocks;
    const uint64_t *shape;        /* ndims values, NULL for local arrays */
    const uint64_t *count;        /* nblocks * ndims */
    const uint64_t *start;        /* nblocks * ndims, NULL for local arrays */
    const uint64_t *location;     /* nblocks: offset in the writer's step data, or BP5_NO_DATA */
    const uint64_t *stored;       /* nblocks: stored bytes (operator), or NULL */
    const uint8_t *minmax;        /* nblocks * 2 * esize, host byte order, or NULL */
} bp5_array_rec;

/* A single value (BPg, BPl): esize bytes in host order, or a string. */
typedef struct bp5_value_rec {
    uint8_t bytes[16];
    const char *str;              /* strings: NUL-terminated, inside the block */
    size_t str_len;
} bp5_value_rec;

typedef struct bp5_md_sink {
    void *ctx;
    /* a variable whose bit is set in writer w's block; a (arrays) or v (values) is non-NULL;
     * unsupported variables come with both NULL */
    int (*var)(void *ctx, uint64_t w, const bp5_var_field *f, const bp5_array_rec *a,
               const bp5_value_rec *v);
    int (*attr)(void *ctx, gbp_attr *a); /* takes ownership of *a's contents */
    const char *only; /* non-NULL: only the variable of this name is decoded */
    /* non-NULL: asked for each array record; when it returns 1, the record is decoded no further
     * than its block count (a->nblocks, a->ndims; a->count NULL) */
    int (*light)(void *ctx, const bp5_var_field *f);
} bp5_md_sink;

/* Scratch storage of the decoders (reused between blocks). */
typedef struct bp5_scratch {
    uint64_t *u;
    size_t cap_u;
    uint8_t *b;
    size_t cap_b;
} bp5_scratch;

/* ---- the reader's index (format/index.h) filled from BP5 ----------------------------------------
 * The filler keeps md.idx, the formats and the names of variables it cannot present; the index's
 * loader hook (bp5_index_load, ctx: the bp5_reader) re-decodes a step's md.0 block through `read`
 * for the blocks of one variable. A compressed block's gbp_op is named BP5_OP_NAME: the operator
 * is known only from the first byte of its buffer (§9.3, bp5_op_parse). A block of a
 * statistics-only variable has payload_offset BP5_NO_DATA. */

#define BP5_OP_NAME "bp5"

/* Reads n bytes of md.0 at off into buf (exactly, or an error). */
typedef int (*bp5_read_fn)(void *ctx, uint64_t off, size_t n, uint8_t *buf);

typedef struct bp5_unsup {
    char *name;
    int what;                     /* BP5_UNSUP_* */
    const char *why;              /* BP5_UNSUP_STRUCT: what keeps it from being read (static) */
} bp5_unsup;

typedef struct bp5_reader {
    bp5_idx idx;                  /* md.idx as parsed so far */
    bp5_formats ft;               /* mmd.0 as parsed so far */
    bp5_scratch scr;
    bp5_read_fn read;
    void *read_ctx;
    size_t nadded;                /* dataset steps added to the index */
    bp5_unsup *unsup;             /* variables that are not presented */
    size_t nunsup, cap_unsup;
    /* the reader's copy of md.idx's header and of mmd.0 as far as read (lib/engine/bp5read.c) */
    uint8_t hdr[BP5_HEADER_SIZE];
    uint8_t *mmd_buf;
    size_t mmd_len;
    uint64_t idx_bytes;           /* bytes read from md.idx and mmd.0 */
    uint64_t md0_bytes;           /* bytes read from md.0 */
    /* a window of md.0 holding the block of the dataset step last decoded and the blocks after
     * it (bp5_step_block): win_len bytes from file offset win_off */
    uint8_t *step_buf;
    size_t step_cap, win_len;
    uint64_t win_off;
    int light_used;               /* a step was added with block counts only (shapes and min/max
                                     wait for bp5_index_summarize) */
    struct gbp_var *lv;           /* the variable the light hook found */
    gbp_struct_def *new_sdef;     /* fill_var: the layout of the struct variable being added */
    /* pass state */
    gbp_index *ix;
    const char *what;
    size_t cur_s;                 /* dataset step */
    uint32_t cur_p;               /* presented step (0 when flattened) */
    uint64_t cur_w;               /* writers of the step */
} bp5_reader;

#endif /* GBP_BP5_H */
