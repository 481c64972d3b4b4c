/*
 * The receive window beyond the application's posted receives (why: fab_internal.h, "Window").
 *
 * Every data message is matched in libfabric by a receive posted there, in posting order: its
 * position (recv_handed counts them). Position p is the application's receive number p (in
 * posting order since create) handed over directly when that receive is posted by then; when
 * it is not and the reader is behind (its receives handed over have all arrived), position p
 * goes to a spill buffer of this library instead, and the application's receive p, once
 * posted, gets a copy and completes. So the credit may run up to max_recv_wr messages ahead of
 * what the application took (rq.head), as TCP's receive buffer lets a writer run ahead of a
 * silent reader, and still no message waits in libfabric as unexpected.
 *
 * Only the keeper hands positions to spill buffers (spill_ok): a reader that calls in gets
 * its own receives first, and a stream whose reader is merely a little behind its writer is
 * not turned into a stream of copies (bench_fabric_stream over shm, 64 KiB: 11 GB/s, 5 when
 * any progress could spill). A silent reader is what the window is for, and only the keeper
 * progresses one.
 *
 * Spill buffers are allocated when first posted and kept for reuse while the window is used;
 * the keeper frees them once none has been in use for FAB_SPILL_KEEP_NS: memory only while
 * data waits unread, give or take a second, at most nspill buffers of mtu bytes, nspill =
 * max_recv_wr within FAB_SPILL_MAX and FAB_SPILL_BYTES. Spill p is spills[p % nspill]:
 * positions in use lie in [rq.head, rq.head + nspill).
 *
 * A silent reader calls nothing: its keeper alone moves data into spill buffers, reads
 * rendezvous messages, sends credits. At its 250 ms period a window over tcp;ofi_rxm filled at
 * about 30 blocks per three rounds; while spill buffers wait in libfabric and data came lately
 * (FAB_SPILL_BUSY_NS), or its own look took data for a reader that called nothing since the
 * last one (fab_keeper.c: the posted receives fill so before any spill), the keeper looks every
 * FAB_KEEPER_FAST_MS instead, and falls back once the writer stops or the window is full.
 *
 * Each message in a spill buffer costs the reader a copy, as TCP's receive buffer does; a
 * reader that keeps up has its own receives in libfabric and spills nothing.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

#include "fab_internal.h"

struct fab_spill *fab_spill_of(struct fab_qp *qp, void *ctx)
{
    if (!qp->spills || (char *)ctx < (char *)qp->spills || (char *)ctx >= (char *)(qp->spills + qp->nspill))
        return NULL;
    return ctx;   /* ctx is a spill's first member */
}

static uint32_t spill_count(const struct fab_qp *qp)
{
    uint32_t n = qp->rq.cap < FAB_SPILL_MAX ? qp->rq.cap : FAB_SPILL_MAX;
    uint32_t by_bytes = FAB_SPILL_BYTES / qp->hca->config.mtu;
    if (n > by_bytes)
        n = by_bytes;
    return n ? n : 1;
}

int fab_spill_may(const struct fab_qp *qp)
{
    const struct fab_queue *rq = &qp->rq;
    uint32_t ahead = qp->recv_handed - rq->head;   /* positions not yet taken by the application */
    return qp->spill_ok              /* the keeper's look: no application thread calls in */
        && rq->next == rq->tail      /* no receive of the application waits for a position */
        && rq->tail != 0             /* it posted some (not before its first post: no spill for nothing) */
        && qp->app_in_lf == 0        /* and all it handed over arrived: the reader is behind */
        && !qp->peer_left
        && ahead < rq->cap           /* the window: max_recv_wr messages past what it took */
        && ahead < (qp->spills ? qp->nspill : spill_count(qp));
}

/* Done with: its buffer stays for the next spill of its index, until trimmed. */
static void spill_release(struct fab_qp *qp, struct fab_spill *sp)
{
    sp->state = FAB_FREE;
    sp->attached = 0;
    qp->spill_inflight--;
}

static void spill_drop_buffer(struct fab_spill *sp)
{
    if (sp->mr)
        fi_close(&sp->mr->fid);
    free(sp->buf);
    sp->mr = NULL;
    sp->buf = NULL;
}

