/*
 * The receive direction of a queue pair. Whoever retrieves from the process's mailbox
 * (engine.c: a reader in a poll, or the receive thread) dispatches each message here: its
 * records go to the posted receive requests, one block and one completion per request, in
 * order; records that find no request posted wait in the receive queue (chunks allocated as
 * data arrives, freed as it is handed out, so an idle queue pair holds no buffer) and go out
 * first when requests are posted. Nothing is reordered: a message's records are handed out or
 * queued behind what waits, never around it.
 *
 * Flow control: the queue holds at most `window` payload bytes the application has not taken
 * (handed out to a receive request counts as taken). Every message we send carries our edge,
 * consumed + window (qp_send.c); when the application has taken a quarter of the window since
 * the edge we last told, the new edge goes in a credit message from the thread that posts
 * receive requests. Data that went straight into requests posted in advance is taken without
 * such a post; once half the window went that way, the engine's send thread tells the edge (a
 * dispatcher never posts). A peer that sends beyond the edge breaks the protocol: the queue pair fails, nothing is stored.
 * Memory per queue pair is thus bounded by the window plus 4 bytes per block and a chunk's
 * slack.
 *
 * If the peer is gone or reset the connection, every request after the data that arrived
 * before completes with the failure.
 */
#include <stdlib.h>
#include <string.h>

#include "mv_internal.h"

/* The smallest chunk: small messages share one instead of a malloc each. */
#define MV_CHUNK_MIN 4096u

/* Hands the next record of buf[*off..len) to the request at the front of the receive queue,
 * with its completion; the caller checked that both exist. rq.lock held. No record there (a
 * message rewritten since take_data counted it): the rest of buf is dropped and the request
 * stays posted, for take_data to fail the queue pair, which completes it with an error once
 * the error is set (a poller that sees that completion also finds the reason). */
static void hand_one(struct mv_qp *qp, const char *buf, uint32_t len, uint32_t *off)
{
    struct mv_side *side = &qp->rq;
    const VAPI_rr_desc_t *wr = mv_wrq_front(&side->q);
    VAPI_wc_desc_t wc = { .id = wr->id, .status = VAPI_SUCCESS, .opcode = VAPI_RECEIVE };
    const void *data;
    uint32_t dlen;
    /* Checked on arrival: only a sender that rewrote its message in shared memory since then
     * (take_data) gets here, and its queue pair then fails. */
    if (mv_wire_next(buf, len, off, &data, &dlen)) {
        *off = len;
        return;
    }
    if (dlen > wr->len) {
        wc.status = VAPI_LOC_LEN_ERR;   /* this block is lost, the stream goes on */
        wc.byte_len = dlen;
    } else {
        if (dlen)
            memcpy((void *)(uintptr_t)wr->addr, data, dlen);
        wc.byte_len = dlen;
    }
    qp->consumed += dlen;
    mv_wrq_pop(&side->q);
    mv_cq_push(side->cq, &wc);
}

void mv_rq_serve_locked(struct mv_qp *qp)
{
    struct mv_side *side = &qp->rq;
    while (side->q.count > 0) {
        struct mv_rchunk *c = qp->rx_head;
        if (c) {
            hand_one(qp, c->data, c->len, &c->off);
            if (c->off >= c->len) {
                qp->rx_head = c->next;
                if (!qp->rx_head)
                    qp->rx_tail = NULL;
                free(c);
            }
        } else if (qp->rq_failed_status) {
            mv_side_fail_all(side, VAPI_RECEIVE, qp->rq_failed_status);
        } else {
            break;
        }
    }
}

void mv_rq_free_locked(struct mv_qp *qp)
{
    while (qp->rx_head) {
        struct mv_rchunk *c = qp->rx_head;
        qp->rx_head = c->next;
        free(c);
    }
    qp->rx_tail = NULL;
}

/* Queues buf[0..len) (whole records) behind what waits; 0, or -1 without memory. */
static int enqueue(struct mv_qp *qp, const char *buf, uint32_t len)
{
    struct mv_rchunk *t = qp->rx_tail;
    if (t && t->cap - t->len >= len) {
        memcpy(t->data + t->len, buf, len);
        t->len += len;
        return 0;
    }
    uint32_t cap = len > MV_CHUNK_MIN ? len : MV_CHUNK_MIN;
    struct mv_rchunk *c = malloc(sizeof *c + cap);
    if (!c)
        return -1;
    *c = (struct mv_rchunk){ .len = len, .cap = cap };
    memcpy(c->data, buf, len);
    if (t)
        t->next = c;
    else
        qp->rx_head = c;
    qp->rx_tail = c;
    return 0;
}

/* Whether the application took window / parts bytes since the edge we last told the peer;
 * rq.lock held. The thread that posts receive requests tells the edge at a quarter
 * (CREDIT_PARTS). The dispatcher, whose data went into requests posted in advance, has the send
 * thread tell it only at half (DISPATCHER_CREDIT_PARTS): below that, the reader that took the
 * data posts its next receive request soon (Aldeia's reposts each buffer it emptied) and tells
 * the edge from its own thread (mv_rq_credit); a quarter there woke the send thread for every
 * credit of a stream, a wake-up per 1 MiB (of a 4 MiB window) that preempted the reader on two
 * cores. A reader that posts nothing more still opens the peer's window, half of which is still
 * in flight when the credit leaves. Both are at most the window less a block, which window_for
 * (qp.c) keeps at two blocks or more: a writer whose next block does not fit the room left gets
 * a credit once the reader has taken what came. A credit only after the whole window (tried on a
 * loopback stream of 64 KiB writes) stalled it for good, 65 032 bytes open and a 65 544-byte
 * message waiting. */
