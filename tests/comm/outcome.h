/* Per-rank outcomes of a test body run on threads as ranks (fake_comm.h): rank threads never call
 * cmocka asserts; they note the first problem (printed at once, since the other ranks may then be
 * left waiting) and each rank's per-step status and message, which the test checks after
 * fc_run. Included by one test source each. */
#ifndef GPUBP_TEST_OUTCOME_H
#define GPUBP_TEST_OUTCOME_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpubp.h"
#include "support/test_support.h"

#define MAXR 8

typedef struct outcome {
    pthread_mutex_t mu;
    int bad;
    char first[1024];
    int end_rc[MAXR][8];     /* per rank and step (at most 8 steps) */
    char end_msg[MAXR][1024];
} outcome;

static void note(outcome *o, int rank, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&o->mu);
    if (!o->bad++) {
        int n = snprintf(o->first, sizeof o->first, "rank %d: ", rank);
        vsnprintf(o->first + n, sizeof o->first - (size_t)n, fmt, ap);
        fprintf(stderr, "%s\n", o->first);
    }
    pthread_mutex_unlock(&o->mu);
    va_end(ap);
}

/* In a rank body with `outcome *o` and `int rank`: note a failed call and leave. */
#define RK(expr)                                                                              \
    do {                                                                                      \
        int rk_ = (expr);                                                                     \
        if (rk_ != GPUBP_OK) {                                                                \
            note(o, rank, "%s -> %d: %s", #expr, rk_, gpubp_last_error());                  \
            return;                                                                           \
        }                                                                                     \
    } while (0)

/* Records rank's status rc (and the last error) for step k. */
static void record(outcome *o, int rank, int k, int rc)
{
    o->end_rc[rank][k] = rc;
    if (rc) snprintf(o->end_msg[rank], sizeof o->end_msg[rank], "%s", gpubp_last_error());
}

static void outcome_init(outcome *o)
{
    memset(o, 0, sizeof *o);
    pthread_mutex_init(&o->mu, NULL);
}

static void assert_clean(outcome *o)
{
    if (o->bad) print_error("%s\n", o->first);
    assert_int_equal(o->bad, 0);
    pthread_mutex_destroy(&o->mu);
}

#endif
