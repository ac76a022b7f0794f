/* src/: the public API. Handles, argument checks, the step state machines of writers and
 * readers. The only code that exports symbols. */
#ifndef GBP_INTERNAL_H
#define GBP_INTERNAL_H

#include "bp4.h"
#include "common.h"
#include "fileio.h"
#include "memspace.h"
#include "remote.h"
#include "gpubp/comm.h"

/* subfiles=auto: a block of this many payload bytes or more may open a subfile of its own; smaller
 * blocks stay in data.0 and the subfiles already holding data in the step */
#define GBP_STRIPE_MIN ((uint64_t)4 << 20)

#define GBP_IO_NAME "gpubp"

/* Global and local values: one value per put, kept in the metadata; never compressed. */
static inline int gbp_kind_is_value(int kind)
{
    return kind == GPUBP_SHAPE_GLOBAL_VALUE || kind == GPUBP_SHAPE_LOCAL_VALUE;
}

/* Dims and selections of a variable as the user gave them (in the memory space's layout). */
typedef struct gbp_sel {
    size_t ndims;
    size_t shape[GBP_MAX_DIMS];
    size_t start[GBP_MAX_DIMS];
    size_t count[GBP_MAX_DIMS];
    int has_box;                     /* read: set_selection was called */
    size_t mem_ndims;                /* memory selection, 0 = none */
    size_t mem_start[GBP_MAX_DIMS];
    size_t mem_count[GBP_MAX_DIMS];
    int has_block;
    size_t block_id;
    int has_steps;
    size_t step_start, step_count;
} gbp_sel;

/* A write-side block of the current step. */
typedef struct gbp_wblock {
    gpubp_variable *var;
    const void *data;        /* user pointer (deferred until performed) */
    gpubp_memory_space space;
    gbp_box box;             /* the user buffer box, file (row-major) order */
    gbp_block meta;          /* dims -> dimstore */
    uint64_t dimstore[3 * GBP_MAX_DIMS];
    uint64_t payload_len;
    gbp_op opstore;          /* meta.op -> opstore for compressed blocks */
    uint8_t *zahead;         /* api_compress.c: its payload compressed ahead of its turn (owned,
                              * freed by gbp_discard_step) */
    size_t zahead_len;
    uint32_t subfile;
    int performed;
    int header_written;
    uint8_t *owned;          /* parallel writers: a host copy of the payload (a SYNC put, or the
                                compressed bytes), written instead of `data` */
} gbp_wblock;

/* The abstract communicator of a parallel open (comm.c). */
typedef struct gbp_comm {
    const gpubp_comm_ops *ops;
    void *ctx;
    int rank, size;
} gbp_comm;

typedef struct gbp_attr_def {
    char *name;
    int type;                /* 9 single string, 12 string array, else numeric */
    size_t n;
    uint8_t *data;
    char **strings;
    int dirty;               /* to be written with the next step */
    uint32_t member_id;
} gbp_attr_def;

struct gpubp_variable {
    gpubp_file *file;
    char *name;
    int type;
    int kind;                /* gpubp_shape_kind */
    gpubp_memory_space space;
    gbp_sel sel;
    uint32_t member_id;      /* write */
    int op;                  /* write: 1 = zlib (blosc-framed) */
    int op_level, op_shuffle, op_threads;
    size_t puts;             /* write: puts so far */
    size_t steps_written;    /* write: steps in which it has blocks */
    int in_step;             /* write: has blocks in the current step */
    gbp_var *rv;             /* read */
};

struct gpubp_file {
    char *path;
    gpubp_mode mode;
    gbp_params params;
    gbp_mem *mem;
    int in_step;
    int closed;
    /* variables (handles), in definition / inquiry order */
    gpubp_variable **vars;
    size_t nvars, cap_vars;
    const char **names;      /* available_variables cache */
    size_t nnames;
    const char **anames;     /* available_attributes cache */
    size_t nanames;

    /* ---- parallel (gpubp_open_comm) ---- */
    gbp_comm *comm;          /* every rank; NULL for a serial open */
    gbp_comm *group;         /* writer: the ranks sharing this rank's subfiles */
    int group_id;            /* writer: this group's number g; it owns data.(g*S) … data.(g*S+S-1) */
    int ngroups;
    int funnel_fd;           /* aggregation=funnel, non-aggregator ranks: the PG before sending */
    int stage_fd;            /* memory file through which SYNC puts are copied aside */
    int failed_rc;           /* the first failure of this step (parallel writers) */
    char failed_msg[512];