#define CREDIT_PARTS            4u
#define DISPATCHER_CREDIT_PARTS 2u

static int credit_due_locked(const struct mv_qp *qp, uint32_t parts)
{
    return qp->consumed + qp->window - qp->advertised >= qp->window / parts;
}

/* The window edge the peer gave: our sends may go up to it. 0 when the queue pair is not
 * connected yet (the edge is kept for its connect). */
static int take_credit(struct mv_qp *qp, const struct mv_wire_head *h, int src)
{
    pthread_mutex_lock(&qp->sq.lock);
    int more = 0, connected = qp->peer != NULL;
    if (!connected) {   /* the peer connected first: keep its window until we name it */
        qp->early_set = 1;
        qp->early_id = (uint32_t)src;
        qp->early_qp = h->src_qp;
        qp->early_edge = h->credit;
    } else if ((int32_t)(h->credit - qp->send_edge) > 0) {
        qp->send_edge = h->credit;
        more = mv_send_ready_locked(qp);
    }
    pthread_mutex_unlock(&qp->sq.lock);
    if (more)
        mv_engine_schedule_send(qp);
    return connected;
}

static void take_data(struct mv_qp *qp, const deck_msg_t *msg)
{
    const char *buf = msg->buf + MV_WIRE_HEAD;
    uint32_t len = (uint32_t)msg->len - MV_WIRE_HEAD;
    int64_t payload = mv_wire_payload(buf, len);
    if (payload < 0) {
        mv_qp_fail(qp, VAPI_GENERAL_ERR, "the peer (DECK process %u) sent a malformed message", qp->dest_id);
        return;
    }
    pthread_mutex_lock(&qp->rq.lock);
    if (qp->rq.stopping || qp->rq_failed_status) {
        pthread_mutex_unlock(&qp->rq.lock);
        return;
    }
    if ((int32_t)(qp->received + (uint32_t)payload - qp->advertised) > 0) {
        pthread_mutex_unlock(&qp->rq.lock);
        mv_qp_fail(qp, VAPI_GENERAL_ERR, "the peer (DECK process %u) sent beyond the window it was "
                   "given (%u bytes)", qp->dest_id, qp->window);
        return;
    }
    qp->received += (uint32_t)payload;
    uint32_t off = 0, handed = qp->consumed;
    /* Nothing waits: straight into the posted requests, without a copy into the queue. */
    while (!qp->rx_head && off < len && qp->rq.q.count > 0)
        hand_one(qp, buf, len, &off);
    handed = qp->consumed - handed;
    int rc = off < len ? enqueue(qp, buf + off, len - off) : 0;
    /* The message may lie in the sender's shared memory (engine.c): a sender that rewrote its
     * record lengths after they were counted above would make the window count wrong, so the
     * bytes handed out and those queued (a private copy now) must add up to what was counted. */
    int64_t queued = rc || off >= len ? 0
                     : mv_wire_payload(qp->rx_tail->data + qp->rx_tail->len - (len - off), len - off);
    int changed = !rc && (queued < 0 || queued + handed != payload);
    int due = credit_due_locked(qp, DISPATCHER_CREDIT_PARTS);
    pthread_mutex_unlock(&qp->rq.lock);
    if (changed)
        mv_qp_fail(qp, VAPI_GENERAL_ERR, "the peer (DECK process %u) changed a message while it was being "
                   "taken", qp->dest_id);
    else if (rc)
        mv_qp_fail(qp, VAPI_GENERAL_ERR, "no memory to hold %u received bytes", len - off);
    else if (due)   /* taken by requests posted in advance: the send thread tells the peer */
        mv_engine_schedule_send(qp);
}

void mv_qp_dispatch(struct mv_qp *qp, const struct mv_wire_head *h, const deck_msg_t *msg)
{
    int carries_credit = h->kind == MV_WIRE_DATA || h->kind == MV_WIRE_CREDIT;
    if (carries_credit ? !take_credit(qp, h, msg->src) : !__atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE))
        return;
    if (h->kind == MV_WIRE_RESET)
        mv_qp_fail(qp, VAPI_REM_ABORT_ERR, "the peer (DECK process %u) reset the connection",
                   qp->dest_id);
    else if (h->kind == MV_WIRE_DATA)
        take_data(qp, msg);
}

void mv_rq_credit(struct mv_qp *qp)
{
    struct mv_peer *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
    pthread_mutex_lock(&qp->rq.lock);
    uint32_t edge = qp->consumed + qp->window;
    int due = peer && !qp->rq_failed_status && !qp->rq.stopping && credit_due_locked(qp, CREDIT_PARTS);
    if (due)
        qp->advertised = edge;
    pthread_mutex_unlock(&qp->rq.lock);
    if (due)   /* a failure shows on the next data or the liveness check */
        mv_engine_post_control(peer, MV_WIRE_CREDIT, qp->dest_qp, qp->qp_num, edge);
}
