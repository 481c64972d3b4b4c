/*
 * VAPI completion queues. A VAPI CQ is not a libfabric CQ: each queue pair's endpoint has one
 * libfabric CQ for both directions (fab_internal.h), whose completions fab_progress.c turns
 * into VAPI completions, in posting order, pushed here. A poll first takes what is here; when
 * nothing is, it progresses the queue pairs that report to this CQ itself, so a completion
 * reaches the polling thread without a hand-off to any other thread.
 *
 * A blocking poll progresses for up to SPIN_NS (a peer's answer within a round trip is then
 * taken without sleeping), yielding the CPU every POLLS_PER_YIELD polls (a peer on the same CPU
 * could not answer otherwise; yielding on every poll, a system call, doubled the one-way time
 * across CPUs). Where a provider has no wait objects (shm, efa), a sleeper cannot be woken by
 * what arrives, only by its own clock: it spins WAITLESS_SPIN_NS, then sleeps a quarter of the
 * time since the CQ last got a completion (20 us .. 10 ms): short while data flows, long on an
 * idle socket (100 wake-ups a second at most); a queue pair's connect counts as a completion
 * (fab_cq_stir), or a new connection's first wait, for its peer's credit, slept 10 ms. On shm
 * a large send completes only once the receiver copied it, so the sender depends on such
 * sleeps: with a fixed 20 us spin and 200 us sleeps a 64 KiB-send stream ran at 2.4 GB/s,
 * with these 10.7 (bench_fabric_stream, pinned). Otherwise it sleeps on the queue pairs'
 * libfabric wait objects and on this CQ's eventfd, which a thread that pushed a completion
 * here while progressing for another CQ (a writer whose progress finds the reader's data)
 * rings when somebody sleeps.
 *
 * Nothing is dropped: a producer that finds the CQ full leaves the request unfinished in its
 * queue pair (fab_cq_try_push) until a poll makes room. EVAPI_map_cq is not offered
 * (VAPI_ENOSYS): completions exist only once somebody calls into the library to read the
 * provider's CQ, so a ring the application reads without calls would never fill.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cpu_relax.h"
#include "fab_internal.h"

#define FAB_CQ_MAX_ENTRIES (1u << 24)
#define FAB_CQ_MAX_QPS     64u        /* queue pairs reporting to one CQ */
#define SPIN_NS            20000ull   /* progress without sleeping this long first */
#define POLLS_PER_YIELD    16         /* a spinning poller yields the CPU this often */
/* Without wait objects (shm, efa): a longer spin, then sleeps of a quarter of the time since
 * the CQ last got a completion, within these bounds (see wait_nonempty). */
#define WAITLESS_SPIN_NS   100000ull
#define SLICE_MIN_NS       20000ull
#define SLICE_MAX_NS       10000000ull

struct fab_cq {
    pthread_mutex_t lock;
    VAPI_wc_desc_t *ring;
    uint32_t        cap, head, tail;   /* entries [head, tail) mod cap */
    int             wake_fd;           /* eventfd: a completion was pushed for a sleeper */
    uint32_t        sleepers;
    int             closing;
    uint64_t        hca_h;
    uint64_t        qps[FAB_CQ_MAX_QPS];   /* handles of the reporting queue pairs */
    uint32_t        nqps;
    int             waitless;          /* one of them has no wait object */
    uint64_t        pushed_ns;         /* when the last completion came */
};

/* Rings the eventfd when somebody sleeps on it. */
static void ring_locked(struct fab_cq *cq)
{
    uint64_t one = 1;
    if (cq->sleepers && write(cq->wake_fd, &one, sizeof one) < 0) {
        /* EAGAIN: the counter is full, so the sleepers wake anyway */
    }
}

int fab_cq_try_push(struct fab_cq *cq, const VAPI_wc_desc_t *wc)
{
    pthread_mutex_lock(&cq->lock);
    int room = cq->tail - cq->head < cq->cap;
    if (room) {
        cq->ring[cq->tail++ % cq->cap] = *wc;
        cq->pushed_ns = vapi_now_ns();
        ring_locked(cq);
    }
    pthread_mutex_unlock(&cq->lock);
    return room;
}

VAPI_ret_t fab_cq_attach(const char *fn, struct fab_cq *cq, struct fab_qp *qp)
{
    VAPI_ret_t ret = VAPI_OK;
    pthread_mutex_lock(&cq->lock);
    if (cq->nqps == FAB_CQ_MAX_QPS)
        ret = vapi_fail(VAPI_EAGAIN, fn, "a completion queue serves at most %u queue pairs", FAB_CQ_MAX_QPS);
    else
        cq->qps[cq->nqps++] = qp->handle;
    cq->waitless |= qp->wait_fd < 0;
    pthread_mutex_unlock(&cq->lock);
    return ret;
}

