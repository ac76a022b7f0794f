/* lib/format/bp5_op.h: see bp5_op.c: operator buffers (§9.3). */
#ifndef GBP_FORMAT_BP5_OP_H
#define GBP_FORMAT_BP5_OP_H

#include <stddef.h>
#include <stdint.h>

#include "format/bp5.h"

/* The operator of a buffer: its byte 0 (ADIOS2's core::Operator::OperatorType). */
enum { BP5_OP_BLOSC = 0, BP5_OP_BZIP2 = 1, BP5_OP_NULL = 127 };

/* The operator of a stored block (n bytes at p) and, for null, the raw bytes inside it (*raw:
 * raw_size bytes, checked); blosc and bzip2 buffers are handed whole to their decoders. Errors: FORMAT (a short
 * or inconsistent buffer), CODEC (an operator libgpubp does not decode, named). The messages do
 * not name the block: the caller does. */
int bp5_op_parse(const uint8_t *p, size_t n, uint64_t raw_size, int *type, const uint8_t **raw);

/* The longest header bp5_op_name reads: a plugin's, 4 bytes and 255 parameters of up to 255-byte
 * keys and values. */
#define BP5_OP_NAME_MAX_HEADER (4 + 1 + 255 * 512)

/* The ADIOS2 name of the operator of a buffer (n bytes at p: its first bytes, up to
 * BP5_OP_NAME_MAX_HEADER, are enough), as `bpls --list_operators` prints it: "blosc", "bzip2",
 * "zfp", ..., "null", a plugin as "LIBRARY(NAME)" (its header's PluginLibrary and PluginName;
 * "plugin" without them), another byte as "unknown (type N)"; copied into name (cap bytes).
 * Errors: FORMAT (n == 0), INVALID_ARG (cap too small, named); the caller names the block. */
int bp5_op_name(const uint8_t *p, size_t n, char *name, size_t cap);

#endif /* GBP_FORMAT_BP5_OP_H */
