/*
 * libgpubp: ADIOS2-compatible BP4 step files, with GPU memory spaces as first-class citizens.
 *
 * Everything a program needs is declared here. The header is plain C11 and C++ compatible; it
 * includes no CUDA, MPI or zlib header. Optional areas have their own headers: <gpubp/cuda.h>
 * (pass a CUDA stream), <gpubp/mpi.h> (parallel open).
 *
 * Conventions
 * - Every call returns an int status: GPUBP_OK (0) on success, a positive value for the two
 *   expected outcomes of a step loop (GPUBP_END_OF_STREAM, GPUBP_NOT_READY), a negative
 *   GPUBP_ERR_* value on failure. On failure, gpubp_last_error() gives a message for this thread
 *   naming what was wrong (file and offset for damaged files, the key for a bad parameter, ...).
 * - Out-parameters come first. Whatever is returned through an out-parameter as a handle is owned
 *   by the file it came from and lives until gpubp_close() of that file; strings and name arrays
 *   returned as `const char *` are borrowed, with the lifetime written on each call.
 * - Handles are not thread safe: use one file from one thread at a time. Distinct files may be
 *   used from distinct threads concurrently.
 * - The library never prints.
 * - Dimensions are given in the layout of the variable's memory space: row-major for host memory;
 *   for GPU memory column-major by default (as ADIOS2 does, so dims are stored reversed), or
 *   row-major when the file was opened with "gpu_layout=row_major". See gpubp_set_memory_space().
 */
#ifndef GPUBP_H
#define GPUBP_H

#include <stddef.h>

#include "gpubp/version.h"

#if defined(_WIN32) && !defined(GPUBP_STATIC)
#  ifdef GPUBP_BUILDING
#    define GPUBP_API __declspec(dllexport)
#  else
#    define GPUBP_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define GPUBP_API __attribute__((visibility("default")))
#else
#  define GPUBP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Statuses. The numeric values are pinned: they never change between releases.
 * ------------------------------------------------------------------------------------------- */
typedef enum gpubp_status {
    GPUBP_OK = 0,
    GPUBP_END_OF_STREAM = 1,          /* begin_step: no more steps, the writer has closed */
    GPUBP_NOT_READY = 2,              /* begin_step: no new step within the timeout, writer active */
    GPUBP_ERR_INVALID_ARG = -1,       /* NULL where a value is required, a bad enum, a bad size */
    GPUBP_ERR_NOT_FOUND = -2,         /* unknown variable or attribute name */
    GPUBP_ERR_INVALID_SELECTION = -3, /* a selection (box, block, memory box) outside its bounds */
    GPUBP_ERR_INVALID_DIMS = -4,      /* wrong number of dimensions */
    GPUBP_ERR_INVALID_STEP = -5,      /* a step (or step range) that does not exist */
    GPUBP_ERR_WRONG_MODE = -6,        /* a call not allowed in this open mode or state */
    GPUBP_ERR_TYPE_MISMATCH = -7,     /* a type that does not fit the variable or call */
    GPUBP_ERR_FORMAT = -8,            /* a damaged or inconsistent dataset (message: file, offset) */
    GPUBP_ERR_NOT_BP4 = -9,           /* the path is not a BP4 dataset */
    GPUBP_ERR_BP5 = -10,              /* an ADIOS2 BP5 dataset (mmd.0) where BP4 is needed (append) */
    GPUBP_ERR_IO = -11,               /* a system call failed; gpubp_last_errno() keeps errno */
    GPUBP_ERR_NOMEM = -12,            /* an allocation failed */
    GPUBP_ERR_NOT_SUPPORTED = -13,    /* a feature this build lacks (e.g. GPU without CUDA) */
    GPUBP_ERR_DEVICE = -14,           /* a GPU runtime call failed; message keeps its error */
    GPUBP_ERR_MEMORY_SPACE = -15,     /* a pointer in the wrong memory space for the variable */
    GPUBP_ERR_PARAM = -16,            /* an unknown key or a bad value in a params string */
    GPUBP_ERR_EXISTS = -17,           /* a variable or attribute defined twice */
    GPUBP_ERR_CODEC = -18,            /* compressed data with an operator or codec not supported */
    GPUBP_ERR_UNSUPPORTED_TYPE = -19, /* a variable or attribute of a type this library cannot
                                       * read (listed, not readable; the message names the type id) */
    GPUBP_ERR_INTERNAL = -99          /* a bug in libgpubp: please report it */
} gpubp_status;

/* ---------------------------------------------------------------------------------------------
 * Enumerations. Values are pinned. Type values equal the BP4 type ids on disk.
 * ------------------------------------------------------------------------------------------- */