void fab_cq_detach(struct fab_cq *cq, struct fab_qp *qp)
{
    pthread_mutex_lock(&cq->lock);
    for (uint32_t i = 0; i < cq->nqps; i++) {
        if (cq->qps[i] == qp->handle) {
            cq->qps[i] = cq->qps[--cq->nqps];
            break;
        }
    }
    pthread_mutex_unlock(&cq->lock);
}

VAPI_ret_t VAPI_create_cq(VAPI_hca_hndl_t hca, uint32_t min_entries, VAPI_cq_hndl_t *cq, uint32_t *num_entries)
{
    static const char fn[] = "VAPI_create_cq";
    if (!cq || !num_entries)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "%s is NULL", cq ? "num_entries" : "cq");
    if (min_entries == 0 || min_entries > FAB_CQ_MAX_ENTRIES)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "min_entries %u is not in 1..%u", min_entries, FAB_CQ_MAX_ENTRIES);
    void *h;
    VAPI_ret_t ret = vh_get(fn, hca, hca, VH_HCA, &h);
    if (ret != VAPI_OK)
        return ret;
    struct fab_cq *obj = calloc(1, sizeof *obj);
    if (obj)
        obj->ring = calloc(min_entries, sizeof *obj->ring);
    if (!obj || !obj->ring) {
        ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for %u completions", min_entries);
    } else if ((obj->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
        ret = vapi_fail(VAPI_EGEN, fn, "eventfd: %s", strerror(errno));
    } else if ((ret = vh_link(fn, hca, VH_HCA)) == VAPI_OK) {
        obj->cap = min_entries;
        obj->hca_h = hca;
        pthread_mutex_init(&obj->lock, NULL);
        if ((*cq = vh_add(VH_CQ, hca, obj)) == 0) {
            pthread_mutex_destroy(&obj->lock);
            vh_unlink(hca);
            ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
        } else {
            *num_entries = min_entries;
        }
    }
    if (ret != VAPI_OK && obj) {
        if (obj->ring && obj->wake_fd > 0)
            close(obj->wake_fd);
        free(obj->ring);
        free(obj);
    }
    vh_put(hca);
    return ret;
}

VAPI_ret_t VAPI_destroy_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq)
{
    static const char fn[] = "VAPI_destroy_cq";
    struct fab_cq *obj;
    VAPI_ret_t ret = vh_get(fn, hca, cq, VH_CQ, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    if ((ret = vh_retire(fn, cq, VH_CQ)) != VAPI_OK) {   /* refused while a queue pair uses it */
        vh_put(cq);
        return ret;
    }
    pthread_mutex_lock(&obj->lock);
    obj->closing = 1;
    ring_locked(obj);   /* pollers in a sleep leave it */
    pthread_mutex_unlock(&obj->lock);
    vh_remove(cq);
    vh_unlink(hca);
    close(obj->wake_fd);
    pthread_mutex_destroy(&obj->lock);
    free(obj->ring);
    free(obj);
    return VAPI_OK;
}

/* Up to max completions into wcs; how many. */
static uint32_t take(struct fab_cq *cq, uint32_t max, VAPI_wc_desc_t *wcs)
{
    pthread_mutex_lock(&cq->lock);
    uint32_t n = 0;
    while (n < max && cq->head != cq->tail)
        wcs[n++] = cq->ring[cq->head++ % cq->cap];
    pthread_mutex_unlock(&cq->lock);
    return n;
}

enum held { EMPTY, HOLDS, CLOSING };

static enum held held(struct fab_cq *cq)
{
    pthread_mutex_lock(&cq->lock);
    enum held h = cq->head != cq->tail ? HOLDS : cq->closing ? CLOSING : EMPTY;
    pthread_mutex_unlock(&cq->lock);
    return h;
}

/* Pins the reporting queue pairs (at most FAB_CQ_MAX_QPS) into qps; how many. */
static int pin_qps(struct fab_cq *cq, struct fab_qp **qps, uint64_t *handles)
{
    pthread_mutex_lock(&cq->lock);
    uint32_t n = cq->nqps;
    memcpy(handles, cq->qps, n * sizeof *handles);
    pthread_mutex_unlock(&cq->lock);
    int pinned = 0;
    for (uint32_t i = 0; i < n; i++) {
        void *qp;
        if (vh_get("progress", cq->hca_h, handles[i], VH_QP, &qp) == VAPI_OK) {
            handles[pinned] = handles[i];
            qps[pinned++] = qp;
        }
    }
    return pinned;
}

static void unpin_qps(int n, uint64_t *handles)
{
    for (int i = 0; i < n; i++)
        vh_put(handles[i]);
}

void fab_cq_stir(struct fab_cq *cq)
{
    pthread_mutex_lock(&cq->lock);
    cq->pushed_ns = vapi_now_ns();
    pthread_mutex_unlock(&cq->lock);
}

/* Progresses every queue pair reporting to cq. */
static void progress(struct fab_cq *cq)
{
    struct fab_qp *qps[FAB_CQ_MAX_QPS];
    uint64_t handles[FAB_CQ_MAX_QPS];
    int n = pin_qps(cq, qps, handles);
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&qps[i]->lock);
        qps[i]->app_calls++;
        fab_progress_locked(qps[i]);
        pthread_mutex_unlock(&qps[i]->lock);
    }
    unpin_qps(n, handles);
}

