/*
 * Completion queues: a ring of work completions (EVAPI_cq_ring_t, drawn in vapi.h) written
 * under a mutex, and a condition variable that blocking pollers sleep on (never a spin). Every
 * posted request that may produce a completion reserves its slot when it is posted, so pushing
 * a completion never needs memory and no completion is ever dropped; the ring grows at post
 * time when needed, unless the application mapped it (EVAPI_map_cq): then it reads the ring
 * itself, without a call, and the ring keeps its place and size.
 *
 * Producers (the threads that complete requests) write under the lock and publish with a
 * release store of tail; the one consumer (the library's poll functions under the lock, or the
 * application reading the mapped ring, never both at once) publishes head with release. So the
 * lock orders producers among themselves and waiters with producers, and head/tail alone carry
 * the entries between producer and consumer.
 *
 * A poll of a CQ that serves receive queues and no send queue (Aldeia's channel has one such
 * CQ per socket) retrieves from the process's mailbox itself when nobody else does
 * (engine.c): a blocking poll with its own remaining time, a non-blocking one takes what is
 * already there, so a message reaches the reader's thread without a hand-off. A CQ that also
 * serves send queues only waits: their completions come from other threads, which could not
 * wake a poller inside a retrieve.
 *
 * With keyed wake-ups (engine.c) such a poller does not wait inside a retrieve: it drains the
 * mailbox with looks, then sleeps on its key, which the sending process rings for its queue
 * pair's messages and a dispatcher here rings with every completion it pushes, unless the
 * dispatcher is the CQ's only waiter: then nobody sleeps on the key, and the ring, a write to
 * the doorbell's line that the sender's ring had just taken to its CPU, would only have made
 * every message cross that line once more.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mv_internal.h"

#define MV_CQ_MAX_ENTRIES (1u << 24)

struct mv_cq {
    pthread_mutex_t lock;
    pthread_cond_t  nonempty;   /* a completion arrived, or a wake-up (mv_cq_wake) */
    EVAPI_cq_ring_t *ring;      /* header, then ring->cap entries */
    int             mapped;     /* the application reads the ring: it never moves or grows */
    uint32_t        reserved;   /* completions promised to posted requests */
    unsigned        wakeups;    /* bumped by mv_cq_wake; lets waiters tell it from spurious */
    int             closing;
    unsigned        progress;   /* bumped by mv_cq_notify */
    uint32_t        recv_users; /* receive queues reporting here */
    uint32_t        send_users; /* send queues reporting here */
    int             key;        /* the wake-up key its pollers wait on (mv_cq_key), -1: none yet */
    uint32_t        waiters;    /* threads in mv_cq_wait for it */
};

/* The CQ this thread waits for in mv_cq_wait, if any: its own completions wake nobody else. */
static __thread struct mv_cq *waiting_on;

static VAPI_wc_desc_t *entries(EVAPI_cq_ring_t *ring)
{
    return (VAPI_wc_desc_t *)(void *)((char *)ring + EVAPI_CQ_RING_HEAD_BYTES);
}

/* A ring of cap (a power of two) entries, aligned to a cache line, header zeroed. */
static EVAPI_cq_ring_t *ring_new(uint32_t cap)
{
    void *mem = NULL;
    if (posix_memalign(&mem, 64, EVAPI_CQ_RING_HEAD_BYTES + (size_t)cap * sizeof(VAPI_wc_desc_t)))
        return NULL;
    EVAPI_cq_ring_t *ring = mem;
    memset(ring, 0, EVAPI_CQ_RING_HEAD_BYTES);
    ring->cap = cap;
    return ring;
}

static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* Completions in the ring: tail is ours (writers hold the lock), head the consumer's. */
static uint32_t held(const struct mv_cq *cq)
{
    return __atomic_load_n(&cq->ring->tail, __ATOMIC_RELAXED)
           - __atomic_load_n(&cq->ring->head, __ATOMIC_ACQUIRE);
}

VAPI_ret_t mv_cq_new(const char *fn, uint32_t min_entries, struct mv_cq **out)
{
    if (min_entries == 0 || min_entries > MV_CQ_MAX_ENTRIES)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "min_entries %u is not in 1..%u", min_entries,
                       MV_CQ_MAX_ENTRIES);
    struct mv_cq *cq = calloc(1, sizeof *cq);
    if (!cq || !(cq->ring = ring_new(pow2_at_least(min_entries)))) {
        free(cq);
        return vapi_fail(VAPI_ENOMEM, fn, "no memory for %u completions", min_entries);
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    /* Timeouts measure elapsed time: immune to wall-clock changes. */
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cq->nonempty, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&cq->lock, NULL);
    cq->key = -1;
    *out = cq;
    return VAPI_OK;
}

