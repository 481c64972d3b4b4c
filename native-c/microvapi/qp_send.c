/*
 * The send daemon of a queue pair (the consumer of thesis Fig. 4.17): takes send requests in
 * posting order, wraps each in a wire message and posts it to the peer's mailbox, then
 * reports a completion if the request was signalled. One message of mtu + header bytes is
 * reused for every request. A DECK failure is always reported (signalled or not) and moves
 * the QP to VAPI_ERR; the requests behind it are flushed.
 */
#include "mv_internal.h"

static int post_one(struct mv_qp *qp, const VAPI_sr_desc_t *wr)
{
    if (mv_wire_encode(&qp->sq.msg, (const void *)(uintptr_t)wr->addr, wr->len))
        return DECK_ERANGE;
    return deck_mbox_post(&qp->send_mb, &qp->sq.msg);
}

void *mv_send_daemon(void *arg)
{
    struct mv_qp *qp = arg;
    struct mv_side *side = &qp->sq;
    pthread_mutex_lock(&side->lock);
    for (;;) {
        while (!side->stopping && side->q.count == 0)
            pthread_cond_wait(&side->work, &side->lock);
        if (side->stopping)
            break;   /* what is still queued is flushed by the destroyer */
        if (qp->state == VAPI_ERR) {
            /* The receive side lost the peer: sending would fail the same way. */
            mv_side_fail_all(side, VAPI_SEND, VAPI_WR_FLUSH_ERR);
            continue;
        }
        VAPI_sr_desc_t wr = *mv_wrq_front(&side->q);
        pthread_mutex_unlock(&side->lock);
        int rc = post_one(qp, &wr);
        pthread_mutex_lock(&side->lock);
        mv_wrq_pop(&side->q);
        VAPI_wc_desc_t wc = { .id = wr.id, .status = VAPI_SUCCESS, .opcode = VAPI_SEND,
                              .byte_len = wr.len };
        if (rc != DECK_OK) {
            wc.status = VAPI_REM_ABORT_ERR;
            mv_cq_push(side->cq, &wc);
            mv_qp_set_error_locked(qp, "posting to the peer's mailbox %s failed: %s: %s",
                                   qp->send_mb.name, deck_strerror(rc), deck_last_error());
            mv_side_fail_all(side, VAPI_SEND, VAPI_WR_FLUSH_ERR);
        } else if (wr.comp_type == VAPI_SIGNALED) {
            mv_cq_push(side->cq, &wc);
        } else {
            mv_cq_unreserve(side->cq, 1);
        }
    }
    pthread_mutex_unlock(&side->lock);
    return NULL;
}
