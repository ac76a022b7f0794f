/* Fuzz target: the lz4 decoder of lib/compress, lz4 and lz4hc streams (fuzz_codec.h says what is
 * fed and checked). */
#define FZ_CODEC_FORMAT GBP_FMT_LZ4
#define FZ_CODEC_ENC GBP_BLOSC_LZ4
#define FZ_CODEC_ENC2 GBP_BLOSC_LZ4HC
#include "fuzz/fuzz_codec.h"
