/* lib/engine: the types the engine's files share: the file (struct gpubp_file: a common part and
 * one part per role), the variable handle, selections, write-side blocks, attribute definitions. */
#ifndef GBP_ENGINE_INTERNAL_H
#define GBP_ENGINE_INTERNAL_H
#include "format/bp4.h"
#include "common/common.h"
#include "io/fileio.h"
#include "memspace/memspace.h"
#include "remote/remote.h"
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
/* async_commit: a span of a step's data-file bytes (block headers, PG head and tail) that its
 * commit writes on an I/O thread after the step's data, not the caller now: a caller's small
 * pwrite into a subfile would wait for the I/O thread writing it (ext4 serialises the writers of
 * one file), holding up the next step (gbp_writer_data_bytes). */
/* One block of a group read whole into device memory on the device codec path (zdev_read.c):
 * its operator buffer, zlen bytes at off of the data file fd (-1: in host memory already), raw
 * bytes once decoded, at byte doff of the get's destination. */
typedef struct gbp_zblk {
    int fd;
    uint64_t off;
    size_t zlen, raw, doff;
} gbp_zblk;
/* The most blocks of one group (GPUBP_ZDEV_READ_GROUP_MIB bounds its bytes). */
#define GBP_ZGROUP_MAX 64
/* A group: its n blocks (n 0: none). */
typedef struct gbp_zahead {
    size_t n;
    gbp_zblk b[GBP_ZGROUP_MAX];
} gbp_zahead;

typedef struct gbp_deferred {
    int fd, num;             /* the subfile's descriptor and number (data.num) */
    uint64_t off;
    size_t at, len;          /* the bytes: at `at` in gbp_file_wr.defer */
} gbp_deferred;

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
    uint8_t *zahead;         /* zblock.c: its payload compressed ahead of its turn (owned,
                              * freed by gbp_discard_step) */
    size_t zahead_len;
    uint32_t subfile;
    int performed;
    int header_written;
    int cpu_lane;            /* a sub-block of a split compressed device put coded on the CPU
                                while the device codes the sub-blocks after it (writer.c
                                split_block, GPUBP_ZDEV_CPU_SUBBLOCKS) */
    uint8_t *owned;          /* parallel writers: a host copy of the payload (a SYNC put, or the
                                compressed bytes), written instead of `data` */
} gbp_wblock;
/* The abstract communicator of a parallel open (collective.c). */
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
    int op_codec, op_level, op_shuffle, op_threads;
    size_t puts;             /* write: puts so far */
    size_t steps_written;    /* write: steps in which it has blocks */
    int in_step;             /* write: has blocks in the current step */
    gbp_var *rv;             /* read */
};
/* The serial writer's state (f->wr): data.K subfiles and the PGs of the step being written, md.0
 * and md.idx, the step's blocks and attributes, asynchronous commits. The parallel writer builds on
 * it (each rank's subfiles and PGs are kept here too) and adds f->pw. */
typedef struct gbp_file_wr {
    int nsub;                /* data subfiles (stripes) of this writer */
    int sub_auto;            /* subfiles=auto: data.1… are taken for blocks of GBP_STRIPE_MIN
                              * bytes or more only, and created when first used */
    int sub_base;            /* global number of its first subfile: pw.group_id * nsub */
    int *data_fd;
    uint64_t *data_size;     /* next free offset per subfile (64 before the first PG) */
    uint64_t *pg_start;      /* this step's PG start per subfile */
    uint64_t *cursor;        /* next record offset in this step's PG per subfile */
    uint32_t *pg_nvars;
    int *data_has_header;
    int idx_fd;
    size_t idx_records;
    uint32_t step;           /* 1-based number of the step being written */
    gbp_wblock *blocks;      /* current step */
    size_t nblocks, cap_blocks;
    gbp_attr_def *attrs;
    size_t nattrs, cap_attrs;
    uint32_t next_member;
    int async;               /* async_commit=1 (serial writers): steps commit on an I/O thread */
    gbp_buf defer;           /* async: the bytes of the spans below */
    gbp_deferred *dspans;    /* async: the step's data-file bytes its commit writes */
    size_t ndspans, cap_dspans;
    uint8_t *zout;           /* zblock.c: the CPU path's compressed output of a piece, kept from
                                block to block (fresh pages cost as much as the coding) */
    size_t zout_cap;
    size_t async_safe_records; /* committed for sure while a commit is queued */
    uint32_t async_pending_step; /* the queued commit's step, numbered from 0 */
    int broken;              /* an asynchronous commit failed: the writer stops */
    int broken_rc;
    char broken_msg[1024];
    size_t steps_begun;
} gbp_file_wr;

