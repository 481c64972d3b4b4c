/*
 * Queue pairs (thesis 4.4.4, Figs. 4.16-4.17). In the thesis a QP was two DECK mailboxes (one
 * created to receive, "mb-<qp_num>-<deck id>", one cloned from the peer's) and a daemon thread
 * per direction. Here a QP is an entry in the process's table (engine.c): every QP receives
 * through the process's one mailbox, the peer process's mailbox is looked up once per peer,
 * and the process's two engine threads serve every QP. A QP costs a few hundred bytes until
 * data waits in it.
 *
 * Where this departs from the thesis:
 *  - several receive requests may be posted at once (the thesis posted one), and data that
 *    arrives with none posted waits in the QP's receive queue, up to the window the QP
 *    advertises (flow control as TCP's, qp_recv.c): a writer never waits for the peer's
 *    reader below it, and blocks beyond it;
 *  - lists of requests are posted in one call (EVAPI_post_sr_list / EVAPI_post_rr_list), so a
 *    whole write is one native crossing;
 *  - consecutive send requests travel coalesced, several per DECK message (wire.c), and the
 *    receiver hands their blocks out to its receive requests one by one;
 *  - every signalled request gets its own completion (the thesis returned only the latest one
 *    and dropped the earlier ones), and failures are reported even for unsignalled sends;
 *  - errors are reported: a lost peer completes requests with VAPI_REM_ABORT_ERR (the engine
 *    watches the peers' lives), a peer that destroyed its QP with data unread or without its end
 *    of stream answers with a reset (VAPI_REM_ABORT_ERR too), destroying the QP completes
 *    outstanding ones with
 *    VAPI_WR_FLUSH_ERR;
 *  - no thread hand-off on the small-message path: a send that finds its queue empty and the
 *    window open is posted to DECK by the caller, and a reader polling the receive CQ
 *    retrieves from DECK itself (qp_send.c, cq.c).
 *
 * max_recv_wr sets the window: the QP holds up to max_recv_wr blocks of its mtu, posted or
 * arrived and not yet claimed (at least MV_WINDOW_INITIAL bytes and two blocks; unlimited
 * max_recv_wr, 0, gives MV_WINDOW_DEFAULT).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mv_internal.h"

const char *mv_qp_state_name(uint32_t state)
{
    static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "ERR" };
    return state <= VAPI_ERR ? names[state] : "unknown";
}

static void set_error_va(struct mv_qp *qp, const char *fmt, va_list ap)
{
    if (qp->state == VAPI_ERR)
        return;
    qp->state = VAPI_ERR;
    vsnprintf(qp->err_text, sizeof qp->err_text, fmt, ap);
}

void mv_qp_set_error_locked(struct mv_qp *qp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error_va(qp, fmt, ap);
    va_end(ap);
}

void mv_side_fail_all(struct mv_side *side, uint32_t opcode, uint32_t status)
{
    const VAPI_sr_desc_t *wr;
    while ((wr = mv_wrq_front(&side->q)) != NULL) {
        VAPI_wc_desc_t wc = { .id = wr->id, .status = status, .opcode = opcode };
        mv_cq_push(side->cq, &wc);
        mv_wrq_pop(&side->q);
    }
}

void mv_qp_fail(struct mv_qp *qp, uint32_t status, const char *fmt, ...)
{
    pthread_mutex_lock(&qp->sq.lock);
    va_list ap;
    va_start(ap, fmt);
    set_error_va(qp, fmt, ap);
    va_end(ap);
    mv_side_fail_all(&qp->sq, VAPI_SEND, status);
    pthread_mutex_unlock(&qp->sq.lock);
    pthread_mutex_lock(&qp->rq.lock);
    if (!qp->rq_failed_status)
        qp->rq_failed_status = status;
    mv_rq_serve_locked(qp);   /* what arrived before still goes first, then the failure */
    pthread_mutex_unlock(&qp->rq.lock);
}

