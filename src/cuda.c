/* The public API of <gpubp/cuda.h>: gpubp_set_stream. */
#include "engine/handles.h"

#include "gpubp/cuda.h"

int gpubp_set_stream(gpubp_file *f, void *cuda_stream)
{
    GBP_CHECK_ARG(f);
    return gbp_file_set_stream(f, cuda_stream);
}