/* What only the parallel writer (gpubp_open_comm, WRITE and APPEND) adds (f->pw). */
typedef struct gbp_file_pw {
    gbp_comm *group;         /* the ranks sharing this rank's subfiles */
    int group_id;            /* this group's number g; it owns data.(g*S) … data.(g*S+S-1) */
    int ngroups;
    int funnel_fd;           /* aggregation=funnel, non-aggregator ranks: the PG before sending */
    int stage_fd;            /* memory file through which SYNC puts are copied aside */
} gbp_file_pw;

/* The reader's state (f->rd), serial or parallel, BP4 or BP5. */
typedef struct gbp_file_rd {
    gbp_index ix;
    struct bp5_reader *bp5;  /* BP5 datasets (lib/engine/bp5read.c), else NULL */
    int bp3;                 /* a BP3 file (lib/engine/bp3read.c): md.0 and md.idx made from its
                              * index, in md0_all and idx */
    int bp3_subfiles;        /* BP3: data in NAME.bp.dir/NAME.bp.K, else in the file itself */
    bp4_md0 md0_src;         /* the index's md.0 access: gbp_reader_md0 on this file */
    uint8_t *idx;            /* md.idx as read */
    size_t idx_len;
    uint8_t *md0;            /* a window of md.0 for the streaming pass */
    size_t md0_len;          /* bytes in the window */
    size_t md0_cap;
    uint64_t md0_base;       /* md.0 offset of the window */
    size_t nrecords;         /* complete records in md.idx that the reader presents (all, but
                              * those select_steps leaves out) */
    bp4_idx_record *records;
    size_t nrecords_all;     /* complete records in md.idx */
    uint64_t records_end;    /* md.0 end of the last of them */
    int writer_active;
    size_t cur_step;         /* READ: current step (0-based) when in_step */
    size_t next_step;        /* READ: the step begin_step opens next */
    gbp_remote *remote;      /* gpubp:// datasets: every file is read through it */
    uint8_t *md0_all;        /* parallel readers: md.0 up to the last record, as broadcast;
                              * BP3 files: md.0 made from the index */
    size_t md0_all_len;
    int *rfd;                /* data.K descriptors, lazily opened */
    size_t nrfd;
    struct gbp_pending_get *gets;
    size_t ngets, cap_gets;
    /* the operator buffers of a group of compressed blocks being read ahead into device memory
     * while the group before it decodes (zdev_read.c): pending between two reads of one get only */
    struct {
        int pending;
        gbp_zahead g; /* its blocks (n 0: its reads failed to queue, not to be taken) */
        void *pieces; /* the read jobs' arguments, freed once they are done */
    } zahead;
} gbp_file_rd;

/* A file: what every role shares at the top (path, mode, parameters, memory context, the step
 * state, the handles, the communicator, md.0 and the step's failure), then one part per role.
 * gbp_engine_open chooses the role: a reader uses f->rd, a serial writer f->wr, a parallel writer
 * f->wr and f->pw (f->rd.ix is initialized, empty, in every mode). */
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
    gbp_comm *comm;          /* parallel opens (gpubp_open_comm): every rank; NULL if serial */
    int md0_fd;              /* md.0: written by writers, read by readers */
    uint64_t md0_size;
    int failed_step;         /* an error happened in this step: a writer will not commit it; a
                              * parallel reader's end_step reports it */
    int failed_rc;           /* the first failure of this step (parallel writers and readers) */
    char failed_msg[512];

    gbp_file_wr wr;          /* serial and parallel writers */
    gbp_file_pw pw;          /* parallel writers */
    gbp_file_rd rd;          /* readers */
};

typedef struct gbp_pending_get {
    gpubp_variable *var;
    gbp_sel sel;
    void *data;
} gbp_pending_get;

#endif /* GBP_ENGINE_INTERNAL_H */
