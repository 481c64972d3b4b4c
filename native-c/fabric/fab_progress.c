/*
 * Progress of one queue pair, always under its lock: read its libfabric CQ, mark the requests
 * it names finished, take the peer's credits, hand libfabric what now may go, and move
 * finished requests to the VAPI CQs in posting order (fab_internal.h says why in order).
 * Which thread does it does not matter: the reader polling its CQ, the writer waiting for a
 * send completion, a post.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

#include "fab_internal.h"

#define READ_BATCH 16

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void *credit_desc(struct fab_qp *qp)
{
    return qp->credit_mr ? fi_mr_desc(qp->credit_mr) : NULL;
}

/* rc of a libfabric post: 0 posted, 1 try again later, -1 the queue pair failed. */
static int posted(struct fab_qp *qp, const char *call, ssize_t rc)
{
    if (rc == 0)
        return 0;
    if (rc == -FI_EAGAIN)
        return 1;
    fab_qp_fail_locked(qp, VAPI_GENERAL_ERR, "%s: %s (%zd)", call, fi_strerror((int)-rc), rc);
    return -1;
}

/* posted() for a send: also notes since when libfabric has refused every send (fab_probe.c). */
static int sent(struct fab_qp *qp, const char *call, ssize_t rc)
{
    if (rc == -FI_EAGAIN && !qp->refused_ns)
        qp->refused_ns = vapi_now_ns();
    else if (rc == 0)
        qp->refused_ns = 0;
    return posted(qp, call, rc);
}

/* The peer believes it may send fewer than half of the receives we hold posted: tell it more. */
static int credit_low(const struct fab_qp *qp)
{
    uint32_t posted = qp->recv_handed - qp->data_received, peer_view = qp->credit_told - qp->data_received;
    return peer_view < (posted + 1) / 2;
}

static void pump(struct fab_qp *qp);

/* An shm peer whose process has ended is never sent to again (fab_reap.c: a send to a region
 * whose dead owner held its lock spins for ever): its queue pair fails. Looked at most once a
 * millisecond (a read of /proc: a few microseconds a millisecond for a stream), or now when
 * forced (the keeper, four times a second). */
static int peer_ended(struct fab_qp *qp, int force)
{
    if (!qp->shm_peer)
        return 0;
    uint64_t now = vapi_now_ns();
    if (!force && now - qp->alive_ns < 1000000u)
        return 0;
    if (!fab_shm_peer_dead(qp)) {
        qp->alive_ns = now;
        return 0;
    }
    qp->peer_silent = 1;   /* no goodbye; its object is reaped */
    fab_qp_fail_locked(qp, VAPI_REM_ABORT_ERR, "the peer's process has ended");
    fab_reap_dead_peer(qp);
    return 1;
}

/* The peer said goodbye: the queue pair fails once nothing that arrived waits for a receive of
 * the application's (what the peer sent before it left is read first, as on TCP). */
static void peer_left_check(struct fab_qp *qp)
{
    if (qp->peer_left && qp->state != VAPI_ERR && qp->spill_waiting == 0)
        fab_qp_fail_locked(qp, VAPI_REM_ABORT_ERR, "the peer destroyed its queue pair");
}

void fab_pump_locked(struct fab_qp *qp)
{
    fab_provider_enter(qp->hca);
    pump(qp);
    fab_provider_leave(qp->hca);
}

