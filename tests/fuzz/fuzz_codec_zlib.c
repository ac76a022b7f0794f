/* Fuzz target: the zlib decoder of lib/compress (fuzz_codec.h says what is fed and checked). */
#define FZ_CODEC_FORMAT GBP_FMT_ZLIB
#define FZ_CODEC_ENC GBP_BLOSC_ZLIB
#define FZ_CODEC_ENC2 GBP_BLOSC_ZLIB
#include "fuzz/fuzz_codec.h"
