/*
 * The send direction of a queue pair: send requests are packed into wire messages and posted
 * to the peer process's mailbox in posting order, consecutive requests coalesced into one DECK
 * message up to the bounds of wire.c (a DECK post costs far more than copying a block: a
 * message per 1 KiB block held DECK/tcp to 150 MB/s); a signalled request gets a completion
 * once the DECK post that carried it has returned, that is once its bytes are in the peer's
 * memory (its queue pair's receive queue, or DECK's buffers on the way there).
 *
 * Flow control: the peer's receive queue holds what its application has not taken, up to its
 * window; every message from the peer says how far we may send (the edge, a byte counter mod
 * 2^32, as TCP's window edge). A message goes out only within the edge, so the peer never
 * holds more than its window, and a writer whose peer reads nothing sees its requests wait
 * here, its send ring fill and its write block, as on TCP. Nothing waits for the peer's
 * application below the window: its engine takes our messages whether it reads or not.
 *
 * The thesis's producer/consumer (Fig. 4.17) handed every request to a daemon per queue pair.
 * Here a post that finds nothing queued, nobody posting and the window open posts the first
 * message to DECK in the caller's thread; the rest waits for the process's send thread
 * (engine.c), which also posts what waited for a window to open. Only the turn holder (busy) is
 * in DECK for this queue pair, so order is kept. A DECK failure is always reported (signalled
 * or not) and moves the QP to VAPI_ERR; the requests behind it are flushed.
 *
 * Which route the peer is on changes what "the rest" is. Over shared memory a DECK post may
 * wait for the peer's process (its engine makes room in a full ring), so a large write hands
 * all but its first message to the send thread and returns early (the thesis's asynchronous
 * write). Over tcp a post is a copy into the kernel's socket buffer, which does not wait for
 * the peer: that is all the JDK's write does, and the kernel sends on from there. Handing
 * those copies to the send thread only added a thread to the stream: on two cores the writer,
 * the send thread and the reader took turns, and the writer, finding the send thread posting,
 * queued every later write behind it (a 64 KiB-write stream on loopback, scheduler free,
 * medians of 7 x 2 GiB in three alternating runs: 3.5-4.5 GB/s so, 4.3 GB/s each time when the
 * writer posts its own; pinned 0/1, 4.5-4.8 GB/s either way). So on such
 * a route (mv_whole_writes: messages longer than a block, a frame per system call) the poster
 * waits for a send thread that is posting and then posts all of its requests the window lets
 * go itself, as a JDK writer does; the send thread posts only what a shut window held back.
 */
#include "mv_internal.h"

int mv_whole_writes(uint32_t message_bytes)
{
    return message_bytes > MV_COALESCE_BYTES;   /* tcp's post hint (wire.c); sci's is the least bound */
}

uint32_t mv_send_batch(const struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n)
{
    int32_t open = (int32_t)(qp->send_edge - qp->sent);
    uint64_t room = open > 0 ? (uint64_t)open : 0, payload = 0;
    uint32_t k = 0;
    while (k < n && mv_wire_fits(k, payload, list[k].len, qp->message_bytes) && payload + list[k].len <= room)
        payload += list[k++].len;
    return k;
}

int mv_send_ready_locked(const struct mv_qp *qp)
{
    const VAPI_sr_desc_t *front = mv_wrq_front(&qp->sq.q);
    return front && !qp->sq.busy && !qp->sq.stopping && mv_send_batch(qp, front, 1) > 0;
}

/* The edge to tell the peer now (every message carries it), remembered as advertised. */
static uint32_t receive_edge(struct mv_qp *qp)
{
    pthread_mutex_lock(&qp->rq.lock);
    qp->advertised = qp->consumed + qp->window;
    uint32_t edge = qp->advertised;
    pthread_mutex_unlock(&qp->rq.lock);
    return edge;
}

/* Posts list[0..n) (at most one message's worth) as one DECK message, its records read in
 * place from the registered memory they name (wire.c); the turn is held, sq.lock is not. An end
 * of stream alone goes quietly: it wakes the peer's reader if one waits and nobody else, and
 * is otherwise taken by the next retrieve there, as the peer's kernel keeps a FIN; waking the
 * peer's receive thread for it cost both CPUs more than the rest of a short connection's close. */