typedef enum gpubp_type {
    GPUBP_TYPE_INT8 = 0,
    GPUBP_TYPE_INT16 = 1,
    GPUBP_TYPE_INT32 = 2,
    GPUBP_TYPE_INT64 = 4,
    GPUBP_TYPE_FLOAT = 5,
    GPUBP_TYPE_DOUBLE = 6,
    GPUBP_TYPE_LONG_DOUBLE = 7,       /* x86-64 `long double` as ADIOS2 stores it: the 80-bit x87
                                       * extended format in 16 bytes (10 bytes of value, little-endian,
                                       * 6 padding bytes). See "Long double". */
    GPUBP_TYPE_STRING = 9,            /* single values, local values and attributes */
    GPUBP_TYPE_FLOAT_COMPLEX = 10,    /* two floats: real, imaginary */
    GPUBP_TYPE_DOUBLE_COMPLEX = 11,   /* two doubles: real, imaginary */
    GPUBP_TYPE_STRING_ARRAY = 12,     /* define_attribute only: an array of n >= 1 strings, kept
                                       * apart from a single string even when n == 1 (read back as
                                       * GPUBP_TYPE_STRING with is_array set) */
    GPUBP_TYPE_UINT8 = 50,
    GPUBP_TYPE_UINT16 = 51,
    GPUBP_TYPE_UINT32 = 52,
    GPUBP_TYPE_UINT64 = 54,
    GPUBP_TYPE_CHAR = 55,             /* read only: C++ `char` variables written by ADIOS2 */
    GPUBP_TYPE_STRUCT = 56            /* read only: ADIOS2 BP5 struct variables (DefineStruct):
                                       * arrays of records of the writer's layout, described by
                                       * gpubp_variable_struct(); see "Struct variables" */
} gpubp_type;

typedef enum gpubp_mode {
    GPUBP_MODE_WRITE = 0,              /* create name.bp/, replacing an existing dataset */
    GPUBP_MODE_APPEND = 1,             /* add steps to an existing dataset (created if absent) */
    GPUBP_MODE_READ = 2,               /* read steps in order with begin_step / end_step */
    GPUBP_MODE_READ_RANDOM_ACCESS = 3  /* read any step through step selections; no begin_step */
} gpubp_mode;

typedef enum gpubp_memory_space {
    GPUBP_MEM_DETECT = 0,  /* decided by the first pointer given to put/get */
    GPUBP_MEM_HOST = 1,
    GPUBP_MEM_GPU = 2      /* exists in every build; without CUDA its use is GPUBP_ERR_NOT_SUPPORTED */
} gpubp_memory_space;

typedef enum gpubp_launch {
    GPUBP_SYNC = 0,     /* the data is consumed (put) or delivered (get) before the call returns */
    GPUBP_DEFERRED = 1  /* the data is consumed or delivered at perform_puts/perform_gets/end_step */
} gpubp_launch;

/* ADIOS2's LocalValueDim: gpubp_define_variable with ndims 1 and shape[0] ==
 * GPUBP_LOCAL_VALUE_DIM defines a local value (one value per block). Shape entries from
 * GPUBP_LOCAL_VALUE_DIM up to SIZE_MAX are reserved (ADIOS2's sentinels). */
#define GPUBP_LOCAL_VALUE_DIM ((size_t)-3)

typedef enum gpubp_shape_kind {
    GPUBP_SHAPE_GLOBAL_VALUE = 0,  /* ndims 0: one value per step */
    GPUBP_SHAPE_GLOBAL_ARRAY = 1,  /* shape, start, count */
    GPUBP_SHAPE_LOCAL_VALUE = 2,   /* one value per block, seen as a 1-D array of blocks: one
                                    * element per block of the step, in block order */
    GPUBP_SHAPE_LOCAL_ARRAY = 3,   /* blocks with a count and no shape; read by block id */
    GPUBP_SHAPE_JOINED_ARRAY = 4   /* blocks joined along one dimension */
} gpubp_shape_kind;

typedef struct gpubp_file gpubp_file;          /* an open dataset (ADIOS2: an engine) */
typedef struct gpubp_variable gpubp_variable;  /* a variable of one open file */

/* ---------------------------------------------------------------------------------------------
 * Library
 * ------------------------------------------------------------------------------------------- */

/* The version string of the library that is running, e.g. "0.1.0". Static storage. */
GPUBP_API const char *gpubp_version(void);

/* Features compiled in, as bits: 1 = CUDA, 2 = MPI; then the codecs of the blosc operator that
 * this build reads and writes: 4 = zlib, 8 = blosclz (both always), 16 = lz4 and lz4hc (liblz4),
 * 32 = zstd (libzstd); 64 = ADIOS2's bzip2 operator, read only (libbz2). */