void mv_cq_free(struct mv_cq *cq)
{
    pthread_cond_destroy(&cq->nonempty);
    pthread_mutex_destroy(&cq->lock);
    free(cq->ring);
    free(cq);
}

EVAPI_cq_ring_t *mv_cq_map(struct mv_cq *cq)
{
    pthread_mutex_lock(&cq->lock);
    cq->mapped = 1;
    EVAPI_cq_ring_t *ring = cq->ring;
    pthread_mutex_unlock(&cq->lock);
    return ring;
}

VAPI_ret_t mv_cq_reserve(const char *fn, struct mv_cq *cq, uint32_t n)
{
    VAPI_ret_t ret = VAPI_OK;
    pthread_mutex_lock(&cq->lock);
    uint32_t count = held(cq), cap = cq->ring->cap;
    uint64_t need = (uint64_t)count + cq->reserved + n;
    if (need > MV_CQ_MAX_ENTRIES || (cq->mapped && need > cap)) {
        ret = vapi_fail(VAPI_EAGAIN, fn, "completion queue of %u entries holds %u completions and "
                      "%u more are due; poll it", cq->mapped ? cap : MV_CQ_MAX_ENTRIES, count,
                      cq->reserved);
    } else if (need > cap) {
        /* Not mapped, so the consumer is the library itself, which takes under this lock:
         * the ring may move. */
        EVAPI_cq_ring_t *ring = ring_new(pow2_at_least((uint32_t)need));
        if (!ring) {
            ret = vapi_fail(VAPI_ENOMEM, fn, "no memory to grow the completion queue to %u",
                          pow2_at_least((uint32_t)need));
        } else {
            uint32_t head = cq->ring->head;
            for (uint32_t i = 0; i < count; i++)
                entries(ring)[i] = entries(cq->ring)[(head + i) & (cap - 1)];
            ring->tail = count;
            free(cq->ring);
            cq->ring = ring;
        }
    }
    if (ret == VAPI_OK)
        cq->reserved += n;
    pthread_mutex_unlock(&cq->lock);
    return ret;
}

void mv_cq_unreserve(struct mv_cq *cq, uint32_t n)
{
    pthread_mutex_lock(&cq->lock);
    cq->reserved -= n;
    pthread_mutex_unlock(&cq->lock);
}

/* The key a poller of cq may sleep on with keyed wake-ups, else -1; lock held. */
static int wake_key_locked(const struct mv_cq *cq);

void mv_cq_push(struct mv_cq *cq, const VAPI_wc_desc_t *wc)
{
    pthread_mutex_lock(&cq->lock);
    cq->reserved--;
    /* The reservation guarantees the entry is free: the consumer is past it. */
    uint32_t tail = cq->ring->tail;
    entries(cq->ring)[tail & (cq->ring->cap - 1)] = *wc;
    __atomic_store_n(&cq->ring->tail, tail + 1, __ATOMIC_RELEASE);
    pthread_cond_signal(&cq->nonempty);
    int key = waiting_on == cq && cq->waiters == 1 ? -1 : wake_key_locked(cq);
    pthread_mutex_unlock(&cq->lock);
    if (key >= 0)
        mv_engine_ring_key((unsigned)key);
}

/* Takes up to max completions; lock held, and nobody reads the mapped ring meanwhile. */
static uint32_t take_locked(struct mv_cq *cq, uint32_t max, VAPI_wc_desc_t *wcs)
{
    uint32_t head = __atomic_load_n(&cq->ring->head, __ATOMIC_RELAXED);
    uint32_t avail = __atomic_load_n(&cq->ring->tail, __ATOMIC_ACQUIRE) - head;
    uint32_t n = avail < max ? avail : max;
    for (uint32_t i = 0; i < n; i++)
        wcs[i] = entries(cq->ring)[(head + i) & (cq->ring->cap - 1)];
    __atomic_store_n(&cq->ring->head, head + n, __ATOMIC_RELEASE);
    return n;
}

uint32_t mv_cq_take(struct mv_cq *cq, uint32_t max, VAPI_wc_desc_t *wcs)
{
    pthread_mutex_lock(&cq->lock);
    uint32_t n = take_locked(cq, max, wcs);
    pthread_mutex_unlock(&cq->lock);
    return n;
}

void mv_cq_bind(struct mv_cq *cq, int receive, int add)
{
    pthread_mutex_lock(&cq->lock);
    uint32_t *users = receive ? &cq->recv_users : &cq->send_users;
    *users = add ? *users + 1 : *users - 1;
    pthread_mutex_unlock(&cq->lock);
}

