/* lib/compress/blosc_dzcpu.h: see blosc_dzcpu.c. */
#ifndef GBP_COMPRESS_BLOSC_DZCPU_H
#define GBP_COMPRESS_BLOSC_DZCPU_H

#include "common/dzops.h"

/* The CPU stand-in of the batched device codec (blosc_dzcpu.c): this layer's filters and codecs
 * on host memory (the simulated device's). blosclz is refused, as on a real device. */
const gbp_dzops *gbp_blosc_cpu_dzops(void);

#endif /* GBP_COMPRESS_BLOSC_DZCPU_H */
