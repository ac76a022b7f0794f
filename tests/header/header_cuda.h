/* tests/header/header_cuda.h: see header_cuda.c. */
#ifndef GBP_TEST_HEADER_CUDA_H
#define GBP_TEST_HEADER_CUDA_H

/* The checks of <gpubp/cuda.h>: NULL when all pass, else the first failure. */
const char *header_cuda_checks(void);

#endif /* GBP_TEST_HEADER_CUDA_H */