#define GPUBP_FEATURE_CUDA 1u
#define GPUBP_FEATURE_MPI 2u
#define GPUBP_FEATURE_ZLIB 4u
#define GPUBP_FEATURE_BLOSCLZ 8u
#define GPUBP_FEATURE_LZ4 16u
#define GPUBP_FEATURE_ZSTD 32u
#define GPUBP_FEATURE_BZIP2 64u
GPUBP_API unsigned gpubp_features(void);

/* The versions of the codec libraries this process runs with, as those libraries report them
 * (the ones loaded at run time, which may differ from the ones the library was built against),
 * e.g. "zlib 1.2.13, liblz4 1.9.4, libzstd 1.5.4, libbz2 1.0.8": zlib always, then liblz4,
 * libzstd and libbz2 when this build has them (gpubp_features). The speed of compression
 * depends on them (docs/compression.md, "Codec library versions"). nvCOMP, loaded on the first
 * compressed device block, is not listed. Static storage, never NULL; thread-safe. */
GPUBP_API const char *gpubp_codec_versions(void);

/* A short English description of a status ("invalid selection"). Static storage; unknown
 * values give "unknown status". */
GPUBP_API const char *gpubp_strerror(int status);

/* The message of the last failure on this thread: what failed and why, naming the file, offset,
 * variable or key involved. Thread-local storage, valid until the next libgpubp call on this
 * thread that fails; "" when no call failed yet. Never NULL. */
GPUBP_API const char *gpubp_last_error(void);

/* The errno (GPUBP_ERR_IO) or GPU runtime error code (GPUBP_ERR_DEVICE) behind the last failure on
 * this thread, or 0. */
GPUBP_API int gpubp_last_errno(void);

/* ---------------------------------------------------------------------------------------------
 * Files and steps
 * ------------------------------------------------------------------------------------------- */

/* Opens the dataset `path` (a directory name.bp/; in read modes also an ADIOS2 BP3 file name.bp,
 * its data in name.bp.dir/, docs/format/bp3.md; a missing path `name` whose name.bp is such a
 * file opens it, as ADIOS2's BP3 reader does) in `mode`.
 * params: NULL or "key=value,key=value" with the keys of docs/parameters.md (gpu_layout,
 *   pool_slots, chunk_mib, piece_kib, io_threads, subfiles, direct_io, fsync, timeout; readers
 *   also select_steps (ADIOS2's SelectSteps: only those steps are read, renumbered from 0) and
 *   ignore_flatten (a BP5 FlattenSteps dataset's steps as written), ...). An
 *   unknown key or bad value is GPUBP_ERR_PARAM naming the key. Keys that do not apply to the mode are ignored.
 * WRITE replaces an existing dataset at path. APPEND continues an existing BP4 dataset (or creates
 *   one). Both set the writer-active flag in md.idx while open; it is cleared at close.
 * READ and READ_RANDOM_ACCESS read md.idx and md.0. An absent or empty md.idx means "no steps yet"
 *   (READ: begin_step gives GPUBP_END_OF_STREAM or GPUBP_NOT_READY; random access: 0 steps) in a
 *   directory that holds md.0 or data.0 (a writer that has not committed a step); a directory
 *   with none of md.idx, md.0 and data.0 is GPUBP_ERR_NOT_BP4.
 *   A path "gpubp://HOST:PORT/REL/PATH.bp" reads a dataset served by gpubp-serve (read modes only;
 *   parameters connect_timeout, retries, retry_delay, token_file).
 * On success *out is a new handle that the caller owns and must release with gpubp_close().
 * Errors: INVALID_ARG (NULL out/path, bad mode), PARAM, IO (errno kept), NOT_BP4 (not a BP4
 *   directory: a plain file that is no BP3 file (or any plain file in write modes), a missing path
 *   in read mode, a foreign md.idx), BP5 (an ADIOS2 BP5 directory), NOT_SUPPORTED (a big-endian
 *   BP3 file, ADIOS 1.x's BP files), FORMAT (damaged metadata: file and offset in the message),
 *   NOMEM. *out is NULL on failure. */
GPUBP_API int gpubp_open(gpubp_file **out, const char *path, gpubp_mode mode, const char *params);

/* Closes f and frees it with all its variables. A writer first ends an open step (as end_step),
 * then clears the writer-active flag. Accepts NULL (returns GPUBP_OK). After the call f and every
 * gpubp_variable of f are invalid, even when an error is returned (IO: the flag could not be
 * cleared; the steps already committed stay readable). */
GPUBP_API int gpubp_close(gpubp_file *f);

/* Starts a step.
 * Write/append: puts until end_step belong to this step. WRONG_MODE if a step is already open.
 * READ: advances to the next step. Returns GPUBP_END_OF_STREAM when there is none and the writer
 *   has closed (or the flag says inactive), GPUBP_NOT_READY when there is none within the open
 *   parameter `timeout` while the writer is still active. WRONG_MODE in random-access mode or
 *   when a step is already open. */
GPUBP_API int gpubp_begin_step(gpubp_file *f);

