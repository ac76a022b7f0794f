/* tests/fuzz/fuzz_target.h: the entry point every fuzz target (fuzz_<target>.c) defines; libFuzzer
 * calls it, and so does replay_main.c for each corpus and regression input. */
#ifndef GBP_FUZZ_TARGET_H
#define GBP_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* GBP_FUZZ_TARGET_H */
