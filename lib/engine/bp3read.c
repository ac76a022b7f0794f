/* The reader's BP3 path: a BP3 file NAME.bp (ADIOS2's engine "BP3") is its data and, at its end,
 * one index of every step and a mini-footer; ADIOS2 2.x puts the data of writer (or aggregator) K
 * in NAME.bp.dir/NAME.bp.K and leaves NAME.bp the index alone. format/bp3.c cuts the index into
 * BP4 step metadata, which the BP4 reader then serves from memory (f->rd.md0_all): listings,
 * steps, blocks and reads are the BP4 reader's. A BP3 file is complete when written (its index
 * comes last, at close): it is read once, at open. */
#include "engine/bp3read.h"

#include "format/bp3.h"
#include "io/fileio.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* An index larger than this is refused before anything is allocated. */
#define GBP_MAX_BP3_INDEX ((uint64_t)1 << 30)

int gbp_bp3_load(const char *path, gbp_buf *md0, gbp_buf *idx, int *has_subfiles)
{
    int fd = -1;
    GBP_FORWARD_IF_ERROR(gbp_open_file(&fd, path, O_RDONLY, 0));
    uint64_t size = 0;
    uint8_t foot[BP3_FOOTER_SIZE] = {0}; /* a shorter file: bp3_parse_footer refuses its size */
    bp3_footer ft;
    uint8_t *m = NULL;
    int rc = gbp_file_size(fd, &size, path);
    if (rc == GPUBP_OK && size >= BP3_FOOTER_SIZE)
        rc = gbp_pread_all(fd, foot, sizeof foot, size - BP3_FOOTER_SIZE, path);
    if (rc == GPUBP_OK) rc = bp3_parse_footer(foot, size, &ft, path);
    if (rc == GPUBP_OK && size - ft.pg > GBP_MAX_BP3_INDEX)
        rc = gbp_error(GPUBP_ERR_FORMAT, 0, "%s: an index of %llu bytes (from offset %llu) is "
                       "larger than any this reader takes (%llu)", path,
                       (unsigned long long)(size - ft.pg), (unsigned long long)ft.pg,
                       (unsigned long long)GBP_MAX_BP3_INDEX);
    size_t n = rc == GPUBP_OK ? (size_t)(size - ft.pg) : 0;
    if (rc == GPUBP_OK && !(m = gbp_malloc(n))) rc = gbp_nomem();
    if (rc == GPUBP_OK) rc = gbp_pread_all(fd, m, n, ft.pg, path);
    close(fd);
    if (rc == GPUBP_OK) rc = bp3_to_bp4(m, n, &ft, md0, idx, path);
    gbp_free(m);
    if (rc == GPUBP_OK) *has_subfiles = ft.has_subfiles;
    return rc;
}