/* Ends the step. Write: performs deferred puts, writes data, then md.0, then the md.idx record;
 * the step is committed (visible to readers, durable with fsync=1) when this returns GPUBP_OK.
 * On failure nothing of this step is visible and earlier steps stay readable.
 * With the open parameter async_commit=1 (serial writers) it returns once the step's data has
 * left the caller's buffers (which may then be reused): the rest of the writes and the commit
 * run on an I/O thread. A failure found there is returned by the next put, begin_step, end_step
 * or close, naming the step; that step is not committed and the writer stops (every later call
 * returns the failure), the steps before it stay readable. gpubp_steps counts queued commits.
 * READ: performs deferred gets, then releases the step. WRONG_MODE if no step is open. */
GPUBP_API int gpubp_end_step(gpubp_file *f);

/* Number of steps: committed so far (write/append), available (read: steps seen so far; random
 * access: all). */
GPUBP_API int gpubp_steps(const gpubp_file *f, size_t *nsteps);

/* The current step, 0-based: in write mode the step being (or next to be) written; in READ mode
 * the step opened by begin_step. WRONG_MODE in random-access mode. */
GPUBP_API int gpubp_current_step(const gpubp_file *f, size_t *step);

/* ---------------------------------------------------------------------------------------------
 * Variables
 * ------------------------------------------------------------------------------------------- */

/* Defines a variable for writing (WRITE or APPEND mode).
 * ndims 0: a single value (shape, start, count ignored). shape NULL and ndims > 0: a local array
 *   (start ignored, count required). ndims 1 and shape[0] == GPUBP_LOCAL_VALUE_DIM: a local
 *   value, as ADIOS2's shape {LocalValueDim} (start and count ignored, may be NULL): each put
 *   writes one value (one element; a `const char *` for strings) as one more block of the step,
 *   and readers (ADIOS2's and libgpubp's) see a 1-D array with one element per block. Otherwise a
 *   global array: shape, start and count each hold ndims values with start + count <= shape.
 * Dims are in the layout of the variable's memory space, known at the first put (see
 * gpubp_set_memory_space). Strings (GPUBP_TYPE_STRING) are single or local values only.
 * The handle is owned by f, valid until gpubp_close(f).
 * Errors: INVALID_ARG (NULL out/f/name/count, GPUBP_TYPE_STRING_ARRAY or an unknown type),
 *   WRONG_MODE (read mode), EXISTS (name defined already in this open), INVALID_DIMS (ndims > 32,
 *   a string array, a shape entry >= GPUBP_LOCAL_VALUE_DIM other than the local-value form),
 *   INVALID_SELECTION (start + count > shape), NOMEM. */
GPUBP_API int gpubp_define_variable(gpubp_variable **out, gpubp_file *f, const char *name,
                                    gpubp_type type, size_t ndims, const size_t *shape,
                                    const size_t *start, const size_t *count);

/* Finds a variable by name. Write mode: a variable defined in this open. READ: a variable present
 * in the current step. Random access: a variable present in any step. The handle is owned by f and
 * valid until gpubp_close(f); in READ mode its block and shape data follow the current step.
 * Errors: INVALID_ARG, NOT_FOUND (message names the variable), WRONG_MODE (READ, no step open). */
GPUBP_API int gpubp_inquire_variable(gpubp_variable **out, gpubp_file *f, const char *name);

/* The variable's full name. Borrowed; valid while the handle is. */
GPUBP_API int gpubp_variable_name(const gpubp_variable *v, const char **name);

/* Changes the global shape for the following puts (write), e.g. a shape that grows per step.
 * Errors: INVALID_ARG, WRONG_MODE (read, or not a global array), INVALID_DIMS (ndims differs). */
GPUBP_API int gpubp_set_shape(gpubp_variable *v, size_t ndims, const size_t *shape);

/* Write: the block (start, count) of the next put. Read: the box that the next get reads (global
 *   arrays; local values: a range of block ids, ndims 1), or the count for local arrays (start may
 *   be NULL, then zeros; the box is inside the selected block). Dims are in the layout of the
 *   variable's memory space.
 * Errors: INVALID_ARG, INVALID_DIMS (ndims differs), INVALID_SELECTION (box outside the shape;
 *   checked at once on write, against the selected step on read; a BP5 joined array, whose every
 *   step reports one shape in random access as ADIOS2's reader does (the last dataset step's, or
 *   where the variable is not in that step, its first writer's of its first step), also takes a
 *   box inside what the selected step's own blocks hold), WRONG_MODE (write mode, a local value:
 *   each put is one value). */
GPUBP_API int gpubp_set_selection(gpubp_variable *v, size_t ndims, const size_t *start,
                                  const size_t *count);

