/* Fuzz target: the zstd decoder of lib/compress (fuzz_codec.h says what is fed and checked). */
#define FZ_CODEC_FORMAT GBP_FMT_ZSTD
#define FZ_CODEC_ENC GBP_BLOSC_ZSTD
#define FZ_CODEC_ENC2 GBP_BLOSC_ZSTD
#include "fuzz/fuzz_codec.h"
