/* lib/common/params.h: see params.c. */
#ifndef GBP_COMMON_PARAMS_H
#define GBP_COMMON_PARAMS_H

#include <stddef.h>
#include <stdint.h>

/* One rule of select_steps ("first:last:stride", last UINT64_MAX for "n"): the steps first,
 * first + stride, ... up to last. */
typedef struct gbp_step_rule {
    uint64_t first, last, stride;
} gbp_step_rule;
#define GBP_MAX_STEP_RULES 64

/* The parsed params string of gpubp_open (keys in docs/parameters.md). */
typedef struct gbp_params {
    int gpu_row_major;      /* gpu_layout=row_major */
    int pool_slots;         /* 0 = auto: gbp_params_pool_slots */
    size_t chunk_bytes;     /* chunk_mib (16) in bytes */
    size_t piece_bytes;     /* piece_kib (4096) in bytes: device copies within a chunk */
    int io_threads;         /* 0 = library default */
    int subfiles;           /* 0 = auto (the writer decides: lib/engine/writer.c) */
    uint64_t split_bytes;   /* split_mib in bytes, 0 = off, GBP_SPLIT_AUTO (default): global-array
                             * blocks this large (auto: one staging chunk, chunk_mib) are
                             * cut into sub-blocks over the subfiles (lib/engine/writer.c) */
    int block_view_stored;  /* block_view=stored: readers list every stored (sub-)block */
    int direct_io;
    int read_mmap;          /* read_mmap=1: large strided host reads copy their runs out of a
                             * mapping (io/fmap.h) */
    int fsync;
    int async_commit;       /* serial writers: end_step returns once the data left the buffers */
    double timeout;         /* seconds, < 0 forever */
    int compress_threads;   /* 0 = all cores */
    int aggregators;        /* 0 = one per node */
    int funnel;             /* aggregation=funnel: aggregators write their group's PGs */
    double connect_timeout;
    int retries;
    double retry_delay;
    int simulated_device;   /* test hook: "device=simulated" uses the simulated device */
    char token_file[1024];  /* remote reads: a file whose first line is the server's token */
    int compress;           /* compress=CODEC: every array variable gets the blosc operator */
    int compress_codec;     /* its codec: a Blosc2 codec code (lib/compress GBP_BLOSC_*) */
    int compress_level;     /* 1 */
    int compress_shuffle;   /* 0 none, 1 byte (default), 2 bit */
    int compress_device;    /* compress_device: 0 auto (default), 1 on, -1 off (GBP_ZDEV_*) */
    int compress_device_block_kib; /* the GPU path's blocks: 0 Blosc2's (default), else KiB, unsplit */
    int ignore_flatten;     /* readers: a BP5 dataset written with FlattenSteps shows its steps */
    size_t nselect;         /* select_steps: its rules (0: every step) */
    gbp_step_rule select[GBP_MAX_STEP_RULES];
} gbp_params;

/* Whether the dataset's step `step` (0-based, as written) is read: the open parameter
 * select_steps (ADIOS2's SelectSteps), every step without it. */
int gbp_params_step_selected(const gbp_params *p, uint64_t step);

#define GBP_PARAMS_HAVE_TOKEN_FILE 1

/* split_mib=auto, the default: a global-array block of one staging chunk (chunk_mib) or more may
 * be split, into as many sub-blocks as the step's large puts need to fill the subfiles evenly
 * (lib/engine/writer.c split_target; docs/parameters.md) */
#define GBP_SPLIT_AUTO UINT64_MAX
int gbp_params_parse(gbp_params *p, const char *s);
/* The I/O threads of the staging pipeline: io_threads, else pool_slots when given, else the
 * online cores within [4, 16]. The pinned slots: pool_slots, else one per I/O thread, 4 at least. */
int gbp_params_io_threads(const gbp_params *p);
int gbp_params_pool_slots(const gbp_params *p);
/* Tuning knobs of the environment (docs/parameters.md, "Environment variables"): the variable
 * `name` read as an integer in lo ... hi, else def (unset or out of range); gbp_env_mib: in MiB,
 * 1 ... max_mib, returned as bytes (GPUBP_ZDEV_*_MIB, GPUBP_BLOSC_WORKER_MIB). */
long gbp_env_long(const char *name, long lo, long hi, long def);
size_t gbp_env_mib(const char *name, size_t max_mib, size_t def);

#endif /* GBP_COMMON_PARAMS_H */