/* Read: selects block `block_id` (counted within one step) for gets of a local array or of a
 * single value written several times in a step, or limits a global-array get to that block when
 * no box is selected. A local value then reads the one value of that block (selection size: one
 * element per selected step), as ADIOS2 does. INVALID_SELECTION if the step has fewer
 * blocks (checked at the get). WRONG_MODE in write mode. */
GPUBP_API int gpubp_set_block_selection(gpubp_variable *v, size_t block_id);

/* Random access: selects steps [step_start, step_start + step_count) of the variable (counted from
 * 0 over the steps in which the variable appears). A get then fills step_count consecutive boxes,
 * the step being the slowest dimension of the buffer. INVALID_STEP if the range does not exist;
 * WRONG_MODE in write and READ modes. */
GPUBP_API int gpubp_set_step_selection(gpubp_variable *v, size_t step_start, size_t step_count);

/* Sets the memory space of the buffers given to put/get for this variable. A variable is HOST or
 * GPU for its whole life: setting the other space once resolved is GPUBP_ERR_MEMORY_SPACE; setting
 * the same again is fine. DETECT (the default) resolves at the first put/get from the pointer
 * (device memory = GPU; host, pinned and managed memory = HOST). GPU without CUDA is
 * GPUBP_ERR_NOT_SUPPORTED. With the default gpu_layout (column_major) dims of a GPU variable are
 * in reversed (GPU) order, and stored reversed in the file, exactly as ADIOS2 does. */
GPUBP_API int gpubp_set_memory_space(gpubp_variable *v, gpubp_memory_space space);

/* The memory space the variable resolved to, or GPUBP_MEM_DETECT while unresolved. */
GPUBP_API int gpubp_variable_memory_space(const gpubp_variable *v, gpubp_memory_space *space);

/* The shape in the layout of `space`: HOST gives the file (row-major) shape, GPU the GPU layout
 * (reversed by default), DETECT the variable's own space (HOST while unresolved). Read: the shape
 * at the current step (READ), or the first selected step (random access; the last step's shape
 * when no step selection is set, as ADIOS2's BP4 reader; a get without a step selection reads
 * step 0 with step 0's shape). Local arrays: the count of the selected block. Global values:
 * nothing is written (ndims 0). `dims` must hold gpubp_variable_ndims() values. */
GPUBP_API int gpubp_variable_shape(const gpubp_variable *v, gpubp_memory_space space, size_t *dims);

/* ndims: local values have 1 (the blocks). type: the type id on disk; a variable of a type this
 * library cannot read (an id gpubp_type_size gives 0 for, other than strings) is still listed,
 * with its id, kind, steps, blocks and block dims, and every call that needs its values (get,
 * selection_size, minmax, the min/max of block_info) returns GPUBP_ERR_UNSUPPORTED_TYPE naming
 * the id. */
GPUBP_API int gpubp_variable_ndims(const gpubp_variable *v, size_t *ndims);
GPUBP_API int gpubp_variable_type(const gpubp_variable *v, gpubp_type *type);
GPUBP_API int gpubp_variable_shape_kind(const gpubp_variable *v, gpubp_shape_kind *kind);

/* Number of steps in which the variable appears (read), or steps written so far (write). */
GPUBP_API int gpubp_variable_steps(const gpubp_variable *v, size_t *nsteps);

/* The dataset step (0-based, counting every step of the file) of the variable's `step`-th
 * appearance, for variables absent from some steps (bpls -D prints dataset steps).
 * INVALID_STEP if the variable has fewer steps; WRONG_MODE in write modes. */
GPUBP_API int gpubp_variable_dataset_step(const gpubp_variable *v, size_t step,
                                          size_t *dataset_step);

/* Number of blocks of the variable in `step` (0-based over the variable's steps in random-access
 * mode; ignored in READ mode, where the current step counts). INVALID_STEP if absent.
 * Blocks are counted as they were put: the sub-blocks libgpubp's writer cut one global-array put
 * into (open parameter split_mib) count as one block, here, in gpubp_variable_block_info and in
 * gpubp_set_block_selection; the open parameter block_view=stored counts every stored block, as
 * ADIOS2's readers do (docs/parameters.md). */
GPUBP_API int gpubp_variable_blocks(const gpubp_variable *v, size_t step, size_t *nblocks);

/* Min and max over the current step and block selections (all steps when no step selection is
 * set in random access; the current step in READ), written as one element of the variable's type
 * each (complex: compared by modulus, as ADIOS2). Either pointer may be NULL. NOT_SUPPORTED for
 * strings. */
GPUBP_API int gpubp_variable_minmax(const gpubp_variable *v, void *min, void *max);

/* *missing = 1 when some block of the variable was written without min/max (ADIOS2's
 * StatsLevel=0, or a step appended so): gpubp_variable_minmax skips such blocks, where ADIOS2's
 * BP4 reader counts each as 0 / 0. Over every step in random access (no block is loaded), over
 * the current step in READ; selections do not apply. A single value always has its value: 0.
 * NOT_SUPPORTED for strings, WRONG_MODE in write modes. */
