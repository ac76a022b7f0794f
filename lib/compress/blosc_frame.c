/* The parts of the blosc module that the encoder and the decoder share (blosc_frame.h). */
#include "compress/blosc_frame.h"


voidpf gbp_blosc_zalloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    size_t n;
    if (!gbp_mul_ok(items, size, &n)) return Z_NULL;
    return gbp_malloc(n);
}
void gbp_blosc_zfree(voidpf opaque, voidpf p)
{
    (void)opaque;
    gbp_free(p);
}