/* ---- creation and tear-down -------------------------------------------------------------- */

static void side_init(struct mv_side *side, struct mv_cq *cq, VAPI_cq_hndl_t cq_hndl,
                      uint32_t max_wr)
{
    side->cq = cq;
    side->cq_hndl = cq_hndl;
    side->max_wr = max_wr;
    pthread_mutex_init(&side->lock, NULL);
    pthread_cond_init(&side->idle, NULL);
}

/* Flushes what is left and frees the side; nobody posts any more. */
static void side_free(struct mv_side *side, uint32_t opcode)
{
    pthread_mutex_lock(&side->lock);
    mv_side_fail_all(side, opcode, VAPI_WR_FLUSH_ERR);
    pthread_mutex_unlock(&side->lock);
    mv_cq_wake(side->cq, 0);
    mv_wrq_free(&side->q);
    pthread_cond_destroy(&side->idle);
    pthread_mutex_destroy(&side->lock);
}

static void qp_free(struct mv_qp *qp)
{
    mv_engine_unmark_here();   /* a mark on its key would hide what comes for another of that key */
    mv_cq_bind(qp->sq.cq, 0, 0);
    mv_cq_bind(qp->rq.cq, 1, 0);
    pthread_mutex_lock(&qp->rq.lock);
    mv_rq_free_locked(qp);
    pthread_mutex_unlock(&qp->rq.lock);
    side_free(&qp->sq, VAPI_SEND);
    side_free(&qp->rq, VAPI_RECEIVE);
    if (qp->peer)
        mv_engine_peer_put(qp->peer);
    pthread_mutex_destroy(&qp->modify_lock);
    free(qp);
}

/* The window for max_recv_wr blocks of mtu bytes (see the top of this file). */
static uint32_t window_for(uint32_t max_recv_wr, uint32_t mtu)
{
    uint64_t w = max_recv_wr ? (uint64_t)max_recv_wr * mtu : MV_WINDOW_DEFAULT;
    if (w < 2ull * mtu)
        w = 2ull * mtu;
    if (w < MV_WINDOW_INITIAL)
        w = MV_WINDOW_INITIAL;
    return w > MV_WINDOW_MAX ? MV_WINDOW_MAX : (uint32_t)w;
}

/* Links the QP to its HCA and CQs so none of them can be destroyed under it. */
static VAPI_ret_t link_parents(const char *fn, VAPI_hca_hndl_t hca,
                               const VAPI_qp_init_attr_t *attr)
{
    VAPI_ret_t ret = vh_link(fn, hca, VH_HCA);
    if (ret != VAPI_OK)
        return ret;
    if ((ret = vh_link(fn, attr->sq_cq_hndl, VH_CQ)) != VAPI_OK) {
        vh_unlink(hca);
        return ret;
    }
    if ((ret = vh_link(fn, attr->rq_cq_hndl, VH_CQ)) != VAPI_OK) {
        vh_unlink(attr->sq_cq_hndl);
        vh_unlink(hca);
    }
    return ret;
}

/* After qp_free: the CQs must outlive the flush completions pushed into them. */
static void unlink_parents(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t sq_cq, VAPI_cq_hndl_t rq_cq)
{
    vh_unlink(rq_cq);
    vh_unlink(sq_cq);
    vh_unlink(hca);
}

