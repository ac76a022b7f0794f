/* lib/compress/blosc_fused.h: see blosc_fused.c. */
#ifndef GBP_COMPRESS_BLOSC_FUSED_H
#define GBP_COMPRESS_BLOSC_FUSED_H

#include "compress/blosc_encx.h"

/* Cuts len input bytes at in into units and codes, walks and copies them into the encoder's
 * direct output with the encoder's threads (more than one): the bytes one thread writes.
 * GPUBP_OK, or GPUBP_ERR_NOMEM with the record set. */
int gbp_blosc_enc_fused_batch(gbp_blosc_enc *e, const uint8_t *in, size_t len);

#endif /* GBP_COMPRESS_BLOSC_FUSED_H */
