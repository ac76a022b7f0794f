/* The process-wide cache of the GPU codec path's per-file device state (docs/compression.md,
 * "After run 32"). A file's state is a codec stream with its events, the coded-stream buffers,
 * batch arrays, nvCOMP's temporary memory and pinned result arrays (cuda/cuda_dz.cu), zdev.c's
 * output rings and filter buffers, and the scratch buffers: a dozen cudaMalloc / cudaMallocHost
 * calls as the first blocks grow them, and as many synchronising frees at close, for every file.
 * So at close the state is parked here (GBP_DZ_KITS at most; the CUDA backend, or the simulated
 * one when a test asks; GPUBP_DZ_CACHE=0 turns it off) and the next file of the process on the
 * same backend and device takes it: the codec state is re-bound to the new file's context (its
 * adopt op, which says whether the device is the same), the caller's state is reset. A kit keeps
 * a backend context of its own, through which what it holds is freed when trimmed (at exit:
 * registered at the first park, after the CUDA runtime's own exit handler, so it runs first). */
#include "memspace/dz_cache.h"

#include "memspace/devops.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define GBP_DZ_KITS 4
#define GBP_DZ_PARK_SCRATCH ((size_t)1 << 30) /* larger scratch buffers are freed at close */

typedef struct dz_kit {
    const gbp_devops *backend;
    void *owner; /* a backend context of the kit's own */
    const gbp_dzops *ops;
    void *z;
    void *user;
    void (*user_free)(gbp_mem *m, void *p);
    void (*user_reset)(void *p);
    void *buf[GBP_DZ_SCRATCH];
    size_t cap[GBP_DZ_SCRATCH];
} dz_kit;

static pthread_mutex_t kit_mu = PTHREAD_MUTEX_INITIALIZER;
static dz_kit kits[GBP_DZ_KITS];
static int nkits;
static atomic_int kit_sim;
static pthread_once_t kit_exit_once = PTHREAD_ONCE_INIT;

static void kit_at_exit(void) { gbp_dz_cache_trim(); }
static void kit_register_exit(void) { (void)atexit(kit_at_exit); }

static int kit_caches(const gbp_mem *m)
{
    const char *e = getenv("GPUBP_DZ_CACHE");
    if (e && !strcmp(e, "0")) return 0;
    return m->ops == gbp_cuda_ops() || (m->ops == gbp_sim_ops() && atomic_load(&kit_sim));
}

/* A gbp_mem through which the kit's memory is freed (gbp_mem_dev_free: its ops and context). */
static void kit_mem(const dz_kit *k, gbp_mem *tmp)
{
    memset(tmp, 0, sizeof *tmp);
    tmp->ops = k->backend;
    tmp->dctx = k->owner;
}

static void kit_free_user(dz_kit *k)
{
    gbp_mem tmp;
    kit_mem(k, &tmp);
    if (k->user) {
        k->user_free(&tmp, k->user);
        gbp_free(k->user);
    }
    k->user = NULL;
}

static void kit_free(dz_kit *k)
{
    if (k->z) k->ops->close(k->z); /* waits for its stream */
    kit_free_user(k);
    for (int i = 0; i < GBP_DZ_SCRATCH; i++)
        if (k->buf[i]) k->backend->dev_free(k->owner, k->buf[i]);
    if (k->owner) k->backend->close(k->owner);
    memset(k, 0, sizeof *k);
}

int gbp_dz_park(gbp_mem *m)
{
    int any = m->dz || m->dz_user;
    for (int i = 0; i < GBP_DZ_SCRATCH; i++) any |= m->dz_buf[i] != NULL;
    if (!any || !m->dctx || !kit_caches(m)) return 0;
    if (!m->dz_owner && m->ops->open(&m->dz_owner) != GPUBP_OK) {
        gbp_error_clear();
        m->dz_owner = NULL;
        return 0;
    }
    pthread_mutex_lock(&kit_mu);
    if (nkits == GBP_DZ_KITS) {
        pthread_mutex_unlock(&kit_mu);
        return 0;
    }
    dz_kit *k = &kits[nkits++];
    *k = (dz_kit){m->ops, m->dz_owner, m->dz_ops, m->dz, m->dz_user, m->dz_user_free,
                  m->dz_user_reset, {NULL}, {0}};
    for (int i = 0; i < GBP_DZ_SCRATCH; i++) { /* a huge read's scratch is not kept */
        if (m->dz_cap[i] > GBP_DZ_PARK_SCRATCH) m->ops->dev_free(m->dctx, m->dz_buf[i]);
        else k->buf[i] = m->dz_buf[i], k->cap[i] = m->dz_cap[i];
        m->dz_buf[i] = NULL;
        m->dz_cap[i] = 0;
    }
    pthread_mutex_unlock(&kit_mu);
    pthread_once(&kit_exit_once, kit_register_exit);
    m->dz = NULL;
    m->dz_user = NULL;
    m->dz_owner = NULL;
    return 1;
}

void gbp_dz_take(gbp_mem *m)
{
    if (m->dz || m->dz_owner || !m->dctx || !kit_caches(m)) return;
    dz_kit k;
    int found = 0;
    pthread_mutex_lock(&kit_mu);
    for (int i = nkits - 1; i >= 0 && !found; i--) {
        if (kits[i].backend != m->ops) continue;
        if (kits[i].z && kits[i].ops->adopt(kits[i].z, m->dctx) != GPUBP_OK) { /* another device */
            gbp_error_clear();
            continue;
        }
        k = kits[i];
        kits[i] = kits[--nkits];
        found = 1;
    }
    pthread_mutex_unlock(&kit_mu);
    if (!found) return;
    m->dz = k.z;
    m->dz_ops = k.z ? k.ops : NULL;
    m->dz_owner = k.owner;
    if (!m->dz_user && k.user) {
        m->dz_user = k.user;
        m->dz_user_free = k.user_free;
        m->dz_user_reset = k.user_reset;
        if (k.user_reset) k.user_reset(k.user);
    } else {
        kit_free_user(&k);
    }
    for (int i = 0; i < GBP_DZ_SCRATCH; i++) {
        if (!k.buf[i]) continue;
        if (m->dz_buf[i]) {
            k.backend->dev_free(k.owner, k.buf[i]);
        } else {
            m->dz_buf[i] = k.buf[i];
            m->dz_cap[i] = k.cap[i];
        }
    }
}

void gbp_dz_cache_sim(int on)
{
    atomic_store(&kit_sim, on);
    if (!on) gbp_dz_cache_trim();
}

void gbp_dz_cache_trim(void)
{
    pthread_mutex_lock(&kit_mu);
    while (nkits > 0) kit_free(&kits[--nkits]);
    pthread_mutex_unlock(&kit_mu);
}

int gbp_dz_cache_count(void)
{
    pthread_mutex_lock(&kit_mu);
    int n = nkits;
    pthread_mutex_unlock(&kit_mu);
    return n;
}