/* Builds and registers the QP; the HCA and both CQs are pinned by the caller. */
static VAPI_ret_t qp_create(const char *fn, VAPI_hca_hndl_t hca, struct mv_hca *hca_obj,
                            const VAPI_qp_init_attr_t *attr, struct mv_cq *sq_cq,
                            struct mv_cq *rq_cq, VAPI_qp_hndl_t *qp, VAPI_qp_prop_t *prop)
{
    struct mv_qp *obj = calloc(1, sizeof *obj);
    if (!obj)
        return vapi_fail(VAPI_ENOMEM, fn, "no memory for the queue pair");
    VAPI_ret_t ret = link_parents(fn, hca, attr);
    if (ret != VAPI_OK) {
        free(obj);
        return ret;
    }
    obj->mtu = obj->path_mtu = hca_obj->mtu;
    obj->message_bytes = MV_COALESCE_BYTES;
    obj->state = VAPI_INIT;
    obj->window = window_for(attr->max_recv_wr, obj->mtu);
    obj->send_edge = MV_WINDOW_INITIAL;      /* what the peer allows before it says more */
    obj->advertised = MV_WINDOW_INITIAL;
    pthread_mutex_init(&obj->modify_lock, NULL);
    side_init(&obj->sq, sq_cq, attr->sq_cq_hndl, attr->max_send_wr);
    side_init(&obj->rq, rq_cq, attr->rq_cq_hndl, attr->max_recv_wr);
    mv_cq_bind(sq_cq, 0, 1);
    mv_cq_bind(rq_cq, 1, 1);
    ret = mv_engine_add_qp(fn, obj);
    if (ret == VAPI_OK)
        mv_cq_key(rq_cq, obj->qp_num);
    if (ret == VAPI_OK && (*qp = vh_add(VH_QP, hca, obj)) == 0) {
        mv_engine_remove_qp(obj);
        ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
    }
    if (ret != VAPI_OK) {
        qp_free(obj);
        unlink_parents(hca, attr->sq_cq_hndl, attr->rq_cq_hndl);
        return ret;
    }
    *prop = (VAPI_qp_prop_t){ .qp_num = obj->qp_num, .max_send_wr = attr->max_send_wr,
                              .max_recv_wr = attr->max_recv_wr, .window = obj->window };
    return VAPI_OK;
}

VAPI_ret_t VAPI_create_qp(VAPI_hca_hndl_t hca, const VAPI_qp_init_attr_t *attr,
                          VAPI_qp_hndl_t *qp, VAPI_qp_prop_t *prop)
{
    static const char fn[] = "VAPI_create_qp";
    if (!attr || !qp || !prop)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "%s is NULL", !attr ? "attr" : !qp ? "qp" : "prop");
    struct mv_hca *hca_obj;
    struct mv_cq *sq_cq, *rq_cq;
    VAPI_ret_t ret = vh_get(fn, hca, hca, VH_HCA, (void **)&hca_obj);
    if (ret != VAPI_OK)
        return ret;
    if ((ret = vh_get(fn, hca, attr->sq_cq_hndl, VH_CQ, (void **)&sq_cq)) == VAPI_OK) {
        if ((ret = vh_get(fn, hca, attr->rq_cq_hndl, VH_CQ, (void **)&rq_cq)) == VAPI_OK) {
            ret = qp_create(fn, hca, hca_obj, attr, sq_cq, rq_cq, qp, prop);
            vh_put(attr->rq_cq_hndl);
        }
        vh_put(attr->sq_cq_hndl);
    }
    vh_put(hca);
    return ret;
}

/* Tells the peer that this QP is gone unless it ended in order (TCP's reset): when it goes
 * without having sent its end of stream (a close that aborts, or one behind a blocked writer)
 * or with data unread. Its reader and writer learn now instead of waiting for bytes that will
 * never come or filling a window nobody reads. Not to a peer that is gone or reset us. */
static void reset_peer_unless_orderly(struct mv_qp *qp)
{
    pthread_mutex_lock(&qp->sq.lock);
    int ended = qp->eos_sent;
    pthread_mutex_unlock(&qp->sq.lock);
    pthread_mutex_lock(&qp->rq.lock);
    int abortive = (qp->rx_head != NULL || !ended) && !qp->rq_failed_status;
    pthread_mutex_unlock(&qp->rq.lock);
    struct mv_peer *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
    if (abortive && peer)   /* best effort: a peer that is gone needs no reset */
        mv_engine_post_control(peer, MV_WIRE_RESET, qp->dest_qp, qp->qp_num, 0);
}