void mv_cq_key(struct mv_cq *cq, uint32_t qp_num)
{
    pthread_mutex_lock(&cq->lock);
    if (cq->key < 0)
        cq->key = (int)mv_key_of(qp_num);
    pthread_mutex_unlock(&cq->lock);
}

void mv_cq_notify(struct mv_cq *cq)
{
    pthread_mutex_lock(&cq->lock);
    cq->progress++;
    pthread_cond_broadcast(&cq->nonempty);
    pthread_mutex_unlock(&cq->lock);
}

/* Whether pollers of the CQ retrieve for it (see the top); lock held. */
static int progresses(const struct mv_cq *cq)
{
    return cq->recv_users > 0 && cq->send_users == 0;
}

static int wake_key_locked(const struct mv_cq *cq)
{
    return mv_engine_keyed() && progresses(cq) ? cq->key : -1;
}

/* Non-blocking: takes up to max completions, first retrieving what has arrived, if the
 * process's receive turn is free. */
static uint32_t take_progressing(struct mv_cq *cq, uint32_t max, VAPI_wc_desc_t *wcs)
{
    pthread_mutex_lock(&cq->lock);
    uint32_t n = take_locked(cq, max, wcs);
    int progress = n < max && progresses(cq);
    pthread_mutex_unlock(&cq->lock);
    if (!progress)
        return n;
    mv_engine_activity();
    /* Each step moves at most one message; max bounds the work. */
    for (uint32_t steps = 0; n < max && steps < max; steps++) {
        if (mv_engine_progress(0, 1) != MV_PROGRESSED)
            break;
        n += mv_cq_take(cq, max - n, wcs + n);
    }
    return n;
}

static struct timespec ns_to_timespec(uint64_t ns)
{
    return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ull),
                              .tv_nsec = (long)(ns % 1000000000ull) };
}

/* Milliseconds for a DECK retrieve that ends no earlier than the deadline; at least 1, so a
 * retrieve never degenerates into a non-blocking look repeated until the deadline. */
