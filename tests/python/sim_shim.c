/* libgpubp_pysim: the whole library (gpubp_static) plus two exported test hooks, so that the
 * Python tests can allocate memory of the simulated device ("device=simulated", which counts only
 * its own allocations as device memory) and run the package's GPU code paths without a GPU.
 * Loaded through GPUBP_LIBRARY by the ctest case python_simdevice only; never installed. */
#include "python/sim_shim.h"

#include "memspace/simdev.h"

void *gpubp_test_sim_alloc(size_t n)
{
    return gbp_sim_alloc(n);
}

void gpubp_test_sim_free(void *p)
{
    gbp_sim_free(p);
}
