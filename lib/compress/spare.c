/* One scratch buffer kept between calls, for the encoder (blosc_enc.c): the threaded one's scratch
 * holds a batch of coded blocks: tens of MiB, which malloc serves from fresh mmapped pages each
 * call once they are 32 MiB or more (glibc's largest dynamic mmap threshold); touching them
 * again is what costs (here: 32 MiB fresh 28 ms, reused 2 ms). The one-thread encoder's block
 * scratch (256 KiB) too: freed each call, it made glibc trim and regrow its heap every call.
 * One buffer of at most GBP_SPARE_MAX bytes is kept for the life of the process (freed at exit);
 * a second caller at the same time allocates its own. */
#include "compress/spare.h"

#include "common/alloc.h"

#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void *kept;
static size_t kept_cap;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void spare_at_exit(void)
{
    pthread_mutex_lock(&mu);
    gbp_free(kept);
    kept = NULL;
    kept_cap = 0;
    pthread_mutex_unlock(&mu);
}

static void spare_register_exit(void) { (void)atexit(spare_at_exit); }

void *gbp_spare_take(size_t n, size_t *cap)
{
    void *p = NULL;
    pthread_mutex_lock(&mu);
    if (kept && kept_cap >= n) {
        p = kept;
        *cap = kept_cap;
        kept = NULL;
        kept_cap = 0;
    }
    pthread_mutex_unlock(&mu);
    if (p) return p;
    p = gbp_malloc(n);
    *cap = p ? n : 0;
    return p;
}

void gbp_spare_give(void *p, size_t cap)
{
    if (!p) return;
    if (cap <= GBP_SPARE_MAX) {
        pthread_once(&exit_once, spare_register_exit);
        pthread_mutex_lock(&mu);
        if (cap > kept_cap) { /* keep the larger one */
            void *q = p;
            p = kept;
            kept = q;
            kept_cap = cap;
        }
        pthread_mutex_unlock(&mu);
    }
    gbp_free(p);
}