    /* ---- writer ---- */
    int nsub;                /* data subfiles (stripes) of this writer */
    int sub_auto;            /* subfiles=auto: data.1… are taken for blocks of GBP_STRIPE_MIN
                              * bytes or more only, and created when first used */
    int sub_base;            /* global number of its first subfile: group_id * nsub */
    int *data_fd;
    uint64_t *data_size;     /* next free offset per subfile (64 before the first PG) */
    uint64_t *pg_start;      /* this step's PG start per subfile */
    uint64_t *cursor;        /* next record offset in this step's PG per subfile */
    uint32_t *pg_nvars;
    int *data_has_header;
    int md0_fd, idx_fd;
    uint64_t md0_size;
    size_t idx_records;
    uint32_t step;           /* 1-based number of the step being written */
    gbp_wblock *blocks;      /* current step */
    size_t nblocks, cap_blocks;
    gbp_attr_def *attrs;
    size_t nattrs, cap_attrs;
    uint32_t next_member;
    int failed_step;         /* an error happened in this step: it will not be committed */
    int async;               /* async_commit=1 (serial writers): steps commit on an I/O thread */
    size_t async_safe_records; /* committed for sure while a commit is queued */
    uint32_t async_pending_step; /* the queued commit's step, numbered from 0 */
    int broken;              /* an asynchronous commit failed: the writer stops */
    int broken_rc;
    char broken_msg[1024];
    size_t steps_begun;

    /* ---- reader ---- */
    gbp_index ix;
    bp4_md0 md0_src;         /* the index's md.0 access: gbp_reader_md0 on this file */
    uint8_t *idx;            /* md.idx as read */
    size_t idx_len;
    uint8_t *md0;            /* a window of md.0 for the streaming pass */
    size_t md0_len;          /* bytes in the window */
    size_t md0_cap;
    uint64_t md0_base;       /* md.0 offset of the window */
    size_t nrecords;         /* complete records in md.idx */
    bp4_idx_record *records;
    int writer_active;
    size_t cur_step;         /* READ: current step (0-based) when in_step */
    size_t next_step;        /* READ: the step begin_step opens next */
    gbp_remote *remote;      /* gpubp:// datasets: every file is read through it */
    uint8_t *md0_all;        /* parallel readers: md.0 up to the last record, as broadcast */
    size_t md0_all_len;
    int *rfd;                /* data.K descriptors, lazily opened */
    size_t nrfd;
    struct gbp_pending_get *gets;
    size_t ngets, cap_gets;
};

/* comm.c: wrappers of the communicator's operations; a failed operation is GPUBP_ERR_IO. */
int gbp_comm_make(gbp_comm **out, const gpubp_comm_ops *ops, void *ctx); /* frees ctx on failure */
void gbp_comm_free(gbp_comm *c);
int gbp_comm_barrier(gbp_comm *c);
int gbp_comm_bcast(gbp_comm *c, void *buf, size_t n, int root);
int gbp_comm_allreduce(gbp_comm *c, int64_t *v, size_t n, gpubp_comm_reduce op);
int gbp_comm_exscan(gbp_comm *c, uint64_t *v, size_t n);
int gbp_comm_send(gbp_comm *c, const void *buf, size_t n, int dest);
int gbp_comm_recv(gbp_comm *c, void *buf, size_t n, int src);
int gbp_comm_split(gbp_comm *c, int color, int key, gbp_comm **out);
int gbp_comm_split_node(gbp_comm *c, gbp_comm **out);
/* Gathers n bytes of every rank to root; on root *all (rank order) and *counts are new arrays
 * the caller frees (NULL elsewhere). */
int gbp_comm_gatherv(gbp_comm *c, const void *p, size_t n, int root, uint8_t **all,
                     size_t **counts);
/* Every rank returns root's rc, with root's message and native code in its error record. */
int gbp_comm_agree(gbp_comm *c, int rc, int root);
/* Every rank returns the same status: OK when rc is OK everywhere, else the first failing rank's
 * status with a message "<what> failed on k of n ranks: rank r: <its message>; ...". */
int gbp_comm_agree_all(gbp_comm *c, int rc, const char *what);
/* Rank 0's half of it: all/cnt as gathered, per rank [i64 status][u32 length][message] and
 * anything after it. */
int gbp_comm_failures(gbp_comm *c, const uint8_t *all, const size_t *cnt, const char *what);
/* The usual case costs one allreduce of the number of failing ranks (rc < 0); only if some
 * rank failed, every rank returns gbp_comm_agree_all's status and message; else rc (statuses
 * > 0, END_OF_STREAM / NOT_READY, pass through). */
int gbp_comm_check(gbp_comm *c, int rc, const char *what);
/* gbp_comm_make for gpubp_open_comm: on failure (out of memory) this rank still takes part in
 * the open's first agreement before ctx is released, so that no other rank waits for it. */
int gbp_comm_open(gbp_comm **out, const gpubp_comm_ops *ops, void *ctx);
/* A rank that cannot open (bad argument) takes part in the open's first agreement with rc,
 * then releases ctx; returns the agreed status. */
int gbp_comm_open_failed(const gpubp_comm_ops *ops, void *ctx, int rc, const char *what);
/* Failed communicator operations seen by the calling thread so far: compared before and after
 * a collective call, it tells a failed operation from an agreed failure status. */
unsigned long gbp_comm_failures_seen(void);

