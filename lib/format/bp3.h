/* lib/format/bp3.h: see bp3.c: ADIOS2's BP3 files (its engine "BP3", the default before 2.5) read
 * through the BP4 reader: BP3's one index of all steps cut into BP4 step metadata. No I/O. */
#ifndef GBP_FORMAT_BP3_H
#define GBP_FORMAT_BP3_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* The mini-footer: the last BP3_FOOTER_SIZE bytes of a BP3 file (docs/format/bp3.md). */
#define BP3_FOOTER_SIZE 56

typedef struct bp3_footer {
    uint64_t pg, var, attr; /* file offsets of the PG, variable and attribute indexes */
    int has_subfiles;       /* data in NAME.bp.dir/NAME.bp.N; else in the file itself */
    int writer[3];          /* ADIOS version of the writer (major, minor, patch) */
} bp3_footer;

/* Checks the footer f (the file's last BP3_FOOTER_SIZE bytes; fsize: the file's size) and fills
 * *ft. GPUBP_ERR_NOT_BP4 when f is no BP3 footer (another file), GPUBP_ERR_NOT_SUPPORTED for a
 * big-endian file, GPUBP_ERR_FORMAT for index offsets that do not fit the file. `what` names the
 * file in messages. */
int bp3_parse_footer(const uint8_t f[BP3_FOOTER_SIZE], uint64_t fsize, bp3_footer *ft,
                     const char *what);

/* Cuts BP3's index into what a BP4 dataset has: m holds the file's bytes from ft->pg to its end
 * (n bytes); md0 receives a BP4 md.0 (header, then one step block per step: the step's process
 * groups, its variables' characteristic sets and, in the first step only, every attribute with its
 * first value, as ADIOS2's BP3 reader keeps it) and idx a BP4 md.idx whose records point into it
 * (the writer not active). Steps are the process groups' time steps in increasing order. Every
 * length is checked: damage is GPUBP_ERR_FORMAT with the file offset; a characteristic set whose
 * time index is no step is one too. md0 and idx are appended to (the caller owns them). */
int bp3_to_bp4(const uint8_t *m, size_t n, const bp3_footer *ft, gbp_buf *md0, gbp_buf *idx,
               const char *what);

#endif /* GBP_FORMAT_BP3_H */
