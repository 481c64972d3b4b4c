/*
 * The receive direction of a queue pair: retrieve the next message from the QP's own mailbox
 * (DECK keeps messages that arrive while none is posted) and hand its records (wire.c: the
 * sender coalesces several blocks into one message) out to the posted receive requests in
 * order, one block and one completion per request. A message with more records than requests
 * posted stays pending (rq.msg, rq.msg_off) and is served first when more are posted; no
 * retrieve happens before it is used up, so nothing is reordered.
 *
 * The thesis had a daemon do every retrieve, so each message crossed one more thread on its
 * way to the reader. Here whoever holds the side's turn retrieves: a reader blocked in a poll
 * of the receive CQ takes it (cq.c), so the message goes from DECK straight to the reader's
 * thread; the daemon only serves the backlog, when nobody has polled or posted for
 * MV_RECV_GRACE_NS (an application that does not read still drains the mailbox, which a
 * shared-memory transport's ring needs). The two never retrieve at once, so order holds.
 * A poller that arrives while the daemon sits in a retrieve posts a zero-length token to the
 * mailbox (real messages always carry a record) to end that retrieve; so does the
 * destroyer. If the peer is gone (DECK_EPEER) or the mailbox fails, the next request and
 * every later one complete with the failure (after the pending message is used up).
 */
#include <string.h>

#include "mv_internal.h"

/* How long the reader may be away (between two polls) before the daemon takes over. Longer
 * than an application's turn-around between reads, short enough to keep messages flowing. */
#define MV_RECV_GRACE_NS (2 * 1000000ull)

/* Hands the records of the pending message out to wrs[0..n) in order, one completion each
 * in wcs, until the requests or the message run out; returns how many were completed. Only
 * the turn holder calls it. */
static uint32_t hand_out(struct mv_side *side, const VAPI_rr_desc_t *wrs, uint32_t n,
                         VAPI_wc_desc_t *wcs)
{
    uint32_t k = 0;
    for (; k < n && side->msg_off < side->msg.len; k++) {
        const VAPI_rr_desc_t *wr = &wrs[k];
        VAPI_wc_desc_t *wc = &wcs[k];
        *wc = (VAPI_wc_desc_t){ .id = wr->id, .status = VAPI_SUCCESS, .opcode = VAPI_RECEIVE };
        const void *data;
        uint32_t len;
        if (mv_wire_next(&side->msg, &side->msg_off, &data, &len)) {
            wc->status = VAPI_GENERAL_ERR;   /* not a MicroVAPI message: drop it, go on */
            side->msg_off = (uint32_t)side->msg.len;
        } else if (len > wr->len) {
            wc->status = VAPI_LOC_LEN_ERR;   /* this block is lost, the stream goes on */
            wc->byte_len = len;
        } else {
            if (len)
                memcpy((void *)(uintptr_t)wr->addr, data, len);
            wc->byte_len = len;
        }
    }
    return k;
}

/* The status a failed retrieve gives this request and every later one. */
static uint32_t retrieve_failure(int rc)
{
    /* DECK_ETRUNC: larger than our mtu allows (the peer uses a larger one); DECK keeps it
     * queued, so the stream cannot go on past it. */
    return rc == DECK_ETRUNC ? VAPI_LOC_LEN_ERR
         : rc == DECK_EPEER  ? VAPI_REM_ABORT_ERR : VAPI_GENERAL_ERR;
}

void mv_side_wake_locked(struct mv_side *side)
{
    if (side->daemon_idle || side->stopping)
        pthread_cond_broadcast(&side->work);
}

/* Ends the retrieve the turn holder is in with a token; at most one token is outstanding.
 * rq.lock held. If the token cannot be posted the holder still returns with the next
 * message, so only latency is lost. */
static void kick_locked(struct mv_qp *qp)
{
    if (qp->rq.kick_pending || !qp->self_mb_open)
        return;
    deck_msg_clear(&qp->token);
    if (deck_mbox_post(&qp->self_mb, &qp->token) == DECK_OK)
        qp->rq.kick_pending = 1;
}

/* One step by whoever gets the turn (the daemon or a poller): unless a message is pending,
 * retrieves the next one, then completes as many posted requests as it has records left.
 * rq.lock held on entry and on return, released during the retrieve and the copies. */
static enum mv_rq_step step_locked(struct mv_qp *qp, int timeout_ms, int daemon)
{
    struct mv_side *side = &qp->rq;
    if (side->stopping)
        return MV_RQ_GONE;
    if (side->busy || side->q.count == 0)
        return MV_RQ_IDLE;
    if (qp->rq_failed_status) {
        mv_side_fail_all(side, VAPI_RECEIVE, qp->rq_failed_status);
        return MV_RQ_DONE;
    }
    /* Only the turn holder pops requests, so these stay at the front until we are back. */
    VAPI_rr_desc_t wrs[MV_COALESCE_BLOCKS];
    uint32_t n = 0;
    for (const VAPI_rr_desc_t *wr; n < MV_COALESCE_BLOCKS && (wr = mv_wrq_at(&side->q, n)); n++)
        wrs[n] = *wr;
    side->busy = 1;
    side->busy_daemon = daemon;
    pthread_mutex_unlock(&side->lock);

