/* The parts of the blosc module that the encoder and the decoder share (blosc_frame.h). */
#include "blosc_frame.h"

#include <stdatomic.h>

static atomic_size_t max_chunk_hook = 0;

void gbp_blosc_set_max_chunk(size_t bytes) { atomic_store(&max_chunk_hook, bytes); }

size_t gbp_blosc_max_chunk(void)
{
    size_t m = atomic_load(&max_chunk_hook);
    return m ? m : GBP_BLOSC_MAX_CHUNK;
}

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
