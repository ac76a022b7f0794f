/* Read-only mappings of a file range (fmap.h). */
#include "io/fmap.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_size_t n_maps;

size_t gbp_fmap_count(void) { return atomic_load(&n_maps); }

int gbp_fmap_open(gbp_fmap *m, int fd, uint64_t off, size_t len)
{
    memset(m, 0, sizeof *m);
    struct stat st;
    if (len == 0 || fstat(fd, &st) != 0 || st.st_size < 0 || off > (uint64_t)st.st_size ||
        len > (uint64_t)st.st_size - off)
        return 0; /* past the end of the file: pread reports it */
    long pg = sysconf(_SC_PAGESIZE);
    uint64_t page = pg > 0 ? (uint64_t)pg : 4096;
    uint64_t start = off - off % page;
    size_t maplen = (size_t)(off - start) + len;
    int flags = MAP_SHARED;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE; /* the page tables filled in one call, not one fault per page */
#endif
    void *a = mmap(NULL, maplen, PROT_READ, flags, fd, (off_t)start);
    if (a == MAP_FAILED) return 0;
    m->addr = a;
    m->maplen = maplen;
    m->off = off;
    m->base = (const uint8_t *)a + (off - start);
    atomic_fetch_add(&n_maps, 1);
    return 1;
}

void gbp_fmap_close(gbp_fmap *m)
{
    if (m->addr) (void)munmap(m->addr, m->maplen);
    memset(m, 0, sizeof *m);
}
