/* lib/io: read-only mappings of a file range, for copying the runs of a strided host read out of
 * the page cache without one pread per run (the `read_mmap` parameter, docs/parameters.md).
 *
 * The hazard, and why it is opt-in: a mapped page whose file is truncated while it is mapped
 * raises SIGBUS in the thread that touches it, where pread returns a short count the library
 * reports. A range that lies past the end of the file when the mapping is made is never mapped
 * (gbp_fmap_open declines and the caller reads with pread, which reports the truncation), so only
 * a truncation during the copy itself — e.g. ADIOS2 writing the dataset anew, which opens its files
 * with O_TRUNC (libgpubp's writers remove the old files instead) — is not caught. */
#ifndef GBP_FMAP_H
#define GBP_FMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct gbp_fmap {
    void *addr;     /* the mapping (page-aligned), NULL when not mapped */
    size_t maplen;  /* its length */
    uint64_t off;   /* the file offset of the range's first byte */
    const uint8_t *base; /* where that byte is in the mapping */
} gbp_fmap;

/* Maps bytes [off, off + len) of fd read-only, its pages populated at once (MAP_POPULATE: no
 * fault per page, nothing left to read ahead). Returns 1 when mapped, 0 when not (len 0, the
 * range not wholly inside the file, or mmap failed): then *m is empty and the caller reads with
 * pread, whose errors name the file. Never sets an error. The mapping is the caller's until
 * gbp_fmap_close; the file descriptor may be closed meanwhile. Thread-safe (each mapping is its
 * own). */
int gbp_fmap_open(gbp_fmap *m, int fd, uint64_t off, size_t len);
/* The mapped byte at file offset off (inside the range given to gbp_fmap_open). */
static inline const uint8_t *gbp_fmap_at(const gbp_fmap *m, uint64_t off)
{
    return m->base + (off - m->off);
}
/* Whether a strided read of `want` bytes in a span of `span` bytes is worth mapping: the mapping
 * populates (and, for pages not cached, reads) every page of the span, the gaps too, where a
 * pread per run touches only the runs' pages; so only spans of at most four times the wanted
 * bytes are mapped (the half box: twice), never a few narrow columns of wide rows. */
static inline int gbp_fmap_worth(size_t span, size_t want)
{
    return want > 0 && (want > SIZE_MAX / 4 || span <= 4 * want);
}
/* Unmaps (an empty *m: nothing). */
void gbp_fmap_close(gbp_fmap *m);
/* Mappings made so far by this process (tests check that the mapped path ran). */
size_t gbp_fmap_count(void);

#endif