static void pump(struct fab_qp *qp)
{
    if (!qp->joined || (qp->state != VAPI_RTR && qp->state != VAPI_RTS))
        return;
    for (int i = 0; i < FAB_CREDIT_BUFS; i++) {
        struct fab_credit *c = &qp->credit_rx[i];
        if (!c->busy) {
            int r = posted(qp, "fi_trecv(credit)", fi_trecv(qp->ep, c->value, sizeof c->value, credit_desc(qp),
                                                            qp->peer, qp->secret | 1, 0, &c->ctx));
            if (r < 0)
                return;
            c->busy = r == 0;
        }
    }
    struct fab_queue *rq = &qp->rq;
    /* Receives of the application whose positions went to spill buffers: a copy, or a wait. */
    while (rq->next != rq->tail && (int32_t)(qp->recv_handed - rq->next) > 0 && qp->state != VAPI_ERR)
        fab_spill_attach(qp, rq->next++);
    /* Positions: the application's next receive (rq->next == recv_handed here), else a spill
     * buffer while the reader is behind (fab_spill.c). None once the peer left. */
    while (!qp->peer_left && qp->state != VAPI_ERR && qp->lf_recvs < qp->rx_depth - FAB_CREDIT_BUFS) {
        if (rq->next == rq->tail) {
            if (!fab_spill_may(qp) || fab_spill_post(qp, posted) != 0)
                break;
            continue;
        }
        struct fab_slot *s = &rq->slots[rq->next % rq->cap];
        int r = posted(qp, "fi_trecv", fi_trecv(qp->ep, (void *)(uintptr_t)s->addr, s->len, s->desc, qp->peer,
                                                qp->secret, 0, &s->ctx));
        if (r)
            break;
        s->state = FAB_POSTED;
        rq->next++;
        qp->recv_handed++;   /* credit only now: see fab_internal.h */
        qp->lf_recvs++;
        qp->app_in_lf++;
    }
    peer_left_check(qp);
    if (qp->state == VAPI_ERR || qp->peer_left || peer_ended(qp, 0))
        return;
    if ((qp->credit_due || credit_low(qp)) && !qp->credit_tx.busy && qp->tx_inflight < qp->tx_depth) {
        uint32_t v = qp->recv_handed;
        for (int i = 0; i < 4; i++)
            qp->credit_tx.value[i] = (uint8_t)(v >> (8 * i));
        int r = sent(qp, "fi_tsend(credit)", fi_tsend(qp->ep, qp->credit_tx.value, FAB_CREDIT_LEN,
                                                        credit_desc(qp), qp->peer, qp->peer_secret | 1,
                                                        &qp->credit_tx.ctx));
        if (r < 0)
            return;
        if (r == 0) {
            qp->credit_tx.busy = 1;
            qp->credit_due = 0;
            qp->credit_told = v;
            qp->tx_inflight++;
            qp->told_ns = vapi_now_ns();
        }
    }
    struct fab_queue *sq = &qp->sq;
    while (qp->state == VAPI_RTS && sq->next != sq->tail && (int32_t)(qp->peer_credit - qp->data_sent) > 0
           && qp->tx_inflight < qp->tx_depth) {
        struct fab_slot *s = &sq->slots[sq->next % sq->cap];
        uint32_t v = qp->recv_handed;
        int r = sent(qp, "fi_tsend", qp->cq_data
                       ? fi_tsenddata(qp->ep, (void *)(uintptr_t)s->addr, s->len, s->desc, v, qp->peer,
                                      qp->peer_secret, &s->ctx)
                       : fi_tsend(qp->ep, (void *)(uintptr_t)s->addr, s->len, s->desc, qp->peer, qp->peer_secret,
                                  &s->ctx));
        if (r)
            break;
        if (qp->cq_data)
            qp->credit_told = v;
        s->state = FAB_POSTED;
        sq->next++;
        qp->data_sent++;
        qp->tx_inflight++;
    }
}

/* The peer's count of posted receives, from a credit message or a data message's CQ data. */
static void take_credit(struct fab_qp *qp, uint32_t v)
{
    if ((int32_t)(v - qp->peer_credit) > 0)
        qp->peer_credit = v;
}

/* A completion (err == 0) or an error completion for context ctx; data is the CQ data of a
 * received data message (has_data). */
