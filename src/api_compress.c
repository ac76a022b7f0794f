/* The compressed write path: a block's values, from host or device memory, become an ADIOS2 blosc
 * operator buffer (Blosc2 chunks, zlib codec) written into its data subfile. */
#include "internal.h"

#include "blosczlib.h"
#include "box.h"

#include <string.h>

typedef struct gather_ctx {
    gbp_mem *mem;
    gpubp_memory_space space;
    const uint8_t *src;
    uint8_t *dst;
    size_t at;
} gather_ctx;

static int gather_run(void *ctx, size_t a_off, size_t b_off, size_t bytes)
{
    gather_ctx *g = ctx;
    (void)b_off;
    int rc = gbp_mem_copy_out(g->mem, g->space, g->dst + g->at, g->src + a_off, bytes);
    g->at += bytes;
    return rc;
}

int gbp_write_compressed(gpubp_file *f, gbp_wblock *wb, int fd, const char *fname)
{
    gpubp_variable *v = wb->var;
    size_t es = gbp_type_size(v->type), raw = (size_t)wb->payload_len, n = raw / es;
    const uint8_t *src;
    uint8_t *tmp = NULL;
    if (wb->space == GPUBP_MEM_HOST && gbp_box_is_contiguous(&wb->box)) {
        src = (const uint8_t *)wb->data + gbp_box_offset(&wb->box) * es;
    } else {
        tmp = gbp_malloc(raw);
        if (!tmp) return gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (%zu bytes to compress)", raw);
        gather_ctx g = {f->mem, wb->space, wb->data, tmp, 0};
        int rc = gbp_box_foreach_run(&wb->box, NULL, es, gather_run, &g);
        if (rc) {
            gbp_free(tmp);
            return rc;
        }
        src = tmp;
    }
    gbp_minmax(v->type, src, n, wb->meta.mm, wb->meta.mm + 16, 0);
    size_t cap = gbp_blosc_bound(raw), out = 0;
    uint8_t *zbuf = gbp_malloc(cap);
    int rc = zbuf ? GPUBP_OK : gbp_error(GPUBP_ERR_NOMEM, 0, "out of memory (compression)");
    int threads = v->op_threads ? v->op_threads : f->params.compress_threads;
    if (rc == GPUBP_OK)
        rc = gbp_blosc_compress(src, raw, es, v->op_level, v->op_shuffle, threads, zbuf, cap, &out);
    gbp_free(tmp);
    if (rc == GPUBP_OK) rc = gbp_pwrite_all(fd, zbuf, out, wb->meta.payload_offset, fname);
    gbp_free(zbuf);
    if (rc != GPUBP_OK) return rc;
    memset(&wb->opstore, 0, sizeof wb->opstore);
    memcpy(wb->opstore.name, "blosc", 6);
    wb->opstore.pre_type = (uint8_t)v->type;
    wb->opstore.raw_size = raw;
    wb->opstore.size = out;
    wb->meta.op = &wb->opstore;
    wb->payload_len = out;
    return GPUBP_OK;
}