static int ms_until(uint64_t deadline, uint64_t now)
{
    uint64_t ms = (deadline - now + 999999) / 1000000;
    return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

/* A poller looks again at least this often, should a notify or a kick be lost: waiting for the
 * turn, or inside a retrieve. */
#define MV_TURN_RECHECK_NS (100 * 1000000ull)

/* Whether a waiter is done: a completion (taken into wc when wc is not NULL), the CQ closing,
 * a wake-up or the deadline; *ret says which. Lock held. */
static int settled_locked(const char *fn, struct mv_cq *cq, unsigned wakeups, uint64_t deadline,
                          VAPI_wc_desc_t *wc, VAPI_ret_t *ret)
{
    if (held(cq) > 0) {
        if (wc)
            take_locked(cq, 1, wc);
        *ret = VAPI_OK;
        return 1;
    }
    if (cq->closing) {
        *ret = vapi_fail(VAPI_EINVAL_CQ_HNDL, fn, "the completion queue was destroyed while waiting");
        return 1;
    }
    /* A queue pair using this CQ was destroyed: its flushed requests are here already, so
     * nothing more may come; give the caller the chance to look at its state. */
    if (cq->wakeups != wakeups || (deadline && vapi_now_ns() >= deadline)) {
        *ret = VAPI_ETIMEDOUT;
        return 1;
    }
    return 0;
}

/* The keyed wait of a progressing CQ (see the top): look at the CQ, read the bell, drain, look
 * again, sleep on the key, so a ring after that read is never missed. A reader that waits
 * alone (the poller) first polls the mailbox itself, holding the turn, for DECK's polling
 * window (a fresh one after each message it dispatches): it takes a message the moment it is
 * there, as a reader inside a retrieve did (polling the bell instead cost a cache line more per
 * message). The doorbell says which key it looks for, so its messages wake nobody (engine.c,
 * mv_engine_polling_release), and it reads the bell only once it stops polling: every sender's
 * ring writes the bell's line, and a read of it after each message took that line from the
 * sender's CPU and back. */
static VAPI_ret_t wait_keyed(const char *fn, struct mv_cq *cq, unsigned wakeups, uint64_t deadline,
                             VAPI_wc_desc_t *wc, unsigned key)
{
    mv_engine_reader_enter();
    int poller = mv_engine_polling_take(key), polling = poller;
    VAPI_ret_t ret;
    for (;;) {
        pthread_mutex_lock(&cq->lock);
        int done = settled_locked(fn, cq, wakeups, deadline, wc, &ret);
        pthread_mutex_unlock(&cq->lock);
        if (done)
            break;
        if (polling) {
            if (mv_engine_progress(DECK_POLL, 0) == MV_PROGRESSED)
                continue;
            polling = 0;   /* the window is over, or another thread drains */
        }
        uint32_t seen = mv_engine_seen();
        mv_engine_drain();
        pthread_mutex_lock(&cq->lock);
        done = settled_locked(fn, cq, wakeups, deadline, wc, &ret);
        pthread_mutex_unlock(&cq->lock);
        if (done)
            break;
        uint64_t now = vapi_now_ns(), until = now + MV_TURN_RECHECK_NS;
        if (deadline && deadline < until)
            until = deadline;
        mv_engine_wait_key(key, seen, ms_until(until, now));
    }
    if (poller)
        mv_engine_polling_release(key);
    mv_engine_reader_leave();
    return ret;
}

/* A wait without keyed wake-ups: a poller of a progressing CQ retrieves (inside a retrieve),
 * any other sleeps on the CQ's condition variable. */
static VAPI_ret_t wait_plain(const char *fn, struct mv_cq *cq, unsigned wakeups, uint64_t deadline,
                             VAPI_wc_desc_t *wc, int progressing)
{
    if (progressing)
        mv_engine_poller_enter(cq);
    int other = 0;   /* a writer that blocks: no poller's mark may hide its credit */
    VAPI_ret_t ret;
    pthread_mutex_lock(&cq->lock);
    for (;;) {
        if (settled_locked(fn, cq, wakeups, deadline, wc, &ret))
            break;
        if (!progressing && !other && mv_engine_keyed()) {
            other = 1;
            pthread_mutex_unlock(&cq->lock);
            mv_engine_other_wait(1);
            pthread_mutex_lock(&cq->lock);
            continue;
        }
        uint64_t now = vapi_now_ns();
        unsigned progress = cq->progress;
        if (progressing) {
            /* Never a retrieve without end: a wake-up (mv_cq_wake) that came between the look
             * above and our taking the turn finds nobody in the mailbox to kick, so the
             * retrieve must end by itself to look again. */
            uint64_t bound = now + MV_TURN_RECHECK_NS;
            pthread_mutex_unlock(&cq->lock);
            enum mv_progress st = mv_engine_progress(ms_until(deadline && deadline < bound ? deadline : bound, now), 0);
            pthread_mutex_lock(&cq->lock);
            if (st != MV_BUSY)
                continue;
        }
        /* Nothing to retrieve ourselves: wait for a completion or for the turn. */
        uint64_t until = deadline;
        if (progressing && (!until || until > now + MV_TURN_RECHECK_NS))
            until = now + MV_TURN_RECHECK_NS;
        struct timespec ts = ns_to_timespec(until);
        while (held(cq) == 0 && !cq->closing && cq->wakeups == wakeups
               && cq->progress == progress) {
            int rc = until ? pthread_cond_timedwait(&cq->nonempty, &cq->lock, &ts)
                           : pthread_cond_wait(&cq->nonempty, &cq->lock);
            if (rc == ETIMEDOUT)
                break;
        }
    }
    pthread_mutex_unlock(&cq->lock);
    if (progressing)
        mv_engine_poller_leave(cq);
    if (other)
        mv_engine_other_wait(0);
    return ret;
}

VAPI_ret_t mv_cq_wait(const char *fn, struct mv_cq *cq, uint32_t timeout_usec,
                      VAPI_wc_desc_t *wc)
{
    uint64_t deadline = timeout_usec ? vapi_now_ns() + (uint64_t)timeout_usec * 1000 : 0;
    pthread_mutex_lock(&cq->lock);
    unsigned wakeups = cq->wakeups;
    int progressing = progresses(cq);
    int key = wake_key_locked(cq);
    cq->waiters++;
    pthread_mutex_unlock(&cq->lock);
    waiting_on = cq;
    VAPI_ret_t ret = key >= 0 ? wait_keyed(fn, cq, wakeups, deadline, wc, (unsigned)key)
                              : wait_plain(fn, cq, wakeups, deadline, wc, progressing);
    waiting_on = NULL;
    pthread_mutex_lock(&cq->lock);
    cq->waiters--;
    pthread_mutex_unlock(&cq->lock);
    return ret;
}

void mv_cq_wake(struct mv_cq *cq, int closing)
{
    pthread_mutex_lock(&cq->lock);
    cq->wakeups++;
    cq->closing |= closing;
    pthread_cond_broadcast(&cq->nonempty);
    int key = wake_key_locked(cq);
    pthread_mutex_unlock(&cq->lock);
    if (key >= 0)
        mv_engine_ring_key((unsigned)key);   /* a poller of it may sleep on its key */
    else
        mv_engine_kick();   /* a poller of it may be inside a retrieve */
}

/* ---- the public CQ functions ------------------------------------------------------------- */

VAPI_ret_t VAPI_create_cq(VAPI_hca_hndl_t hca, uint32_t min_entries, VAPI_cq_hndl_t *cq,
                          uint32_t *num_entries)
{
    static const char fn[] = "VAPI_create_cq";
    void *hca_obj;
    if (!cq || !num_entries)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "%s is NULL", cq ? "num_entries" : "cq");
    VAPI_ret_t ret = vh_get(fn, hca, hca, VH_HCA, &hca_obj);
    if (ret != VAPI_OK)
        return ret;
    struct mv_cq *obj = NULL;
    ret = mv_cq_new(fn, min_entries, &obj);
    if (ret == VAPI_OK)
        ret = vh_link(fn, hca, VH_HCA);
    if (ret == VAPI_OK && (*cq = vh_add(VH_CQ, hca, obj)) == 0) {
        vh_unlink(hca);
        ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
    }
    if (ret == VAPI_OK)
        *num_entries = min_entries;
    else if (obj)
        mv_cq_free(obj);
    vh_put(hca);
    return ret;
}