GPUBP_API int gpubp_variable_minmax_missing(const gpubp_variable *v, int *missing);

/* One block's start and count (ndims values each, in the variable's memory-space layout; zeros
 * as start for local arrays) and min/max (one element each). Any out-pointer may be NULL.
 * For single values min = max = the value; an empty block (a zero count) has no statistics and
 * gives zeros. INVALID_STEP / INVALID_SELECTION when absent. */
GPUBP_API int gpubp_variable_block_info(const gpubp_variable *v, size_t step, size_t block,
                                        size_t *start, size_t *count, void *min, void *max);

/* The joined dimension of a joined array (ADIOS2's JoinedDim: the blocks of a step are stacked
 * along it), counted in the file's row-major (HOST) layout. INVALID_ARG for other kinds,
 * WRONG_MODE in write modes. */
GPUBP_API int gpubp_variable_joined_dim(const gpubp_variable *v, size_t *dim);

/* The rank of the writer that wrote a block (ADIOS2's BlockInfo.WriterID) of a BP5 dataset read
 * from disk: blocks are in writer order, a writer may write several or none. NOT_SUPPORTED for
 * BP4 datasets (their metadata does not keep it) and gpubp:// datasets; INVALID_STEP /
 * INVALID_SELECTION when absent, WRONG_MODE in write modes. */
GPUBP_API int gpubp_variable_block_writer(const gpubp_variable *v, size_t step, size_t block,
                                          size_t *writer);

/* The operator (compression) that stored a block, by the name ADIOS2 gives it and
 * `bpls --list_operators` prints: "blosc", "bzip2", "zfp", "sz", "mgard", ..., "null" (ADIOS2's
 * null operator), a plugin operator as "LIBRARY(NAME)" (the header's PluginLibrary and
 * PluginName), an operator byte ADIOS2 does not know as "unknown (type N)"; "" when the block is
 * stored as it is. Copied NUL-terminated into name (cap bytes; 64 hold every name but a
 * plugin's, whose two names have up to 255 bytes each). Blocks are numbered as by
 * gpubp_variable_block_info (step: the variable's step in random access, ignored in READ mode,
 * which uses the current step). BP4 and BP3 metadata name the operator; BP5 metadata does not,
 * so for a BP5 dataset (and a BP4 plugin) the first bytes of the block's stored data are read
 * (4, a plugin's header up to 128 KiB). Reading does not need the operator to be one libgpubp
 * decodes (blosc, bzip2, null). Thread rules as gpubp_get. Errors: INVALID_ARG (NULL, cap 0 or
 * too small for the name: the message gives the size), INVALID_STEP / INVALID_SELECTION when
 * absent, WRONG_MODE in write modes, IO, FORMAT (a stored block that cannot hold its operator's
 * header, or lies past the end of its data file). */
GPUBP_API int gpubp_variable_block_operator(const gpubp_variable *v, size_t step, size_t block,
                                            char *name, size_t cap);

/* Bytes a get with the current selections needs (all selected steps). For a string value: its
 * length + 1 (the terminating NUL). */
GPUBP_API int gpubp_selection_size(const gpubp_variable *v, size_t *bytes);

/* Bytes of one element: gpubp_type_size() of its type, a struct variable's record size (padding
 * included), 0 for strings. UNSUPPORTED_TYPE for a type this library cannot read. */
GPUBP_API int gpubp_variable_element_size(const gpubp_variable *v, size_t *bytes);

/* A derived variable that ADIOS2 wrote without data (IO::DefineDerivedVariable with
 * DerivedVarType StatsOnly or ExpressionString; BP5): *expression is its expression (borrowed,
 * until gpubp_close), else NULL (every other variable, and derived ones stored with their data,
 * which read as any array). Such a variable lists with its type, shape, steps, blocks and (for
 * StatsOnly) min/max; gpubp_get of it is NOT_FOUND naming the expression (ADIOS2 readers built
 * with derived variables compute it; libgpubp does not evaluate expressions). INVALID_ARG for
 * NULL. */
GPUBP_API int gpubp_variable_expression(const gpubp_variable *v, const char **expression);