    int rc = DECK_OK, token = 0;
    if (side->msg_off >= side->msg.len) {   /* nothing pending: the next message */
        deck_msg_clear(&side->msg);
        side->msg_off = 0;
        rc = deck_mbox_retrv_timed(&qp->recv_mb, &side->msg, timeout_ms);
        token = rc == DECK_OK && side->msg.len == 0;
        if (rc != DECK_OK)
            deck_msg_clear(&side->msg);
    }
    VAPI_wc_desc_t wcs[MV_COALESCE_BLOCKS];
    uint32_t done = 0, failed = 0;
    if (rc == DECK_OK && !token) {
        done = hand_out(side, wrs, n, wcs);
    } else if (rc != DECK_OK && rc != DECK_ETIMEDOUT) {
        failed = retrieve_failure(rc);
        wcs[done++] = (VAPI_wc_desc_t){ .id = wrs[0].id, .status = failed,
                                        .opcode = VAPI_RECEIVE };
        pthread_mutex_lock(&qp->sq.lock);
        mv_qp_set_error_locked(qp, "receiving from mailbox %s failed: %s: %s",
                               qp->recv_mb.name, deck_strerror(rc), deck_last_error());
        pthread_mutex_unlock(&qp->sq.lock);
    }

    pthread_mutex_lock(&side->lock);
    side->busy = 0;
    mv_side_wake_locked(side);
    if (done == 0) {
        side->kick_pending &= !token;
        mv_cq_notify(side->cq);   /* a poller may be waiting for the turn */
        return token ? MV_RQ_AGAIN : MV_RQ_TIMEOUT;
    }
    for (uint32_t i = 0; i < done; i++) {
        mv_wrq_pop(&side->q);
        mv_cq_push(side->cq, &wcs[i]);
    }
    if (failed)
        qp->rq_failed_status = failed;
    return MV_RQ_DONE;
}

enum mv_rq_step mv_rq_step(struct mv_qp *qp, int timeout_ms)
{
    pthread_mutex_lock(&qp->rq.lock);
    enum mv_rq_step st = step_locked(qp, timeout_ms, 0);
    pthread_mutex_unlock(&qp->rq.lock);
    return st;
}

void mv_rq_poller_enter(struct mv_qp *qp)
{
    struct mv_side *side = &qp->rq;
    pthread_mutex_lock(&side->lock);
    side->pollers++;
    side->activity_ns = mv_now_ns();
    if (side->busy && side->busy_daemon)
        kick_locked(qp);
    pthread_mutex_unlock(&side->lock);
}

void mv_rq_poller_leave(struct mv_qp *qp)
{
    struct mv_side *side = &qp->rq;
    pthread_mutex_lock(&side->lock);
    side->pollers--;
    side->activity_ns = mv_now_ns();
    mv_side_wake_locked(side);   /* its grace starts now */
    pthread_mutex_unlock(&side->lock);
}

void mv_rq_posted_locked(struct mv_qp *qp)
{
    qp->rq.activity_ns = mv_now_ns();
    mv_side_wake_locked(&qp->rq);
    mv_cq_notify(qp->rq.cq);   /* a poller waiting with nothing posted can retrieve now */
}

void mv_rq_stop(struct mv_qp *qp)
{
    struct mv_side *side = &qp->rq;
    pthread_mutex_lock(&side->lock);
    side->stopping = 1;
    pthread_cond_broadcast(&side->work);
    if (side->busy)
        kick_locked(qp);
    while (side->busy)
        pthread_cond_wait(&side->work, &side->lock);
    pthread_mutex_unlock(&side->lock);
    mv_cq_notify(side->cq);   /* pollers see MV_RQ_GONE and let go of the QP */
}

/* How the daemon sleeps when it may not retrieve: while the reader was seen lately, until
 * its grace ends; else until someone signals (a post, a poller leaving, the turn coming
 * free). The timed sleep keeps the reader's hot path (poll, post, poll) free of signals. */
static void daemon_sleep(struct mv_side *side, uint64_t now)
{
    uint64_t until = side->activity_ns + MV_RECV_GRACE_NS;
    if (now < until) {
        struct timespec ts = { .tv_sec = (time_t)(until / 1000000000ull),
                               .tv_nsec = (long)(until % 1000000000ull) };
        pthread_cond_timedwait(&side->work, &side->lock, &ts);
        return;
    }
    side->daemon_idle = 1;
    pthread_cond_wait(&side->work, &side->lock);
    side->daemon_idle = 0;
}

void *mv_recv_daemon(void *arg)
{
    struct mv_qp *qp = arg;
    struct mv_side *side = &qp->rq;
    pthread_mutex_lock(&side->lock);
    while (!side->stopping) {
        uint64_t now = mv_now_ns();
        if (side->q.count > 0 && !side->busy && side->pollers == 0
            && (qp->rq_failed_status || now >= side->activity_ns + MV_RECV_GRACE_NS))
            step_locked(qp, -1, 1);
        else
            daemon_sleep(side, now);
    }
    pthread_mutex_unlock(&side->lock);
    return NULL;
}