VAPI_ret_t VAPI_destroy_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq)
{
    static const char fn[] = "VAPI_destroy_cq";
    struct mv_cq *obj;
    VAPI_ret_t ret = vh_get(fn, hca, cq, VH_CQ, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    ret = vh_retire(fn, cq, VH_CQ);   /* refuses while a queue pair uses it */
    if (ret != VAPI_OK) {
        vh_put(cq);
        return ret;
    }
    mv_cq_wake(obj, 1);   /* blocked pollers return, then unpin */
    vh_remove(cq);
    vh_unlink(hca);
    mv_cq_free(obj);
    return VAPI_OK;
}

static VAPI_ret_t poll_many(const char *fn, VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq,
                            uint32_t max, VAPI_wc_desc_t *wcs, uint32_t *count)
{
    struct mv_cq *obj;
    if (!wcs || !count)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "%s is NULL", wcs ? "count" : "wc");
    VAPI_ret_t ret = vh_get(fn, hca, cq, VH_CQ, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    *count = take_progressing(obj, max, wcs);
    vh_put(cq);
    return VAPI_OK;
}

VAPI_ret_t VAPI_poll_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, VAPI_wc_desc_t *wc)
{
    uint32_t count = 0;
    VAPI_ret_t ret = poll_many("VAPI_poll_cq", hca, cq, 1, wc, &count);
    return ret == VAPI_OK && count == 0 ? VAPI_CQ_EMPTY : ret;
}

VAPI_ret_t EVAPI_poll_cq_many(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, uint32_t max,
                              VAPI_wc_desc_t *wcs, uint32_t *count)
{
    return poll_many("EVAPI_poll_cq_many", hca, cq, max, wcs, count);
}

/* A blocking poll; with wc NULL it takes nothing (EVAPI_wait_cq). */
static VAPI_ret_t wait_cq(const char *fn, VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq,
                          uint32_t timeout_usec, VAPI_wc_desc_t *wc)
{
    struct mv_cq *obj;
    VAPI_ret_t ret = vh_get(fn, hca, cq, VH_CQ, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    ret = mv_cq_wait(fn, obj, timeout_usec, wc);
    vh_put(cq);
    return ret;
}

VAPI_ret_t EVAPI_poll_cq_block(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, uint32_t timeout_usec,
                               VAPI_wc_desc_t *wc)
{
    static const char fn[] = "EVAPI_poll_cq_block";
    if (!wc)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "wc is NULL");
    return wait_cq(fn, hca, cq, timeout_usec, wc);
}

VAPI_ret_t EVAPI_wait_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, uint32_t timeout_usec)
{
    return wait_cq("EVAPI_wait_cq", hca, cq, timeout_usec, NULL);
}

VAPI_ret_t EVAPI_map_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, EVAPI_cq_ring_t **ring)
{
    static const char fn[] = "EVAPI_map_cq";
    struct mv_cq *obj;
    if (!ring)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "ring is NULL");
    VAPI_ret_t ret = vh_get(fn, hca, cq, VH_CQ, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    *ring = mv_cq_map(obj);
    vh_put(cq);
    return VAPI_OK;
}
