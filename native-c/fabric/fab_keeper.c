/*
 * The keeper: one thread per HCA that wakes every FAB_KEEPER_PERIOD_MS and, for each of its
 * queue pairs, reads the libfabric CQ and runs the timers (fab_timers_locked: keepalive due,
 * peer silent too long). Application threads progress a queue pair whenever they call in; the
 * keeper is what runs when none does, so that an idle socket still answers its peer's
 * keepalives and still notices its peer's death, as TCP's does without the application. Four
 * wake-ups a second per JVM, each a few calls per queue pair; one a millisecond while a silent
 * reader's window fills (fab_spill.c says why).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fab_internal.h"

struct fab_keeper {
    pthread_t       thread;
    pthread_mutex_t lock;
    pthread_cond_t  wake;      /* stop */
    int             stop;
    uint64_t        hca_h;
    uint64_t       *qps;       /* handles */
    uint32_t        n, cap;
};

/* The queue pairs' handles at this moment, into a copy the caller frees; how many. */
static uint32_t snapshot(struct fab_keeper *k, uint64_t **out)
{
    *out = k->n ? malloc(k->n * sizeof **out) : NULL;
    uint32_t n = *out ? k->n : 0;
    if (n)
        memcpy(*out, k->qps, n * sizeof **out);
    return n;
}

/* One look at every queue pair; whether one of them wants the next look soon: a silent
 * reader's window filling (fab_spill.c), or data that the keeper's own progress took while no
 * application thread had called in since its last look. Over tcp a silent reader's socket
 * holds about 256 KiB: at one look per 250 ms its 16 posted receives of 64 KiB took over a
 * second to fill with eager messages, and its writer, blocked meanwhile, was taken for blocked
 * for good (FlowControlContractTest over fabric tcp). A reader that calls in takes its data
 * itself and leaves its keeper at 250 ms. */
static int round_of(struct fab_keeper *k, const uint64_t *qps, uint32_t n)
{
    int soon = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct fab_qp *qp;
        if (vh_get("keeper", k->hca_h, qps[i], VH_QP, (void **)&qp) != VAPI_OK)
            continue;   /* being destroyed */
        pthread_mutex_lock(&qp->lock);
        fab_timers_locked(qp, vapi_now_ns());   /* under the lock: the times it compares move under it */
        fab_probe_locked(qp, vapi_now_ns());    /* a tcp peer whose sends are refused: still there? */
        uint32_t received = qp->data_received;
        int silent = qp->app_calls == qp->app_calls_seen;
        qp->app_calls_seen = qp->app_calls;
        qp->spill_ok = 1;   /* only the keeper's progress extends the window (fab_spill.c) */
        fab_progress_locked(qp);
        qp->spill_ok = 0;
        soon |= fab_spill_busy(qp, vapi_now_ns()) || (silent && qp->data_received != received);
        fab_spill_trim(qp, vapi_now_ns());
        pthread_mutex_unlock(&qp->lock);
        vh_put(qps[i]);
    }
    return soon;
}

static void *keeper_main(void *arg)
{
    struct fab_keeper *k = arg;
    pthread_mutex_lock(&k->lock);
    int soon = 0;
    while (!k->stop) {
        struct timespec until = vapi_realtime_in_ms(soon ? FAB_KEEPER_FAST_MS : FAB_KEEPER_PERIOD_MS);
        if (pthread_cond_timedwait(&k->wake, &k->lock, &until) != ETIMEDOUT)
            continue;
        uint64_t *qps;
        uint32_t n = snapshot(k, &qps);
        pthread_mutex_unlock(&k->lock);
        soon = round_of(k, qps, n);
        free(qps);
        pthread_mutex_lock(&k->lock);
    }
    pthread_mutex_unlock(&k->lock);
    return NULL;
}

VAPI_ret_t fab_keeper_start(const char *fn, struct fab_hca *hca, uint64_t hca_h)
{
    struct fab_keeper *k = calloc(1, sizeof *k);
    if (!k)
        return vapi_fail(VAPI_ENOMEM, fn, "out of memory");
    k->hca_h = hca_h;
    pthread_mutex_init(&k->lock, NULL);
    pthread_cond_init(&k->wake, NULL);
    int rc = pthread_create(&k->thread, NULL, keeper_main, k);
    if (rc) {
        pthread_cond_destroy(&k->wake);
        pthread_mutex_destroy(&k->lock);
        free(k);
        return vapi_fail(VAPI_EGEN, fn, "pthread_create(keeper): %s", strerror(rc));
    }
    hca->keeper = k;
    return VAPI_OK;
}

void fab_keeper_stop(struct fab_hca *hca)
{
    struct fab_keeper *k = hca->keeper;
    if (!k)
        return;
    pthread_mutex_lock(&k->lock);
    k->stop = 1;
    pthread_cond_signal(&k->wake);
    pthread_mutex_unlock(&k->lock);
    pthread_join(k->thread, NULL);
    pthread_cond_destroy(&k->wake);
    pthread_mutex_destroy(&k->lock);
    free(k->qps);
    free(k);
    hca->keeper = NULL;
}

VAPI_ret_t fab_keeper_add(const char *fn, struct fab_hca *hca, uint64_t qp_h)
{
    struct fab_keeper *k = hca->keeper;
    VAPI_ret_t ret = VAPI_OK;
    pthread_mutex_lock(&k->lock);
    if (k->n == k->cap) {
        uint32_t cap = k->cap ? k->cap * 2 : 16;
        uint64_t *grown = realloc(k->qps, cap * sizeof *grown);
        if (grown) {
            k->qps = grown;
            k->cap = cap;
        }
    }
    if (k->n < k->cap)
        k->qps[k->n++] = qp_h;
    else
        ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the keeper's list of queue pairs");
    pthread_mutex_unlock(&k->lock);
    return ret;
}

void fab_keeper_remove(struct fab_hca *hca, uint64_t qp_h)
{
    struct fab_keeper *k = hca->keeper;
    pthread_mutex_lock(&k->lock);
    for (uint32_t i = 0; i < k->n; i++)
        if (k->qps[i] == qp_h) {
            k->qps[i] = k->qps[--k->n];
            break;
        }
    pthread_mutex_unlock(&k->lock);
}
