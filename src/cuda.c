/* The public API of <gpubp/cuda.h>: gpubp_set_stream. */
#include "engine/engine_internal.h"

#include "gpubp/cuda.h"

#include <stdio.h>
#include <stdlib.h>

int gpubp_set_stream(gpubp_file *f, void *cuda_stream)
{
    GBP_CHECK_ARG(f);
    return gbp_mem_set_stream(f->mem, cuda_stream);
}