static void finish(struct fab_qp *qp, void *ctx, size_t len, int has_data, uint64_t data, int err,
                   const char *why)
{
    if (ctx == &qp->credit_tx.ctx) {
        qp->credit_tx.busy = 0;
        qp->tx_inflight--;
        if (err && err != FI_ECANCELED)
            fab_qp_fail_locked(qp, VAPI_REM_ABORT_ERR, "a credit message to the peer failed: %s", why);
        return;
    }
    if (ctx == &qp->goodbye_tx.ctx) {   /* going anyway: whether it arrived changes nothing here */
        qp->goodbye_tx.busy = 0;
        qp->tx_inflight--;
        return;
    }
    for (int i = 0; i < FAB_CREDIT_BUFS; i++) {
        struct fab_credit *c = &qp->credit_rx[i];
        if (ctx != &c->ctx)
            continue;
        c->busy = 0;
        if (!err) {
            qp->heard_ns = vapi_now_ns();
            qp->heard_any = 1;
        }
        if (!err && (len == FAB_CREDIT_LEN || len == FAB_GOODBYE_LEN)) {
            take_credit(qp, le32(c->value));
            if (len == FAB_GOODBYE_LEN && (le32(c->value + 4) & FAB_GOODBYE))
                qp->peer_left = 1;   /* fails the queue pair once this read of the CQ is done */
        } else if (!err) {
            fab_qp_fail_locked(qp, VAPI_GENERAL_ERR, "a credit message of %zu bytes from the peer", len);
        } else if (err != FI_ECANCELED || qp->state != VAPI_ERR) {
            /* a cancel this library did not ask for (it cancels only once failed): the provider
             * dropped the receive, the connection went */
            fab_qp_fail_locked(qp, VAPI_REM_ABORT_ERR, "receiving the peer's credit failed: %s", why);
        }
        return;
    }
    struct fab_spill *sp = fab_spill_of(qp, ctx);
    if (sp) {
        uint8_t status = VAPI_SUCCESS;
        if (!err) {
            qp->heard_ns = vapi_now_ns();
            qp->heard_any = 1;
            qp->data_received++;
            if (has_data)
                take_credit(qp, (uint32_t)data);
        } else if (err == FI_ECANCELED && qp->state == VAPI_ERR) {
            status = VAPI_WR_FLUSH_ERR;
        } else {
            status = err == FI_ETRUNC ? VAPI_LOC_LEN_ERR : VAPI_GENERAL_ERR;
            fab_qp_fail_locked(qp, VAPI_WR_FLUSH_ERR, "a receive from the peer failed: %s", why);
        }
        fab_spill_arrived(qp, sp, (uint32_t)len, status);
        return;
    }
    struct fab_slot *s = ctx;
    if (s->state != FAB_POSTED)
        return;   /* a send the queue pair's failure already ended (fab_qp_fail_locked) */
    if (!s->is_recv) {
        qp->tx_inflight--;
    } else {
        qp->lf_recvs--;
        qp->app_in_lf--;
    }
    s->state = FAB_DONE;
    if (!err) {
        s->status = VAPI_SUCCESS;
        if (s->is_recv) {
            s->len = (uint32_t)len;
            qp->heard_ns = vapi_now_ns();
            qp->heard_any = 1;
            qp->data_received++;
            if (has_data)
                take_credit(qp, (uint32_t)data);
        }
        return;
    }
    if (err == FI_ECANCELED) {
        s->status = VAPI_WR_FLUSH_ERR;
        if (qp->state != VAPI_ERR)   /* not ours (see the credit receives above) */
            fab_qp_fail_locked(qp, VAPI_WR_FLUSH_ERR, "libfabric cancelled %s: %s", s->is_recv ? "a receive" : "a send",
                               why);
    } else if (err == FI_ETRUNC && s->is_recv) {
        s->status = VAPI_LOC_LEN_ERR;
        fab_qp_fail_locked(qp, VAPI_WR_FLUSH_ERR, "a message from the peer is larger than the %u-byte receive "
                           "buffer", s->len);
    } else {
        s->status = s->is_recv ? VAPI_GENERAL_ERR : VAPI_REM_ABORT_ERR;
        fab_qp_fail_locked(qp, VAPI_WR_FLUSH_ERR, "%s to the peer failed: %s", s->is_recv ? "a receive" : "a send",
                           why);
    }
}

/* Finished requests at the head of q, in order, to cq: signalled ones and every failure. */
static void retire(struct fab_queue *q, struct fab_cq *cq, int drop_when_full)
{
    while (q->head != q->tail) {
        struct fab_slot *s = &q->slots[q->head % q->cap];
        if (s->state != FAB_DONE)
            break;
        if (s->signaled || s->status != VAPI_SUCCESS) {
            VAPI_wc_desc_t wc = { .id = s->id, .status = s->status, .opcode = s->is_recv ? VAPI_RECEIVE : VAPI_SEND,
                                  .byte_len = s->status == VAPI_SUCCESS || s->is_recv ? s->len : 0 };
            if (!fab_cq_try_push(cq, &wc) && !drop_when_full)
                break;
        }
        s->state = FAB_FREE;
        q->head++;
    }
}

/* Reads the libfabric CQ and acts on what it says, then hands libfabric what may go. */
static void read_cq(struct fab_qp *qp)
{
    struct fi_cq_tagged_entry entries[READ_BATCH];
    fab_provider_enter(qp->hca);
    for (;;) {
        ssize_t n = fi_cq_read(qp->cq, entries, READ_BATCH);
        if (n > 0) {
            for (ssize_t i = 0; i < n; i++)
                finish(qp, entries[i].op_context, entries[i].len, (entries[i].flags & FI_REMOTE_CQ_DATA) != 0,
                       entries[i].data, 0, NULL);
            continue;
        }
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry e;
            memset(&e, 0, sizeof e);
            if (fi_cq_readerr(qp->cq, &e, 0) == 1) {
                /* positive by the specification; some providers (shm 1.17) give it negated */
                int err = e.err < 0 ? -e.err : e.err;
                char text[160];
                const char *detail = fi_cq_strerror(qp->cq, e.prov_errno, e.err_data, NULL, 0);
                snprintf(text, sizeof text, "%s (%d; provider: %s)", fi_strerror(err), err,
                         detail ? detail : "no detail");
                finish(qp, e.op_context, e.len, 0, 0, err ? err : FI_EOTHER, text);
            }
            continue;
        }
        if (n != -FI_EAGAIN)
            fab_qp_fail_locked(qp, VAPI_GENERAL_ERR, "fi_cq_read: %s (%zd)", fi_strerror((int)-n), n);
        break;
    }
    /* After the whole CQ: what the peer sent before its goodbye completed first (pump looks). */
    pump(qp);
    fab_provider_leave(qp->hca);
}