/* api.c */
int gbp_file_add_var(gpubp_file *f, gpubp_variable *v);
gpubp_variable *gbp_file_var(const gpubp_file *f, const char *name);
/* A new handle owned by f (type, kind set; memory space DETECT). */
int gbp_file_new_var(gpubp_file *f, const char *name, int type, int kind, gpubp_variable **out);
int gbp_resolve_space(gpubp_variable *v, const void *ptr, gpubp_memory_space *space);
/* Whether dims given in `space` are stored reversed in the file. */
int gbp_space_reverses(const gpubp_file *f, gpubp_memory_space space);
void gbp_reverse(size_t *d, size_t n);
int gbp_is_write_mode(const gpubp_file *f);
/* Prefixes the error record's message with the dataset path (when it lacks it); returns rc. */
int gbp_error_with_path(int rc, const char *path);

/* api_compress.c: writes the compressed payload of block wb (a blosc-framed zlib operator buffer
 * of its values, which may be in device memory or strided) to fd at wb->meta.payload_offset; sets
 * wb->payload_len to the bytes written, wb->meta.op and the min/max of the uncompressed values.
 * fname names fd in errors. */
int gbp_write_compressed(gpubp_file *f, gbp_wblock *wb, int fd, const char *fname);
/* api_compress.c: decodes the compressed block z (zlen bytes; raw bytes uncompressed, elements of
 * es bytes) into the box dbox of the device array dst (the box fbox of the block) span by span
 * through the pinned pool, the host-to-device copies overlapped with the decoding. Synchronous:
 * z may be freed when it returns. */
int gbp_read_compressed_device(gpubp_file *f, const uint8_t *z, size_t zlen, size_t raw,
                               size_t es, const gbp_box *fbox, void *dst, const gbp_box *dbox);

/* api_write.c */
int gbp_writer_open(gpubp_file *f);
/* The pieces of a step's commit shared by the serial and the parallel writer. */
const char *gbp_sub_name(const gpubp_file *f, int k, char *buf, size_t n);
size_t gbp_assign_block(gpubp_file *f, gbp_wblock *wb); /* stripe and offsets; header size */
void gbp_advance_block(gpubp_file *f, gbp_wblock *wb, size_t hs);
int gbp_write_payload(gpubp_file *f, gbp_wblock *wb, int fd, uint64_t delta, const char *fname);
int gbp_write_headers(gpubp_file *f, const int *fd, const uint64_t *delta);
size_t gbp_dirty_attrs(const gpubp_file *f);
/* The PG tail of stripe k: attributes (stripe 0) at cursor[k], the attribute count and length,
 * "PGI]"; amd_off/amd_pay get the attributes' offsets. */
void gbp_pg_tail(gpubp_file *f, int k, gbp_buf *tail, uint64_t *amd_off, uint64_t *amd_pay);
/* The PG head of stripe k whose tail is tail_len bytes (pg_start, cursor and pg_nvars set). */
void gbp_pg_head(gpubp_file *f, int k, gbp_buf *pg, size_t tail_len);
void gbp_pg_entry(gbp_buf *one, uint32_t step, uint32_t rank, uint64_t pg_start);
/* Appends the step's variable and attribute index to md (after its PG index). */
void gbp_var_attr_index(gpubp_file *f, gbp_buf *md, const uint64_t *amd_off,
                        const uint64_t *amd_pay);
/* Writes a step block (PG, variable and attribute index; offsets absolute) to md.0 and its record
 * to md.idx: the commit point. */
int gbp_commit_metadata(gpubp_file *f, const uint8_t *blk, size_t len);
void gbp_writer_step_done(gpubp_file *f);
void gbp_discard_step(gpubp_file *f);
/* A parallel writer's put or perform_puts failed: the step will fail on every rank. */
int gbp_writer_fail(gpubp_file *f, int rc);

/* api_pwrite.c: the parallel writer (gpubp_open_comm) */
int gbp_pwriter_open(gpubp_file *f);
int gbp_pwriter_stage(gpubp_file *f, gbp_wblock *wb);
int gbp_pwriter_end_step(gpubp_file *f);
int gbp_pwriter_close_sync(gpubp_file *f, int rc);
void gbp_pwriter_free(gpubp_file *f);
int gbp_writer_close(gpubp_file *f);
int gbp_writer_begin_step(gpubp_file *f);
int gbp_writer_end_step(gpubp_file *f);
/* async_commit: the writer's stopping failure, or GPUBP_OK; _commit_wait also waits for the
 * queued commit and turns its failure into that. */
int gbp_writer_broken(gpubp_file *f);
int gbp_writer_commit_wait(gpubp_file *f);
int gbp_writer_perform(gpubp_file *f);
void gbp_writer_free(gpubp_file *f);

/* api_read.c */
int gbp_reader_open(gpubp_file *f);
int gbp_reader_begin_step(gpubp_file *f);
int gbp_reader_end_step(gpubp_file *f);
int gbp_reader_perform(gpubp_file *f);
void gbp_reader_free(gpubp_file *f);
int gbp_reader_inquire(gpubp_variable **out, gpubp_file *f, const char *name);
/* bp4_read_fn over md.0 (ctx: the file) */
int gbp_reader_md0(void *ctx, uint64_t off, size_t n, uint8_t *buf);

#endif