/* ---------------------------------------------------------------------------------------------
 * Struct variables (read only). ADIOS2's BP5 writer stores arrays of C structs (IO::DefineStruct,
 * DefineStructVariable; global and local arrays) as records of the writer's layout; their type is
 * GPUBP_TYPE_STRUCT. gpubp_get copies whole records (padding included) into host or device
 * memory (device memory: the stream rules of any device get), with the same selections as any
 * array; there are no min/max (gpubp_variable_minmax and gpubp_variable_minmax_missing:
 * NOT_SUPPORTED; gpubp_variable_block_info writes nothing to min and max). A big-endian writer's records are
 * converted field by field to host order. A struct whose description has a string or pointer
 * field is listed by no call and its inquiry is NOT_SUPPORTED, naming why. The description below
 * comes from the dataset's mmd.0 and lives until gpubp_close(). Errors of both: INVALID_ARG
 * (NULL v, i out of range), TYPE_MISMATCH (not a struct variable, or a file open for writing).
 * ------------------------------------------------------------------------------------------- */

/* The struct's name as the writer defined it (borrowed), its record size and field count. Any
 * out-pointer may be NULL. */
GPUBP_API int gpubp_variable_struct(const gpubp_variable *v, const char **name, size_t *size,
                                    size_t *nfields);

/* Field i (in the writer's order): name (borrowed), element type, byte offset in the record and
 * element count (1, or n for a field declared with n elements). Any out-pointer may be NULL. */
GPUBP_API int gpubp_variable_struct_field(const gpubp_variable *v, size_t i, const char **name,
                                          gpubp_type *type, size_t *offset, size_t *count);

/* Describes the user's (larger) buffer for ghost cells: the buffer has dims `count`, and the box a
 * put reads or a get fills (the selection's count) starts at `start` inside it. Dims in the memory
 * space's layout; works for host and device buffers (strided copies). Pass ndims 0 to clear.
 * INVALID_DIMS if ndims differs from the variable's; INVALID_SELECTION at put/get if the
 * selection's count does not fit at start inside count. */
GPUBP_API int gpubp_set_memory_selection(gpubp_variable *v, size_t ndims, const size_t *start,
                                         const size_t *count);

/* The names of the variables (sorted), borrowed: valid until the next begin_step, define or close
 * of f. */
GPUBP_API int gpubp_available_variables(const gpubp_file *f, size_t *n, const char *const **names);

/* Adds a compression operator to a variable (write modes; before its first put). `op` names a
 * Blosc2 codec: "blosclz", "lz4", "lz4hc", "zlib" or "zstd"; blocks are written as ADIOS2 writes
 * a blosc-compressed block (operator name "blosc", Blosc2 chunks with that codec), which ADIOS2
 * built with Blosc2 reads. params: NULL or "level=1,shuffle=byte,threads=N" (level 0..9, default
 * 1; shuffle byte|bit|none, default byte; threads: compression threads, default the open
 * parameter compress_threads, else all cores). Min/max are computed on the uncompressed data. A
 * file-wide default is the open parameter compress=CODEC (with compress_level, compress_shuffle).
 * The codec must be in this build (gpubp_features(): GPUBP_FEATURE_LZ4 for lz4/lz4hc,
 * GPUBP_FEATURE_ZSTD for zstd), else CODEC naming the missing library.
 * Errors: INVALID_ARG, WRONG_MODE (read mode, or after the first put), CODEC (unknown operator),
 *   PARAM (bad params, naming the key), NOT_SUPPORTED (string variables). */
GPUBP_API int gpubp_variable_add_operation(gpubp_variable *v, const char *op, const char *params);

/* ---------------------------------------------------------------------------------------------
 * Data
 * ------------------------------------------------------------------------------------------- */

/* Writes one block of v in the current step, from `data` in the variable's memory space, with
 * the current shape, selection and memory selection. SYNC: `data` may be reused when the call
 * returns (device data: the copy out of it has completed). DEFERRED: `data` must stay valid and
 * unchanged until perform_puts or end_step returns. GPU data is read on the library's stream (see
 * <gpubp/cuda.h> to order it after a user stream); with no user stream, work already queued on
 * the legacy default stream is complete first. Strings: `data` is a `const char *`.
 * Errors: INVALID_ARG, WRONG_MODE (not writing, or no step open), MEMORY_SPACE, NOT_SUPPORTED,
 *   DEVICE, IO, NOMEM. */
GPUBP_API int gpubp_put(gpubp_file *f, gpubp_variable *v, const void *data, gpubp_launch mode);

/* Reads the current selection of v into `data` (host or device, per the variable's memory space),
 * which must hold gpubp_selection_size() bytes (the memory-selection box aside). SYNC: filled when
 * the call returns. DEFERRED: filled when perform_gets or end_step returns; do not touch it before.
 * Errors: INVALID_ARG, WRONG_MODE, INVALID_SELECTION, INVALID_STEP, MEMORY_SPACE, FORMAT, IO,
 *   DEVICE, CODEC, NOMEM. */
GPUBP_API int gpubp_get(gpubp_file *f, gpubp_variable *v, void *data, gpubp_launch mode);

/* Carries out the deferred puts (writes their data; the step stays open) / gets. */
GPUBP_API int gpubp_perform_puts(gpubp_file *f);
GPUBP_API int gpubp_perform_gets(gpubp_file *f);

