/* The memory-space context. This first version knows host memory only: writes go straight from
 * the user's buffer to the file (minmax computed chunk by chunk while the chunk is in cache);
 * strided boxes are packed through a bounded bounce buffer. Device backends plug in here. */
#include "box.h"
#include "fileio.h"

#include <errno.h>

#define GBP_BOUNCE_BYTES ((size_t)4 << 20)
#define GBP_MINMAX_CHUNK ((size_t)1 << 20)

struct gbp_mem {
    gbp_params params;
    uint8_t *bounce; /* host bounce buffer for strided boxes, GBP_BOUNCE_BYTES */
    int first_error;
};

int gbp_mem_open(gbp_mem **out, const gbp_params *params)
{
    gbp_mem *m = gbp_calloc(1, sizeof *m);
    if (!m) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory");
    m->params = *params;
    *out = m;
    return GPUBP_OK;
}

void gbp_mem_close(gbp_mem *m)
{
    if (!m) return;
    gbp_free(m->bounce);
    gbp_free(m);
}

int gbp_mem_has_device(const gbp_mem *m) { (void)m; return 0; }

int gbp_mem_detect(gbp_mem *m, const void *ptr, gpubp_memory_space *space)
{
    (void)m; (void)ptr;
    *space = GPUBP_MEM_HOST;
    return GPUBP_OK;
}

static int need_bounce(gbp_mem *m)
{
    if (!m->bounce) {
        m->bounce = gbp_malloc(GBP_BOUNCE_BYTES);
        if (!m->bounce) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (bounce buffer)");
    }
    return GPUBP_OK;
}

static int device_unsupported(void)
{
    return gbp_error(GPUBP_ERR_NOT_SUPPORTED, 0,
                     "GPU memory is not supported by this build of libgpubp (built without CUDA)");
}

typedef struct pack_ctx {
    gbp_mem *m;
    int fd;
    uint64_t off;     /* file offset of the next byte */
    const uint8_t *base;
    size_t fill;      /* bytes in the bounce buffer */
    int type;
    size_t elsize;
    void *min, *max;
    int have;
} pack_ctx;

static int flush_bounce(pack_ctx *c)
{
    if (c->fill == 0) return 0;
    if (c->min) {
        gbp_minmax(c->type, c->m->bounce, c->fill / c->elsize, c->min, c->max, c->have);
        c->have = 1;
    }
    int rc = gbp_pwrite_all(c->fd, c->m->bounce, c->fill, c->off, "data file");
    c->off += c->fill;
    c->fill = 0;
    return rc;
}

static int pack_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    pack_ctx *c = ctx;
    (void)b_off;
    const uint8_t *src = c->base + a_off;
    while (bytes > 0) {
        size_t room = GBP_BOUNCE_BYTES - c->fill;
        size_t n = bytes < room ? bytes : room;
        memcpy(c->m->bounce + c->fill, src, n);
        c->fill += n;
        src += n;
        bytes -= n;
        if (c->fill == GBP_BOUNCE_BYTES) {
            int rc = flush_bounce(c);
            if (rc) return rc;
        }
    }
    return 0;
}

int gbp_mem_write(gbp_mem *m, gpubp_memory_space sp, int fd, uint64_t off, const void *base,
                  int type, const gbp_box *src, void *min, void *max)
{
    if (sp == GPUBP_MEM_GPU) return device_unsupported();
    size_t elsize = gbp_type_size(type);
    size_t n = gbp_box_elements(src);
    if (gbp_box_is_contiguous(src)) {
        const uint8_t *p = (const uint8_t *)base + gbp_box_offset(src) * elsize;
        size_t bytes = n * elsize, done = 0;
        int have = 0;
        /* minmax of a chunk while it is in cache, then its write */
        while (done < bytes) {
            size_t step = bytes - done < GBP_MINMAX_CHUNK * 8 ? bytes - done : GBP_MINMAX_CHUNK * 8;
            if (min) {
                gbp_minmax(type, p + done, step / elsize, min, max, have);
                have = 1;
            }
            GBP_FORWARD_IF_ERROR(gbp_pwrite_all(fd, p + done, step, off + done, "data file"));
            done += step;
        }
        return GPUBP_OK;
    }
    GBP_FORWARD_IF_ERROR(need_bounce(m));
    pack_ctx c = {m, fd, off, base, 0, type, elsize, min, max, 0};
    int rc = gbp_box_foreach_run(src, NULL, elsize, pack_run, &c);
    if (rc) return rc;
    return flush_bounce(&c);
}

typedef struct read_ctx {
    int fd;
    uint64_t off;
    uint8_t *dst;
} read_ctx;

static int read_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    read_ctx *c = ctx;
    return gbp_pread_all(c->fd, c->dst + b_off, bytes, c->off + a_off, "data file");
}

int gbp_mem_read(gbp_mem *m, gpubp_memory_space sp, int fd, uint64_t off, size_t elsize,
                 const gbp_box *fbox, void *dst, const gbp_box *dbox)
{
    (void)m;
    if (sp == GPUBP_MEM_GPU) return device_unsupported();
    read_ctx c = {fd, off, dst};
    return gbp_box_foreach_run(fbox, dbox, elsize, read_run, &c);
}

typedef struct scatter_ctx {
    const uint8_t *src;
    uint8_t *dst;
} scatter_ctx;

static int scatter_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    scatter_ctx *c = ctx;
    memcpy(c->dst + b_off, c->src + a_off, bytes);
    return 0;
}

int gbp_mem_scatter(gbp_mem *m, gpubp_memory_space sp, const void *src, size_t elsize,
                    const gbp_box *sbox, void *dst, const gbp_box *dbox)
{
    (void)m;
    if (sp == GPUBP_MEM_GPU) return device_unsupported();
    scatter_ctx c = {src, dst};
    return gbp_box_foreach_run(sbox, dbox, elsize, scatter_run, &c);
}

int gbp_mem_copy_out(gbp_mem *m, gpubp_memory_space sp, void *dst_host, const void *src, size_t n)
{
    (void)m;
    if (sp == GPUBP_MEM_GPU) return device_unsupported();
    memcpy(dst_host, src, n);
    return GPUBP_OK;
}

int gbp_mem_sync(gbp_mem *m)
{
    (void)m;
    return GPUBP_OK;
}

size_t gbp_mem_footprint(const gbp_mem *m) { return m->bounce ? GBP_BOUNCE_BYTES : 0; }