VAPI_ret_t VAPI_destroy_qp(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp)
{
    static const char fn[] = "VAPI_destroy_qp";
    struct mv_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    if ((ret = vh_retire(fn, qp, VH_QP)) != VAPI_OK) {
        vh_put(qp);
        return ret;
    }
    /* No new turn for a sender; the one in a post finishes it (bounded: the peer's engine
     * always drains its mailbox), then nothing reaches the QP any more. */
    pthread_mutex_lock(&obj->sq.lock);
    obj->sq.stopping = 1;
    while (obj->sq.busy)
        pthread_cond_wait(&obj->sq.idle, &obj->sq.lock);
    pthread_mutex_unlock(&obj->sq.lock);
    pthread_mutex_lock(&obj->rq.lock);
    obj->rq.stopping = 1;
    pthread_mutex_unlock(&obj->rq.lock);
    mv_engine_remove_qp(obj);
    reset_peer_unless_orderly(obj);
    vh_remove(qp);   /* posts already inside finish first; their requests get flushed */
    VAPI_cq_hndl_t sq_cq = obj->sq.cq_hndl, rq_cq = obj->rq.cq_hndl;
    qp_free(obj);
    unlink_parents(hca, sq_cq, rq_cq);
    return VAPI_OK;
}

VAPI_ret_t EVAPI_query_qp_error(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, char *buf, uint32_t len)
{
    static const char fn[] = "EVAPI_query_qp_error";
    if (!buf || len == 0)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "no room for the text");
    struct mv_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    pthread_mutex_lock(&obj->sq.lock);   /* the lock mv_qp_set_error_locked's callers hold */
    snprintf(buf, len, "%s", obj->state == VAPI_ERR ? obj->err_text : "");
    pthread_mutex_unlock(&obj->sq.lock);
    vh_put(qp);
    return VAPI_OK;
}

VAPI_ret_t EVAPI_query_qp_post_bytes(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t *bytes)
{
    static const char fn[] = "EVAPI_query_qp_post_bytes";
    if (!bytes)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "bytes is NULL");
    struct mv_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    pthread_mutex_lock(&obj->sq.lock);
    uint32_t mtu = obj->path_mtu, bound = obj->message_bytes;
    pthread_mutex_unlock(&obj->sq.lock);
    /* Whole blocks, with room for the short tail a writer sends with them (MV_COALESCE_TAIL). */
    uint32_t blocks = (bound - MV_COALESCE_TAIL) / mtu;
    if (blocks > MV_COALESCE_BLOCKS)
        blocks = MV_COALESCE_BLOCKS;
    *bytes = (blocks > 0 ? blocks : 1) * mtu;
    vh_put(qp);
    return VAPI_OK;
}

/* ---- connection -------------------------------------------------------------------------- */

/* Names the peer (its process's mailbox, looked up at that process alone); both windows open
 * beyond MV_WINDOW_INITIAL at once. Given the peer's window (attr->dest_window), the bootstrap
 * carried each side's to the other and nothing is sent: a message here would wake the peer's
 * engine on every connection. Otherwise the peer is told ours in a credit message. */
static VAPI_ret_t qp_connect(const char *fn, struct mv_qp *qp, const VAPI_qp_attr_t *attr)
{
    struct mv_peer *peer;
    VAPI_ret_t ret = mv_engine_peer(fn, attr->dest_id, &peer);
    if (ret != VAPI_OK)
        return ret;
    qp->message_bytes = mv_engine_peer_message_bytes(peer);   /* no send before the state moves */
    if (attr->dest_window) {
        pthread_mutex_lock(&qp->sq.lock);   /* where an early credit (take_credit) goes too */
        if ((int32_t)(attr->dest_window - qp->send_edge) > 0)
            qp->send_edge = attr->dest_window;
        pthread_mutex_unlock(&qp->sq.lock);
    }
    if (mv_engine_connect_qp(qp, attr->dest_id, attr->dest_qp_num, peer)) {
        mv_engine_peer_put(peer);
        return vapi_fail(VAPI_EGEN, fn, "DECK process %u has gone away", attr->dest_id);
    }
    pthread_mutex_lock(&qp->rq.lock);
    qp->advertised = qp->window;
    pthread_mutex_unlock(&qp->rq.lock);
    if (attr->dest_window)
        return VAPI_OK;
    int rc = mv_engine_post_control(peer, MV_WIRE_CREDIT, attr->dest_qp_num, qp->qp_num, qp->window);
    if (rc != DECK_OK)
        return vapi_fail(VAPI_EGEN, fn, "telling DECK process %u our window failed: %s: %s",
                       attr->dest_id, deck_strerror(rc), deck_last_error());
    return VAPI_OK;
}

