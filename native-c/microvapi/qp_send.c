/*
 * The send direction of a queue pair: send requests are wrapped in a wire message and posted
 * to the peer's mailbox in posting order; a signalled request then gets a completion.
 *
 * The thesis's producer/consumer (Fig. 4.17) handed every request to a daemon. Here a post
 * that finds nothing queued and nobody posting takes the side's turn and posts to DECK in the
 * caller's thread (qp_post.c decides how much, mv_send_inline does it); the daemon (the
 * consumer) serves only what was queued behind a turn holder. Only the turn holder is in DECK,
 * so order is kept across the two. VAPI's semantics stay: the post returns once the buffers
 * may be reused (DECK's post copies) and completions still come through the CQ.
 * A DECK failure is always reported (signalled or not) and moves the QP to VAPI_ERR; the
 * requests behind it are flushed.
 */
#include "mv_internal.h"

static int post_one(struct mv_qp *qp, const VAPI_sr_desc_t *wr)
{
    if (mv_wire_encode(&qp->sq.msg, (const void *)(uintptr_t)wr->addr, wr->len))
        return DECK_ERANGE;
    return deck_mbox_post(&qp->send_mb, &qp->sq.msg);
}

/* Posts one request and reports it; the turn is held, sq.lock is not. */
static int post_and_report(struct mv_qp *qp, const VAPI_sr_desc_t *wr)
{
    int rc = post_one(qp, wr);
    VAPI_wc_desc_t wc = { .id = wr->id, .status = VAPI_SUCCESS, .opcode = VAPI_SEND,
                          .byte_len = wr->len };
    if (rc != DECK_OK) {
        wc.status = VAPI_REM_ABORT_ERR;
        mv_cq_push(qp->sq.cq, &wc);
    } else if (wr->comp_type == VAPI_SIGNALED) {
        mv_cq_push(qp->sq.cq, &wc);
    } else {
        mv_cq_unreserve(qp->sq.cq, 1);
    }
    return rc;
}

/* After a failed post (sq.lock held): the QP goes to ERR and what the holder had not posted
 * yet (rest[0..n)) and everything queued behind it is flushed. */
static void fail_after(struct mv_qp *qp, int rc, const VAPI_sr_desc_t *rest, uint32_t n)
{
    mv_qp_set_error_locked(qp, "posting to the peer's mailbox %s failed: %s: %s",
                           qp->send_mb.name, deck_strerror(rc), deck_last_error());
    for (uint32_t i = 0; i < n; i++) {
        VAPI_wc_desc_t wc = { .id = rest[i].id, .status = VAPI_WR_FLUSH_ERR,
                              .opcode = VAPI_SEND };
        mv_cq_push(qp->sq.cq, &wc);
    }
    mv_side_fail_all(&qp->sq, VAPI_SEND, VAPI_WR_FLUSH_ERR);
}

void mv_send_inline(struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n)
{
    uint32_t done = 0;
    int rc = DECK_OK;
    while (done < n && rc == DECK_OK)
        rc = post_and_report(qp, &list[done++]);
    struct mv_side *side = &qp->sq;
    pthread_mutex_lock(&side->lock);
    if (rc != DECK_OK)
        fail_after(qp, rc, list + done, n - done);
    side->inflight -= n;
    side->busy = 0;
    if (side->q.count > 0)   /* requests queued behind us: the daemon's now */
        mv_side_wake_locked(side);
    pthread_mutex_unlock(&side->lock);
}

void *mv_send_daemon(void *arg)
{
    struct mv_qp *qp = arg;
    struct mv_side *side = &qp->sq;
    pthread_mutex_lock(&side->lock);
    for (;;) {
        while (!side->stopping && (side->q.count == 0 || side->busy)) {
            side->daemon_idle = 1;
            pthread_cond_wait(&side->work, &side->lock);
            side->daemon_idle = 0;
        }
        if (side->stopping)
            break;   /* what is still queued is flushed by the destroyer */
        if (qp->state == VAPI_ERR) {
            /* The receive side lost the peer: sending would fail the same way. */
            mv_side_fail_all(side, VAPI_SEND, VAPI_WR_FLUSH_ERR);
            continue;
        }
        VAPI_sr_desc_t wr = *mv_wrq_front(&side->q);
        mv_wrq_pop(&side->q);
        side->busy = 1;
        side->inflight = 1;
        pthread_mutex_unlock(&side->lock);
        int rc = post_and_report(qp, &wr);
        pthread_mutex_lock(&side->lock);
        if (rc != DECK_OK)
            fail_after(qp, rc, NULL, 0);
        side->inflight = 0;
        side->busy = 0;
    }
    pthread_mutex_unlock(&side->lock);
    return NULL;
}