int fab_spill_post(struct fab_qp *qp, int (*posted)(struct fab_qp *, const char *, ssize_t))
{
    if (!qp->spills) {
        uint32_t n = spill_count(qp);
        if (!(qp->spills = calloc(n, sizeof *qp->spills)))
            return 1;   /* no window beyond the posted receives, no harm */
        qp->nspill = n;
    }
    uint32_t p = qp->recv_handed, mtu = qp->hca->config.mtu;
    struct fab_spill *sp = &qp->spills[p % qp->nspill];
    if (sp->state != FAB_FREE)
        return 1;
    if (!sp->buf) {
        if (!(sp->buf = malloc(mtu)))
            return 1;
        if (qp->hca->mr_local
            && fi_mr_reg(qp->hca->domain, sp->buf, mtu, FI_RECV, 0, qp->hca->next_mr_key++, 0, &sp->mr, NULL) != 0) {
            sp->mr = NULL;
            spill_drop_buffer(sp);
            return 1;
        }
    }
    int r = posted(qp, "fi_trecv(spill)", fi_trecv(qp->ep, sp->buf, mtu, sp->mr ? fi_mr_desc(sp->mr) : NULL, qp->peer,
                                                   qp->secret, 0, &sp->ctx));
    if (r)
        return r;
    sp->pos = p;
    sp->state = FAB_POSTED;
    qp->spill_ns = vapi_now_ns();
    qp->spill_inflight++;
    qp->recv_handed++;
    qp->lf_recvs++;
    return 0;
}

/* The application's receive s gets spill sp's message (or its failure) and completes. */
static void deliver(struct fab_qp *qp, struct fab_spill *sp, struct fab_slot *s)
{
    if (sp->status != VAPI_SUCCESS) {
        s->status = sp->status;
    } else if (sp->len > s->len) {
        s->status = VAPI_LOC_LEN_ERR;
        fab_qp_fail_locked(qp, VAPI_WR_FLUSH_ERR, "a message from the peer is larger than the %u-byte receive "
                           "buffer", s->len);
    } else {
        if (sp->len)   /* inside the registered range fab_mr_desc checked for s->len bytes */
            memcpy((void *)(uintptr_t)s->addr, sp->buf, sp->len);
        s->len = sp->len;
        s->status = VAPI_SUCCESS;
    }
    s->state = FAB_DONE;
    if (!sp->attached && sp->status == VAPI_SUCCESS)
        qp->spill_waiting--;
    spill_release(qp, sp);
}

void fab_spill_attach(struct fab_qp *qp, uint32_t i)
{
    struct fab_slot *s = &qp->rq.slots[i % qp->rq.cap];
    struct fab_spill *sp = &qp->spills[i % qp->nspill];
    if (sp->state == FAB_DONE) {
        deliver(qp, sp, s);
    } else {
        sp->attached = 1;
        s->state = FAB_SPILLED;
    }
}

void fab_spill_arrived(struct fab_qp *qp, struct fab_spill *sp, uint32_t len, uint8_t status)
{
    sp->state = FAB_DONE;
    sp->len = len;
    sp->status = status;
    qp->lf_recvs--;
    qp->spill_ns = vapi_now_ns();
    if (sp->attached)
        deliver(qp, sp, &qp->rq.slots[sp->pos % qp->rq.cap]);
    else if (status == VAPI_SUCCESS)
        qp->spill_waiting++;
}

void fab_spill_cancel(struct fab_qp *qp)
{
    for (uint32_t i = 0; qp->spills && qp->ep && i < qp->nspill; i++)
        if (qp->spills[i].state == FAB_POSTED)
            fi_cancel(&qp->ep->fid, &qp->spills[i].ctx);
}

void fab_spill_free_all(struct fab_qp *qp)
{
    for (uint32_t i = 0; qp->spills && i < qp->nspill; i++)
        spill_drop_buffer(&qp->spills[i]);
    free(qp->spills);
    qp->spills = NULL;
    qp->spill_inflight = qp->spill_waiting = 0;
}

void fab_spill_trim(struct fab_qp *qp, uint64_t now_ns)
{
    if (qp->spills && qp->spill_inflight == 0 && now_ns - qp->spill_ns > FAB_SPILL_KEEP_NS)
        fab_spill_free_all(qp);
}

int fab_spill_busy(const struct fab_qp *qp, uint64_t now_ns)
{
    return qp->lf_recvs > qp->app_in_lf && qp->state != VAPI_ERR && now_ns - qp->spill_ns < FAB_SPILL_BUSY_NS;
}
