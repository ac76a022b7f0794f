/* The device of a context for device work outside lib/memspace (mem_dz.h): the GPU compression
 * path's context, scratch memory, copies, min/max and counters. */
#include <stdio.h>
#include <string.h>

#include "memspace/dz_cache.h"
#include "memspace/mem_ctx.h"
#include "memspace/mem_minmax.h"
#include "memspace/mem_dz.h"

int gbp_mem_dev_ctx(gbp_mem *m, void **dctx, int *simulated)
{
    if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
    GBP_FORWARD_IF_ERROR(m->ops->bind_thread(m->dctx));
    if (m->user_stream) GBP_FORWARD_IF_ERROR(m->ops->fence_user_stream(m->dctx));
    *dctx = m->dctx;
    if (simulated) *simulated = m->ops == gbp_sim_ops();
    return GPUBP_OK;
}

int gbp_mem_dev_alloc(gbp_mem *m, void **p, size_t n)
{
    *p = NULL;
    if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
    return m->ops->dev_alloc(m->dctx, p, n ? n : 1);
}

void gbp_mem_dev_free(gbp_mem *m, void *p)
{
    if (p && m->dctx) m->ops->dev_free(m->dctx, p);
}

int gbp_mem_dz_state(gbp_mem *m, const gbp_dzops *ops, void *dctx, void **z)
{
    if (m->dz && m->dz_ops != ops) {
        m->dz_ops->close(m->dz);
        m->dz = NULL;
    }
    if (!m->dz) {
        double t0 = m->stats ? gbp_now_s() : 0;
        gbp_dz_take(m); /* a closed file's, parked */
        if (m->dz && m->dz_ops != ops) {
            m->dz_ops->close(m->dz);
            m->dz = NULL;
        }
        if (!m->dz) GBP_FORWARD_IF_ERROR(ops->open(dctx, &m->dz));
        m->dz_ops = ops;
        if (m->stats) m->dz_t[GBP_DZT_STATE] += gbp_now_s() - t0;
    }
    *z = m->dz;
    return GPUBP_OK;
}

int gbp_mem_dz_scratch(gbp_mem *m, int which, size_t n, void **p)
{
    if (which < 0 || which >= GBP_DZ_SCRATCH)
        return gbp_error(GPUBP_ERR_INTERNAL, 0, "device scratch %d", which);
    if (n > m->dz_cap[which]) {
        double t0 = m->stats ? gbp_now_s() : 0;
        gbp_mem_dev_free(m, m->dz_buf[which]);
        m->dz_buf[which] = NULL;
        m->dz_cap[which] = 0;
        GBP_FORWARD_IF_ERROR(gbp_mem_dev_alloc(m, &m->dz_buf[which], n));
        m->dz_cap[which] = n;
        if (m->stats) m->dz_t[GBP_DZT_STATE] += gbp_now_s() - t0;
    }
    *p = m->dz_buf[which];
    return GPUBP_OK;
}

void gbp_mem_dz_scratch_swap(gbp_mem *m, int a, int b)
{
    if (a < 0 || b < 0 || a >= GBP_DZ_SCRATCH || b >= GBP_DZ_SCRATCH) return;
    void *p = m->dz_buf[a];
    size_t c = m->dz_cap[a];
    m->dz_buf[a] = m->dz_buf[b];
    m->dz_cap[a] = m->dz_cap[b];
    m->dz_buf[b] = p;
    m->dz_cap[b] = c;
}

void *gbp_mem_dz_user(gbp_mem *m, size_t size, void (*free_fn)(gbp_mem *m, void *p),
                      void (*reset_fn)(void *p))
{
    if (!m->dz_user) {
        m->dz_user = gbp_calloc(1, size);
        m->dz_user_free = free_fn;
        m->dz_user_reset = reset_fn;
    }
    return m->dz_user;
}

void *gbp_mem_dz_peek(gbp_mem *m, const gbp_dzops **ops, void **z)
{
    *ops = m->dz_ops;
    *z = m->dz;
    return m->dz ? m->dz_user : NULL;
}

void gbp_mem_dz_free(gbp_mem *m)
{
    double t0 = m->stats ? gbp_now_s() : 0;
    if (gbp_dz_park(m)) { /* the next file takes it */
        if (m->stats) m->dz_t[GBP_DZT_CLOSE] += gbp_now_s() - t0;
        return;
    }
    if (m->dz) m->dz_ops->close(m->dz); /* waits for its stream: nothing uses the buffers then */
    m->dz = NULL;
    if (m->dz_user) {
        m->dz_user_free(m, m->dz_user);
        gbp_free(m->dz_user);
        m->dz_user = NULL;
    }
    for (int i = 0; i < GBP_DZ_SCRATCH; i++) {
        gbp_mem_dev_free(m, m->dz_buf[i]);
        m->dz_buf[i] = NULL;
        m->dz_cap[i] = 0;
    }
    if (m->dz_owner) m->ops->close(m->dz_owner);
    m->dz_owner = NULL;
    if (m->stats) m->dz_t[GBP_DZT_CLOSE] += gbp_now_s() - t0;
}

int gbp_mem_dev_copy(gbp_mem *m, int h2d, void *dst, const void *src, size_t n)
{
    if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
    if (n == 0) return GPUBP_OK;
    gbp_copy3d k = {src, dst, n, 1, 1, 0, 0, 0, 0, h2d ? GBP_COPY_H2D : GBP_COPY_D2H};
    GBP_FORWARD_IF_ERROR(m->ops->copy_async(m->dctx, &k));
    return m->ops->sync(m->dctx);
}

