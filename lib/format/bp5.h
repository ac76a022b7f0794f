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
 * message. Content this library cannot present (struct and derived variables) is reported to the
 * sink with bp5_var_field.unsupported set, never decoded. */
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

/* Records GPUBP_ERR_FORMAT "WHAT: damaged REGION at offset OFF: message" and returns it. */
int bp5_damaged(const char *what, const char *region, uint64_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((cold, format(printf, 4, 5)))
#endif
    ;

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
    uint64_t **slabs;             /* the steps' pieces live here (bp5_idx.c: slab_alloc) */
    size_t nslabs, cap_slabs, slab_used, slab_cap;
} bp5_idx;

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

enum { BP5_UNSUP_NONE = 0, BP5_UNSUP_STRUCT = 1, BP5_UNSUP_DERIVED = 2, BP5_UNSUP_LDOUBLE = 3 };

/* One variable field of a MetaData format (§7.3). */
typedef struct bp5_var_field {
    char *name;                   /* the ADIOS variable name (NUL-terminated copy) */
    int kind;                     /* GPUBP_SHAPE_* */
    int type;                     /* GPUBP_TYPE_*; -1 when unsupported */
    int bp5_type;                 /* ADIOS2 DataType number (§1) */
    uint32_t esize;               /* element size */
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

void bp5_scratch_free(bp5_scratch *s);

/* Decodes one writer's metadata block (n bytes at md.0 offset file_off). */
int bp5_decode_metadata(bp5_formats *ft, const uint8_t *p, size_t n, uint64_t file_off,
                        uint64_t writer, int column_major, bp5_scratch *s,
                        const bp5_md_sink *sink, const char *what);
/* Decodes one attribute block (either encoding, §8). */
int bp5_decode_attrs(bp5_formats *ft, const uint8_t *p, size_t n, uint64_t file_off,
                     const bp5_md_sink *sink, const char *what);
/* Decodes step s's md.0 block: p holds its MetadataSize bytes (md.0 offset md_pos). Writers'
 * blocks in rank order, then the attribute blocks in slot order. */
int bp5_decode_step(const bp5_idx *ix, bp5_formats *ft, size_t s, const uint8_t *p, size_t n,
                    bp5_scratch *scr, const bp5_md_sink *sink, const char *what);

/* GPUBP type of an ADIOS2 DataType number, -1 when it has none here. */
int bp5_gpubp_type(int bp5_type);

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
    /* pass state */
    gbp_index *ix;
    const char *what;
    size_t cur_s;                 /* dataset step */
    uint32_t cur_p;               /* presented step (0 when flattened) */
    uint64_t cur_w;               /* writers of the step */
} bp5_reader;

void bp5_reader_init(bp5_reader *r, bp5_read_fn read, void *read_ctx);
void bp5_reader_free(bp5_reader *r);
/* Adds dataset step r->nadded (p: its md.0 block, MetadataSize bytes) to the index; r->idx and
 * r->ft must cover it. On error the index is as it was. */
int bp5_index_add_step(gbp_index *ix, bp5_reader *r, const uint8_t *p, size_t n, const char *what);
/* After the last step of a random-access open, as ADIOS2's random-access reader: every step of a
 * joined array reports the last step's joined shape (§10.5), and a variable's steps are numbered
 * 0, 1, ... (relative steps, §10.2; the loader's cookie keeps the dataset step). */
void bp5_index_finish(gbp_index *ix);
/* The md.0 block of dataset step s (MetadataSize bytes) through r->read: read with the blocks of
 * the steps after it that follow it in md.0, up to BP5_MD0_WINDOW bytes, and kept until a step
 * outside is asked for (a step's variables loaded one after the other, or the steps of a pass,
 * read md.0 once). */
#define BP5_MD0_WINDOW ((size_t)256 << 10)
int bp5_step_block(bp5_reader *r, size_t s, const uint8_t **p);
/* After an open with ix->light: every step decoded again for the shapes and min/max that the
 * light pass left out (the index is then summarized). */
int bp5_index_summarize(gbp_index *ix, bp5_reader *r, const char *what);
/* gbp_load_fn: the blocks of v's step vs. */
int bp5_index_load(void *ctx, gbp_index *ix, gbp_var *v, size_t vs, const char *what);
/* What a variable of that name is when the index does not present it ("a struct variable",
 * "a derived (expression) variable", "a long double of N bytes": a 32-bit writer's), or NULL. */
const char *bp5_unsupported(const bp5_reader *r, const char *name);

/* ---- operator buffers (§9.3) ----------------------------------------------------------------- */

enum { BP5_OP_BLOSC = 0, BP5_OP_BZIP2 = 1, BP5_OP_NULL = 127 };

/* The operator of a stored block (n bytes at p) and, for null, the raw bytes inside it (*raw,
 * *raw_len); blosc and bzip2 buffers are handed whole to their decoders. Errors: FORMAT (a short
 * or inconsistent buffer), CODEC (an operator libgpubp does not decode, named). */
int bp5_op_parse(const uint8_t *p, size_t n, uint64_t raw_size, int *type, const uint8_t **raw,
                 size_t *raw_len, const char *what);

#endif /* GBP_BP5_H */