/* ---------------------------------------------------------------------------------------------
 * Attributes
 * ------------------------------------------------------------------------------------------- */

/* Defines an attribute (write modes). n elements of `type` at data; GPUBP_TYPE_STRING takes a
 * `const char *` when n == 1 (a single string) and a `const char *const *` (n strings, a string
 * array) when n > 1; GPUBP_TYPE_STRING_ARRAY always takes a `const char *const *` of n >= 1
 * strings and writes a string array (BP4 type 12), so that a one-element array stays an array
 * (ADIOS2 prints it {"a"}, a single string "a"). GPUBP_TYPE_LONG_DOUBLE takes n 16-byte elements.
 * The data is copied. It is written with the next step (ADIOS2 semantics); defining the same
 * name again with other data modifies it.
 * Errors: INVALID_ARG (NULL, n == 0, an unknown type, a NULL string or one longer than 65534
 *   bytes), WRONG_MODE (read mode), NOMEM. */
GPUBP_API int gpubp_define_attribute(gpubp_file *f, const char *name, gpubp_type type,
                                     const void *data, size_t n);

/* Defines the attribute `var` "/" `name`, attached to a variable as ADIOS2 does. */
GPUBP_API int gpubp_define_variable_attribute(gpubp_file *f, const char *var, const char *name,
                                              gpubp_type type, const void *data, size_t n);

/* The names of the attributes (sorted), borrowed, valid until the next begin_step or close. */
GPUBP_API int gpubp_available_attributes(const gpubp_file *f, size_t *n, const char *const **names);

/* Type and element count of an attribute (a single string counts 1; `is_array` tells a
 * one-element array from a single value; may be NULL). String arrays report GPUBP_TYPE_STRING
 * with is_array 1. An attribute of a type this library cannot read is listed with its type id
 * and count; its data calls return GPUBP_ERR_UNSUPPORTED_TYPE. NOT_FOUND when absent. */
GPUBP_API int gpubp_inquire_attribute(const gpubp_file *f, const char *name, gpubp_type *type,
                                      size_t *n, int *is_array);

/* Copies the n elements of a numeric attribute into `data` (n * element size bytes).
 * TYPE_MISMATCH for a string attribute, UNSUPPORTED_TYPE for a type this library cannot read. */
GPUBP_API int gpubp_attribute_data(const gpubp_file *f, const char *name, void *data);

/* Element i of a string attribute, NUL-terminated, borrowed until the next begin_step or close. */
GPUBP_API int gpubp_attribute_string(const gpubp_file *f, const char *name, size_t i,
                                     const char **s);

/* Size in bytes of one element of `type` (strings, structs and unknown ids: 0; long double: 16;
 * a variable's own: gpubp_variable_element_size). */
GPUBP_API size_t gpubp_type_size(gpubp_type type);

/* The ADIOS2 name of a type ("int32_t", "double complex", "long double", "string"; a string
 * array is "string"; GPUBP_TYPE_STRUCT "struct"; an unknown id "unknown"). Static storage. */
GPUBP_API const char *gpubp_type_name(gpubp_type type);

/* ---------------------------------------------------------------------------------------------
 * Long double
 * GPUBP_TYPE_LONG_DOUBLE elements are 16 bytes in the layout ADIOS2 writes on x86-64 Linux: bytes
 * 0-7 the 64-bit significand (explicit integer bit), bytes 8-9 sign and 15-bit exponent, bytes
 * 10-15 padding (zeros in the metadata: values, min/max, attributes; array payloads keep what
 * the caller's buffer held, as ADIOS2's do). put, get and attributes copy the elements byte for
 * byte; nothing converts them. On
 * x86-64 (gcc, clang) this is the C `long double`, so arrays of `long double` are passed as they
 * are. Where `long double` differs (aarch64 binary128, MSVC's 8-byte long double) the two
 * functions below convert from and to double. Min/max compare the 80-bit values exactly
 * (-0 equals +0; NaN compares false both ways, as ADIOS2 does).
 * ------------------------------------------------------------------------------------------- */

/* Writes x as one GPUBP_TYPE_LONG_DOUBLE element (16 bytes at dst; exact: every double,
 * subnormals, infinities and NaN payloads included, is representable). INVALID_ARG for NULL. */
GPUBP_API int gpubp_long_double_from_double(void *dst, double x);

/* Reads one GPUBP_TYPE_LONG_DOUBLE element (16 bytes at src) as a double, rounded to nearest
 * (values beyond double's range become +-inf, those below its smallest subnormal +-0; NaN stays
 * NaN, infinities stay infinite). INVALID_ARG for NULL. */
GPUBP_API int gpubp_long_double_to_double(const void *src, double *x);

#ifdef __cplusplus
}
#endif

#endif /* GPUBP_H */
