/*
 * The receive daemon of a queue pair: for each posted receive request, in order, retrieves
 * the next message from the QP's own mailbox (DECK keeps messages that arrive while none is
 * posted), unwraps [length][data] into the request's buffer and reports the completion.
 * If the peer is gone (DECK_EPEER) or the mailbox fails, this request and every later one
 * complete with the failure. Destroying the QP posts a zero-length message to the mailbox
 * (qp.c, wake_receiver) to end a retrieve in progress; that request stays queued and is
 * flushed.
 */
#include <string.h>

#include "mv_internal.h"

/* Fills wc from a retrieve's result; returns the status that fails the side for good, or 0. */
static uint32_t complete_one(struct mv_qp *qp, const VAPI_rr_desc_t *wr, int rc,
                             VAPI_wc_desc_t *wc)
{
    *wc = (VAPI_wc_desc_t){ .id = wr->id, .status = VAPI_SUCCESS, .opcode = VAPI_RECEIVE };
    const void *data;
    uint32_t len;
    if (rc == DECK_ETRUNC) {
        /* Larger than our mtu (the peer uses a larger one): DECK keeps it queued, so the
         * stream cannot go on past it. */
        wc->status = VAPI_LOC_LEN_ERR;
        return wc->status;
    } else if (rc != DECK_OK) {
        wc->status = rc == DECK_EPEER ? VAPI_REM_ABORT_ERR : VAPI_GENERAL_ERR;
        return wc->status;
    } else if (mv_wire_decode(&qp->rq.msg, &data, &len)) {
        wc->status = VAPI_GENERAL_ERR;      /* not a MicroVAPI message: drop it, go on */
    } else if (len > wr->len) {
        wc->status = VAPI_LOC_LEN_ERR;
        wc->byte_len = len;
    } else {
        if (len)
            memcpy((void *)(uintptr_t)wr->addr, data, len);
        wc->byte_len = len;
    }
    return 0;
}

void *mv_recv_daemon(void *arg)
{
    struct mv_qp *qp = arg;
    struct mv_side *side = &qp->rq;
    pthread_mutex_lock(&side->lock);
    for (;;) {
        while (!side->stopping && side->q.count == 0)
            pthread_cond_wait(&side->work, &side->lock);
        if (side->stopping)
            break;
        if (qp->rq_failed_status) {
            mv_side_fail_all(side, VAPI_RECEIVE, qp->rq_failed_status);
            continue;
        }
        VAPI_rr_desc_t wr = *mv_wrq_front(&side->q);
        pthread_mutex_unlock(&side->lock);

        deck_msg_clear(&side->msg);
        int rc = deck_mbox_retrv(&qp->recv_mb, &side->msg);
        if (rc == DECK_OK && side->msg.len == 0) {
            /* The wake-up from wake_receiver: the loop's top sees stopping. */
            pthread_mutex_lock(&side->lock);
            continue;
        }
        VAPI_wc_desc_t wc;
        uint32_t failed = complete_one(qp, &wr, rc, &wc);
        if (failed) {
            pthread_mutex_lock(&qp->sq.lock);
            mv_qp_set_error_locked(qp, "receiving from mailbox %s failed: %s: %s",
                                   qp->recv_mb.name, deck_strerror(rc), deck_last_error());
            pthread_mutex_unlock(&qp->sq.lock);
        }

        pthread_mutex_lock(&side->lock);
        mv_wrq_pop(&side->q);
        mv_cq_push(side->cq, &wc);
        if (failed)
            qp->rq_failed_status = failed;
    }
    pthread_mutex_unlock(&side->lock);
    return NULL;
}