int gbp_mem_dev_minmax(gbp_mem *m, const void *p, int type, size_t n, void *min, void *max)
{
    if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
    if (n == 0) return GPUBP_OK;
    gbp_box b;
    gbp_box_dense(&b, 1, &n);
    return gbp_mem_minmax_queue(m, p, type, &b, min, max);
}

int gbp_mem_dev_sync(gbp_mem *m)
{
    if (!gbp_memctx_dev_open(m)) return gbp_memctx_unsupported(m);
    return m->ops->sync(m->dctx);
}

void gbp_mem_dz_note(gbp_mem *m, int decode, size_t raw, size_t stored, const char *fallback)
{
    int d = decode != 0;
    if (fallback) {
        snprintf(m->dz_why, sizeof m->dz_why, "%s", fallback);
        return;
    }
    m->dz_blocks[d]++;
    m->dz_raw[d] += raw;
    m->dz_stored[d] += stored;
}

_Static_assert(GBP_DZT_PHASES <= GBP_DZ_TIMES, "room for the phase times");

int gbp_mem_dz_timing(const gbp_mem *m) { return m->stats; }

void gbp_mem_dz_time(gbp_mem *m, int phase, double seconds)
{
    if (phase < 0 || phase >= GBP_DZT_PHASES) return;
    m->dz_t[phase] += seconds;
    if (m->captev) gbp_mem_trace(m, gbp_now_s() - seconds, seconds, phase, -1, 0);
}

void gbp_mem_dz_report(const gbp_mem *m)
{
    if (!m->stats || (!m->dz_blocks[0] && !m->dz_blocks[1] && !m->dz_why[0])) return;
    fprintf(stderr, "gpubp-mem: device_codec: compressed %ld blocks (%.1f MiB -> %.1f MiB), "
            "decompressed %ld blocks (%.1f MiB from %.1f MiB)%s%s\n",
            m->dz_blocks[0], (double)m->dz_raw[0] / 1048576.0,
            (double)m->dz_stored[0] / 1048576.0, m->dz_blocks[1],
            (double)m->dz_raw[1] / 1048576.0, (double)m->dz_stored[1] / 1048576.0,
            m->dz_why[0] ? "; CPU codecs used: " : "", m->dz_why);
    const double *t = m->dz_t;
    fprintf(stderr, "gpubp-mem: device_codec state seconds: opened or taken from the cache, "
            "buffers grown %.4f; freed or parked at close %.4f (%d parked)\n", t[GBP_DZT_STATE],
            t[GBP_DZT_CLOSE], gbp_dz_cache_count());
    if (m->dz_blocks[0])
        fprintf(stderr, "gpubp-mem: device_codec write seconds: filter+code(incl. wait) %.4f, "
                "framing %.4f, assembly %.4f, write submission %.4f, write waits %.4f, "
                "block setup+headers(+redo) %.4f; total %.4f\n",
                t[GBP_DZT_W_FILTER_CODE], t[GBP_DZT_W_FRAME], t[GBP_DZT_W_ASSEMBLE],
                t[GBP_DZT_W_SUBMIT], t[GBP_DZT_W_WAIT], t[GBP_DZT_W_FINISH],
                t[GBP_DZT_W_FILTER_CODE] + t[GBP_DZT_W_FRAME] + t[GBP_DZT_W_ASSEMBLE] +
                    t[GBP_DZT_W_SUBMIT] + t[GBP_DZT_W_WAIT] + t[GBP_DZT_W_FINISH]);
    if (m->dz_blocks[1])
        fprintf(stderr, "gpubp-mem: device_codec read seconds: file read(+upload: whole blocks) "
                "%.4f, parse %.4f, upload %.4f, decode(incl. wait) %.4f, placement+unshuffle "
                "%.4f; total %.4f\n",
                t[GBP_DZT_R_FILE], t[GBP_DZT_R_PARSE], t[GBP_DZT_R_UPLOAD], t[GBP_DZT_R_DECODE],
                t[GBP_DZT_R_PLACE],
                t[GBP_DZT_R_FILE] + t[GBP_DZT_R_PARSE] + t[GBP_DZT_R_UPLOAD] +
                    t[GBP_DZT_R_DECODE] + t[GBP_DZT_R_PLACE]);
}

unsigned gbp_mem_dz_fence(gbp_mem *m)
{
    if (!m->threads_started) return m->fence++;
    pthread_mutex_lock(&m->lock);
    unsigned f = m->fence;
    /* the next fence's counter was that of fence f + 1 - GBP_FENCES: it must be done */
    while (m->fence_open[(f + 1) % GBP_FENCES] > 0) pthread_cond_wait(&m->cv, &m->lock);
    m->fence = f + 1;
    pthread_mutex_unlock(&m->lock);
    return f;
}

int gbp_mem_dz_fence_wait(gbp_mem *m, unsigned fence)
{
    if (!m->threads_started) return gbp_memctx_kept_error(m);
    pthread_mutex_lock(&m->lock);
    /* fences older than the last GBP_FENCES are done (gbp_mem_dz_fence waited for them) */
    if (m->fence - fence < GBP_FENCES)
        while (m->fence_open[fence % GBP_FENCES] > 0) pthread_cond_wait(&m->cv, &m->lock);
    pthread_mutex_unlock(&m->lock);
    return gbp_memctx_kept_error(m);
}