/* RESET/INIT -> INIT (no-op), RTR or RTS (connects); RTR -> RTS. modify_lock held. */
static VAPI_ret_t qp_modify(const char *fn, struct mv_qp *qp, const VAPI_qp_attr_t *attr)
{
    char why[sizeof qp->err_text];
    pthread_mutex_lock(&qp->sq.lock);
    uint32_t cur = qp->state;
    memcpy(why, qp->err_text, sizeof why);
    pthread_mutex_unlock(&qp->sq.lock);
    uint32_t want = attr->qp_state;
    int unconnected = cur == VAPI_RESET || cur == VAPI_INIT;
    if (!(unconnected || (cur == VAPI_RTR && want == VAPI_RTS)))
        return vapi_fail(VAPI_EINVAL_QP_STATE, fn, "cannot go from %s to %s%s%s", mv_qp_state_name(cur),
                       mv_qp_state_name(want), cur == VAPI_ERR ? ": " : "",
                       cur == VAPI_ERR ? why : "");
    if (want == VAPI_INIT)
        return VAPI_OK;
    VAPI_ret_t ret = unconnected ? qp_connect(fn, qp, attr) : VAPI_OK;
    if (ret != VAPI_OK)
        return ret;
    pthread_mutex_lock(&qp->sq.lock);
    if (unconnected)
        qp->path_mtu = attr->path_mtu ? attr->path_mtu : qp->mtu;
    if (qp->state != VAPI_ERR)   /* the peer may have gone already */
        qp->state = want;
    pthread_mutex_unlock(&qp->sq.lock);
    return VAPI_OK;
}

VAPI_ret_t VAPI_modify_qp(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const VAPI_qp_attr_t *attr)
{
    static const char fn[] = "VAPI_modify_qp";
    if (!attr)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "attr is NULL");
    if (attr->qp_state != VAPI_INIT && attr->qp_state != VAPI_RTR && attr->qp_state != VAPI_RTS)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "qp_state %u: only INIT, RTR and RTS are "
                       "supported", attr->qp_state);
    if (attr->sl > 15)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "sl %u is not a service level (0..15)", attr->sl);
    struct mv_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    if (attr->path_mtu > obj->mtu) {
        ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "path_mtu %u is larger than the HCA's mtu %u",
                      attr->path_mtu, obj->mtu);
    } else {
        pthread_mutex_lock(&obj->modify_lock);
        ret = qp_modify(fn, obj, attr);
        pthread_mutex_unlock(&obj->modify_lock);
    }
    vh_put(qp);
    return ret;
}

/* A MicroVAPI queue pair is reached by its DECK id (information 1) and number: no address. */
VAPI_ret_t EVAPI_query_qp_address(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint8_t *buf, uint32_t *len)
{
    return vapi_fail(VAPI_ENOSYS, "EVAPI_query_qp_address", "MicroVAPI queue pairs have no fabric address");
}

VAPI_ret_t EVAPI_set_qp_dest_address(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const uint8_t *addr,
                                     uint32_t len)
{
    return vapi_fail(VAPI_ENOSYS, "EVAPI_set_qp_dest_address", "MicroVAPI queue pairs have no fabric address");
}
