/*
 * The send direction of a queue pair: send requests are packed into wire messages and posted
 * to the peer's mailbox in posting order, consecutive requests coalesced into one DECK
 * message up to the bounds of wire.c (a DECK post costs far more than copying a block: a
 * message per 1 KiB block held DECK/tcp to 150 MB/s); a signalled request gets a completion
 * once the DECK post that carried it has returned.
 *
 * The thesis's producer/consumer (Fig. 4.17) handed every request to a daemon. Here a post
 * that finds nothing queued and nobody posting takes the side's turn and posts to DECK in the
 * caller's thread (qp_post.c decides how much, mv_send_inline does it); the daemon (the
 * consumer) serves only what was queued behind a turn holder, one coalesced message a turn.
 * Only the turn holder is in DECK, so order is kept across the two. VAPI's semantics stay: the post returns once the buffers
 * may be reused (DECK's post copies) and completions still come through the CQ.
 * A DECK failure is always reported (signalled or not) and moves the QP to VAPI_ERR; the
 * requests behind it are flushed.
 */
#include "mv_internal.h"

/* Posts list[0..n) (at most one message's worth: mv_wire_batch) as one DECK message; the
 * turn is held, sq.lock is not. */
static int post_batch(struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n)
{
    deck_msg_t *msg = &qp->sq.msg;
    deck_msg_clear(msg);
    for (uint32_t i = 0; i < n; i++)
        if (mv_wire_append(msg, (const void *)(uintptr_t)list[i].addr, list[i].len))
            return DECK_ERANGE;
    return deck_mbox_post(&qp->send_mb, msg);
}

/* Reports the n requests a post carried (sq.lock and the turn held): they stop counting
 * against max_wr in the same breath as their completions appear, so a caller that sees the
 * completion may post that many again. A failed post fails every request it carried, moves
 * the QP to ERR and flushes everything queued behind. */
static void report_locked(struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n, int rc)
{
    struct mv_side *side = &qp->sq;
    side->inflight -= n;
    uint32_t silent = 0;
    for (uint32_t i = 0; i < n; i++) {
        VAPI_wc_desc_t wc = { .id = list[i].id, .status = VAPI_SUCCESS, .opcode = VAPI_SEND,
                              .byte_len = list[i].len };
        if (rc != DECK_OK) {
            wc.status = VAPI_REM_ABORT_ERR;
            mv_cq_push(side->cq, &wc);
        } else if (list[i].comp_type == VAPI_SIGNALED) {
            mv_cq_push(side->cq, &wc);
        } else {
            silent++;
        }
    }
    if (silent)
        mv_cq_unreserve(side->cq, silent);
    if (rc != DECK_OK) {
        mv_qp_set_error_locked(qp, "posting to the peer's mailbox %s failed: %s: %s",
                               qp->send_mb.name, deck_strerror(rc), deck_last_error());
        mv_side_fail_all(side, VAPI_SEND, VAPI_WR_FLUSH_ERR);
    }
}

void mv_send_inline(struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n)
{
    int rc = post_batch(qp, list, n);
    struct mv_side *side = &qp->sq;
    pthread_mutex_lock(&side->lock);
    report_locked(qp, list, n, rc);
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
        /* Everything queued that one message carries, in order. */
        VAPI_sr_desc_t batch[MV_COALESCE_BLOCKS];
        const VAPI_sr_desc_t *wr;
        uint32_t k = 0;
        uint64_t payload = 0;
        while ((wr = mv_wrq_front(&side->q)) != NULL && mv_wire_fits(k, payload, wr->len)) {
            payload += wr->len;
            batch[k++] = *wr;
            mv_wrq_pop(&side->q);
        }
        side->busy = 1;
        side->inflight = k;
        pthread_mutex_unlock(&side->lock);
        int rc = post_batch(qp, batch, k);
        pthread_mutex_lock(&side->lock);
        report_locked(qp, batch, k, rc);
        side->busy = 0;
    }
    pthread_mutex_unlock(&side->lock);
    return NULL;
}