static int post_batch(struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n)
{
    struct mv_wire_head h = { .dest_qp = qp->dest_qp, .src_qp = qp->qp_num,
                              .credit = receive_edge(qp), .kind = MV_WIRE_DATA };
    int32_t lens[MV_COALESCE_BLOCKS];
    struct iovec iov[MV_WIRE_PIECES(MV_COALESCE_BLOCKS)];
    uint32_t pieces = mv_wire_gather(iov, &h, lens, list, n);
    if (!pieces)
        return DECK_ERANGE;
    return mv_engine_post(qp->peer, iov, pieces, qp->dest_qp, n == 1 && list[0].len == 0);
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
        if (rc == DECK_OK) {
            qp->sent += list[i].len;
            qp->eos_sent |= list[i].len == 0;
        }
    }
    if (silent)
        mv_cq_unreserve(side->cq, silent);
    if (rc != DECK_OK) {
        mv_qp_set_error_locked(qp, "posting to DECK process %u failed: %s: %s", qp->dest_id,
                               deck_strerror(rc), deck_last_error());
        mv_side_fail_all(side, VAPI_SEND, VAPI_WR_FLUSH_ERR);
    }
}

/* Hands the turn back (sq.lock held); 1 when requests wait that the window lets go now. */
static int release_turn_locked(struct mv_qp *qp)
{
    struct mv_side *side = &qp->sq;
    side->busy = 0;
    pthread_cond_broadcast(&side->idle);
    return mv_send_ready_locked(qp);
}

/* The queued requests the next message carries within the window, in order, copied into
 * batch (MV_COALESCE_BLOCKS entries); returns how many (0: the window is shut). sq.lock held. */
static uint32_t next_batch_locked(const struct mv_qp *qp, VAPI_sr_desc_t *batch)
{
    uint32_t avail = 0;
    for (const VAPI_sr_desc_t *wr; avail < MV_COALESCE_BLOCKS && (wr = mv_wrq_at(&qp->sq.q, avail)); avail++)
        batch[avail] = *wr;
    return mv_send_batch(qp, batch, avail);
}

/* Whether everything queued goes out in one more message, within the window; sq.lock held. */
static int queue_fits_one_message_locked(const struct mv_qp *qp)
{
    VAPI_sr_desc_t batch[MV_COALESCE_BLOCKS];
    return qp->sq.q.count <= MV_COALESCE_BLOCKS && next_batch_locked(qp, batch) == qp->sq.q.count;
}

void mv_send_inline(struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n)
{
    int rc = post_batch(qp, list, n);
    pthread_mutex_lock(&qp->sq.lock);
    report_locked(qp, list, n, rc);
    int more = release_turn_locked(qp);
    /* A write one block longer than a message (a 64 KiB block and its 4-byte header) left a
     * short tail: posting it here costs a copy, handing it to the send thread a wake-up on the
     * latency path (measured: a 64 KiB + 4 B ping-pong 110 us one-way, 48 us with). More
     * than one message stays the send thread's, so a large write returns early (thesis),
     * except on a route whose posts do not wait for the peer (above). */
    int tail = more && (mv_whole_writes(qp->message_bytes) || queue_fits_one_message_locked(qp));
    pthread_mutex_unlock(&qp->sq.lock);
    if (tail)
        mv_send_queued(qp);
    else if (more)   /* requests queued behind us: the send thread's now */
        mv_engine_schedule_send(qp);
}

void mv_send_queued(struct mv_qp *qp)
{
    mv_rq_credit(qp);   /* a credit the dispatcher found due (qp_recv.c) */
    struct mv_side *side = &qp->sq;
    pthread_mutex_lock(&side->lock);
    while (!side->busy && !side->stopping && qp->state != VAPI_ERR && side->q.count > 0) {
        VAPI_sr_desc_t batch[MV_COALESCE_BLOCKS];
        uint32_t k = next_batch_locked(qp, batch);
        if (k == 0)
            break;   /* the window is shut: the peer's next credit schedules us again */
        for (uint32_t i = 0; i < k; i++)
            mv_wrq_pop(&side->q);
        side->busy = 1;
        side->inflight = k;
        pthread_mutex_unlock(&side->lock);
        int rc = post_batch(qp, batch, k);
        pthread_mutex_lock(&side->lock);
        report_locked(qp, batch, k, rc);
        release_turn_locked(qp);
    }
    pthread_mutex_unlock(&side->lock);
}
