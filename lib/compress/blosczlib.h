/* lib/compress: the ADIOS2 `blosc` operator buffer with the Blosc2 zlib codec.
 *
 * The payload of a compressed BP4 block (characteristic 11, operator name "blosc") is an ADIOS2
 * blosc operator buffer, buffer version 1: a 4-byte common header, the uncompressed size, the Blosc2
 * version, a DataHeader, then Blosc2 chunks (docs/format/blosc-zlib.md). This layer writes that
 * buffer exactly as ADIOS2 2.12 + Blosc2 2.19.1 lay it out for the zlib codec (same block sizes,
 * same fallbacks; with zlib 1.2.13 the bytes are identical) and reads every layout that document
 * lists for a reader. Pure memory-to-memory: no I/O, no CUDA; depends on lib/common and zlib.
 *
 * Threads: compression and decompression split each chunk's blocks over a pool of `threads` worker
 * threads (0 = all online cores, 1 = the calling thread only). The output does not depend on the
 * thread count. All functions are reentrant; errors are recorded in the calling thread's
 * last-error record (gbp_error). */
#ifndef GBP_BLOSCZLIB_H
#define GBP_BLOSCZLIB_H

/* The module's API, one header per .c: constants and parameters, the encoder, the decoder, what
 * this build has (blosc_codec.c's gbp_blosc_features, gbp_blosc_check_codec). The files of
 * lib/compress include the headers they use one by one. */
#include "compress/blosc_dec.h"
#include "compress/blosc_dzcpu.h"
#include "compress/blosc_enc.h"
#include "compress/blosc_codec.h"
#include "compress/blosc_params.h"
#include "compress/shuffle.h"

#endif /* GBP_BLOSCZLIB_H */