/* Until cq holds a completion (VAPI_OK) or timeout_usec passes (0: for ever) or the CQ is
 * being destroyed (both VAPI_ETIMEDOUT). */
static VAPI_ret_t wait_nonempty(struct fab_cq *cq, uint32_t timeout_usec)
{
    uint64_t start = vapi_now_ns();
    uint64_t deadline = timeout_usec ? start + (uint64_t)timeout_usec * 1000u : UINT64_MAX;
    for (uint32_t polls = 1;; polls++) {
        progress(cq);
        enum held h = held(cq);
        if (h != EMPTY)
            return h == HOLDS ? VAPI_OK : VAPI_ETIMEDOUT;
        uint64_t now = vapi_now_ns();
        if (now >= deadline)
            return VAPI_ETIMEDOUT;
        if (now - start < (cq->waitless ? WAITLESS_SPIN_NS : SPIN_NS)) {
            /* A peer on another CPU answers within the spin; one on this CPU needs it. */
            if (polls % POLLS_PER_YIELD == 0)
                sched_yield();
            else
                cpu_relax();
            continue;
        }
        struct fab_qp *qps[FAB_CQ_MAX_QPS];
        uint64_t handles[FAB_CQ_MAX_QPS];
        int n = pin_qps(cq, qps, handles);
        pthread_mutex_lock(&cq->lock);
        cq->sleepers++;
        uint64_t slice = (now - cq->pushed_ns) / 4;   /* pushed_ns is written under the lock */
        pthread_mutex_unlock(&cq->lock);
        slice = slice < SLICE_MIN_NS ? SLICE_MIN_NS : slice > SLICE_MAX_NS ? SLICE_MAX_NS : slice;
        if (held(cq) == EMPTY)
            fab_wait(qps, n, cq->wake_fd, deadline - now, slice);
        pthread_mutex_lock(&cq->lock);
        cq->sleepers--;
        uint64_t drained;
        if (cq->sleepers == 0 && !cq->closing && read(cq->wake_fd, &drained, sizeof drained) < 0)
            drained = 0;   /* EAGAIN: nobody rang */
        pthread_mutex_unlock(&cq->lock);
        unpin_qps(n, handles);
    }
}

VAPI_ret_t EVAPI_poll_cq_many(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, uint32_t max, VAPI_wc_desc_t *wcs,
                              uint32_t *count)
{
    static const char fn[] = "EVAPI_poll_cq_many";
    if (!wcs || !count)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "%s is NULL", wcs ? "count" : "wcs");
    struct fab_cq *obj;
    VAPI_ret_t ret = vh_get(fn, hca, cq, VH_CQ, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    uint32_t n = take(obj, max, wcs);
    if (n == 0 && max > 0) {
        progress(obj);
        n = take(obj, max, wcs);
    }
    *count = n;
    vh_put(cq);
    return VAPI_OK;
}

VAPI_ret_t VAPI_poll_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, VAPI_wc_desc_t *wc)
{
    uint32_t n = 0;
    VAPI_ret_t ret = EVAPI_poll_cq_many(hca, cq, 1, wc, &n);
    return ret == VAPI_OK && n == 0 ? VAPI_CQ_EMPTY : ret;
}

VAPI_ret_t EVAPI_poll_cq_block(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, uint32_t timeout_usec, VAPI_wc_desc_t *wc)
{
    static const char fn[] = "EVAPI_poll_cq_block";
    if (!wc)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "wc is NULL");
    struct fab_cq *obj;
    VAPI_ret_t ret = vh_get(fn, hca, cq, VH_CQ, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    /* Another poller of the CQ may take the completion first: then wait again. */
    while ((ret = wait_nonempty(obj, timeout_usec)) == VAPI_OK && take(obj, 1, wc) == 0)
        ;
    vh_put(cq);
    return ret;
}

VAPI_ret_t EVAPI_wait_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, uint32_t timeout_usec)
{
    static const char fn[] = "EVAPI_wait_cq";
    struct fab_cq *obj;
    VAPI_ret_t ret = vh_get(fn, hca, cq, VH_CQ, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    ret = wait_nonempty(obj, timeout_usec);
    vh_put(cq);
    return ret;
}

VAPI_ret_t EVAPI_map_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, EVAPI_cq_ring_t **ring)
{
    return vapi_fail(VAPI_ENOSYS, "EVAPI_map_cq", "libfabric completions are read by calls into the library");
}

void fab_cq_wake(struct fab_cq *cq)
{
    pthread_mutex_lock(&cq->lock);
    ring_locked(cq);
    pthread_mutex_unlock(&cq->lock);
}