void fab_goodbye_locked(struct fab_qp *qp)
{
    /* Nobody to tell, or nobody listening; or a peer never heard from, which may not have
     * connected (shm would hold the goodbye until it answers: the whole wait, every time). */
    if (!qp->ep || !qp->joined || !qp->heard_any || qp->peer_left || qp->peer_silent)
        return;
    fab_provider_enter(qp->hca);
    uint64_t deadline = vapi_now_ns() + FAB_GOODBYE_WAIT_MS * 1000000ull;
    int sent = 0;
    for (uint32_t polls = 1;; polls++) {
        if (!sent && qp->tx_inflight < qp->tx_depth) {
            struct fab_credit *g = &qp->goodbye_tx;
            for (int i = 0; i < 4; i++) {
                g->value[i] = (uint8_t)(qp->recv_handed >> (8 * i));
                g->value[4 + i] = (uint8_t)(FAB_GOODBYE >> (8 * i));
            }
            ssize_t rc = fi_tsend(qp->ep, g->value, FAB_GOODBYE_LEN, credit_desc(qp), qp->peer, qp->peer_secret | 1,
                                  &g->ctx);
            if (rc == 0) {
                g->busy = 1;
                qp->tx_inflight++;
                sent = 1;
            } else if (rc != -FI_EAGAIN) {
                break;   /* the endpoint cannot send: the peer finds out by its timeout */
            }
        }
        if ((sent && !qp->goodbye_tx.busy) || vapi_now_ns() >= deadline)
            break;
        read_cq(qp);   /* its completion (the queue pair failed: nothing new is handed over) */
        if (sent && !qp->goodbye_tx.busy)
            break;
        if (polls % 16 == 0) {   /* a bounded wait that leaves the CPU to the peer */
            struct timespec pause = { 0, 50000 };
            nanosleep(&pause, NULL);
        } else {
            sched_yield();
        }
    }
    fab_provider_leave(qp->hca);
}

void fab_progress_locked(struct fab_qp *qp)
{
    /* Until the peer joined (fab_internal.h) nothing of ours is in libfabric, and the peer may
     * already be sending (it connected first): reading would make shm take that message from
     * a peer it has not mapped, a NULL peer region (libfabric.so.1+0xd01f7, the keeper
     * progresses every queue pair); a queue pair whose peer left before it joined is never
     * read. What the queue pair finished itself (a failure before connect) still retires. */
    if (qp->cq && qp->joined)
        read_cq(qp);
    retire(&qp->sq, qp->scq, 0);
    retire(&qp->rq, qp->rcq, 0);
}

void fab_flush_locked(struct fab_qp *qp)
{
    struct fab_queue *queues[2] = { &qp->sq, &qp->rq };
    for (int k = 0; k < 2; k++)
        for (uint32_t i = queues[k]->head; i != queues[k]->tail; i++) {
            struct fab_slot *s = &queues[k]->slots[i % queues[k]->cap];
            if (s->state != FAB_DONE) {
                s->state = FAB_DONE;
                s->status = VAPI_WR_FLUSH_ERR;
            }
        }
    retire(&qp->sq, qp->scq, 1);
    retire(&qp->rq, qp->rcq, 1);
}

void fab_timers_locked(struct fab_qp *qp, uint64_t now_ns)
{
    /* A peer that said goodbye is silent on purpose: what it sent before is read at the
     * application's pace, however long that takes, and needs no keepalive. */
    if ((qp->state != VAPI_RTR && qp->state != VAPI_RTS) || qp->peer_left || peer_ended(qp, 1))
        return;
    uint64_t timeout = (uint64_t)qp->hca->config.peer_timeout_ms * 1000000u;
    uint64_t keepalive = timeout / 4 < FAB_KEEPALIVE_MAX_NS ? timeout / 4 : FAB_KEEPALIVE_MAX_NS;
    if (fab_ns_since(now_ns, qp->heard_ns) > (int64_t)timeout) {
        fab_qp_fail_locked(qp, VAPI_REM_ABORT_ERR, "the peer sent nothing, not even a keepalive, for %u ms: it "
                           "died, hangs or cannot be reached", qp->hca->config.peer_timeout_ms);
        qp->peer_silent = 1;
        fab_reap_dead_peer(qp);
    } else if (fab_ns_since(now_ns, qp->told_ns) >= (int64_t)keepalive) {
        qp->credit_due = 1;
        fab_pump_locked(qp);
    }
}
