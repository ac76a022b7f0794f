/* tests/python/sim_shim.h: see sim_shim.c. The two exported test hooks of libgpubp_pysim: memory of
 * the simulated device (gbp_sim_alloc / gbp_sim_free), for the Python tests through ctypes. */
#ifndef GBP_TEST_SIM_SHIM_H
#define GBP_TEST_SIM_SHIM_H

#include <stddef.h>

#include "gpubp.h"

GPUBP_API void *gpubp_test_sim_alloc(size_t n);
GPUBP_API void gpubp_test_sim_free(void *p);

#endif /* GBP_TEST_SIM_SHIM_H */
