/*
 * Queue pairs (thesis 4.4.4, Figs. 4.16-4.17): a QP is two DECK mailboxes, one created here to
 * receive ("mb-<qp_num>-<deck id>", unique in the run) and one cloned from the peer's to send,
 * plus a send and a receive request queue, each served in order (qp_send.c, qp_recv.c); DECK
 * has no asynchronous primitive, so a daemon thread per direction carries the backlog.
 *
 * Where this departs from the thesis:
 *  - several receive requests may be posted at once (the thesis posted one), so a sender never
 *    finds the receiver without a buffer; messages that arrive with none posted wait in the
 *    DECK mailbox;
 *  - lists of requests are posted in one call (EVAPI_post_sr_list / EVAPI_post_rr_list), so a
 *    whole write is one native crossing;
 *  - consecutive send requests travel coalesced, several per DECK message (wire.c), and the
 *    receiver hands their blocks out to its receive requests one by one;
 *  - every signalled request gets its own completion (the thesis returned only the latest one
 *    and dropped the earlier ones), and failures are reported even for unsignalled sends;
 *  - errors are reported: a lost peer completes requests with VAPI_REM_ABORT_ERR, destroying
 *    the QP completes outstanding ones with VAPI_WR_FLUSH_ERR;
 *  - no thread hand-off on the small-message path: a send that finds its queue empty is posted
 *    to DECK by the caller, and a reader polling the receive CQ retrieves from DECK itself;
 *    the daemons only serve what is queued behind (see qp_send.c, qp_recv.c).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mv_internal.h"

/* Process-wide serial from 0: equals the Aldeia socket id when each socket makes one QP. */
static atomic_uint next_qp_num;

const char *mv_qp_state_name(uint32_t state)
{
    static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "ERR" };
    return state <= VAPI_ERR ? names[state] : "unknown";
}

void mv_qp_set_error_locked(struct mv_qp *qp, const char *fmt, ...)
{
    if (qp->state == VAPI_ERR)
        return;
    qp->state = VAPI_ERR;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(qp->err_text, sizeof qp->err_text, fmt, ap);
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

/* ---- creation and tear-down -------------------------------------------------------------- */

static int side_init(struct mv_side *side, struct mv_cq *cq, VAPI_cq_hndl_t cq_hndl,
                     uint32_t max_wr, uint32_t mtu)
{
    side->cq = cq;
    side->cq_hndl = cq_hndl;
    side->max_wr = max_wr;
    pthread_mutex_init(&side->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);   /* the receive daemon's grace */
    pthread_cond_init(&side->work, &attr);
    pthread_condattr_destroy(&attr);
    return deck_msg_create(&side->msg, mv_wire_capacity(mtu));
}

static void side_stop(struct mv_side *side)
{
    pthread_mutex_lock(&side->lock);
    side->stopping = 1;
    pthread_cond_broadcast(&side->work);
    pthread_mutex_unlock(&side->lock);
}

static void side_join(struct mv_side *side)
{
    if (side->running)
        pthread_join(side->daemon, NULL);
    side->running = 0;
}

/* Flushes what is left and frees the side; the daemon has ended and nobody posts any more. */
static void side_free(struct mv_side *side, uint32_t opcode)
{
    pthread_mutex_lock(&side->lock);
    mv_side_fail_all(side, opcode, VAPI_WR_FLUSH_ERR);
    pthread_mutex_unlock(&side->lock);
    mv_cq_wake(side->cq, 0);
    mv_wrq_free(&side->q);
    deck_msg_destroy(&side->msg);
    pthread_cond_destroy(&side->work);
    pthread_mutex_destroy(&side->lock);
}

/* Stops both directions: the send daemon finishes the post it is in; whoever retrieves (the
 * receive daemon or a poller) is woken by a token (mv_rq_stop); pollers let go of the QP
 * before the mailboxes go. */
static void qp_stop(struct mv_qp *qp)
{
    side_stop(&qp->sq);
    mv_rq_stop(qp);
    side_join(&qp->sq);
    side_join(&qp->rq);
    if (qp->cq_bound) {
        mv_cq_unbind(qp->rq.cq, qp, 1);
        mv_cq_unbind(qp->sq.cq, qp, 0);
        qp->cq_bound = 0;
    }
    if (qp->self_mb_open)
        deck_mbox_destroy(&qp->self_mb);
    qp->self_mb_open = 0;
    if (qp->recv_mb_open)
        deck_mbox_destroy(&qp->recv_mb);
    qp->recv_mb_open = 0;
}

static void qp_free(struct mv_qp *qp)
{
    side_free(&qp->sq, VAPI_SEND);
    side_free(&qp->rq, VAPI_RECEIVE);
    if (qp->send_mb_open)
        deck_mbox_destroy(&qp->send_mb);
    deck_msg_destroy(&qp->token);
    pthread_mutex_destroy(&qp->modify_lock);
    free(qp);
}

static VAPI_ret_t qp_start(const char *fn, struct mv_qp *qp)
{
    char name[DECK_MBOX_NAME_MAX];
    snprintf(name, sizeof name, "mb-%u-%d", qp->qp_num, deck_node());
    int rc = deck_mbox_create(&qp->recv_mb, name);
    if (rc != DECK_OK)
        return mv_fail(VAPI_EGEN, fn, "creating the receive mailbox %s failed: %s: %s", name,
                       deck_strerror(rc), deck_last_error());
    qp->recv_mb_open = 1;
    /* Nobody else's messages until the connection names the peer (qp_connect), and none longer
     * than the receiving side ever retrieves: anything else is refused before it is read. */
    if ((rc = deck_mbox_watch(&qp->recv_mb, DECK_NOBODY)) != DECK_OK
        || (rc = deck_mbox_limit(&qp->recv_mb, mv_wire_capacity(qp->mtu))) != DECK_OK)
        return mv_fail(VAPI_EGEN, fn, "closing the receive mailbox %s to strangers failed: %s: %s", name,
                       deck_strerror(rc), deck_last_error());
    if ((rc = deck_mbox_clone_at(&qp->self_mb, deck_node(), name)) != DECK_OK)
        return mv_fail(VAPI_EGEN, fn, "cloning our own mailbox %s failed: %s: %s", name,
                       deck_strerror(rc), deck_last_error());
    qp->self_mb_open = 1;
    if (pthread_create(&qp->sq.daemon, NULL, mv_send_daemon, qp))
        return mv_fail(VAPI_EGEN, fn, "cannot start the send daemon thread");
    qp->sq.running = 1;
    if (pthread_create(&qp->rq.daemon, NULL, mv_recv_daemon, qp))
        return mv_fail(VAPI_EGEN, fn, "cannot start the receive daemon thread");
    qp->rq.running = 1;
    return VAPI_OK;
}

/* Links the QP to its HCA and CQs so none of them can be destroyed under it. */
static VAPI_ret_t link_parents(const char *fn, VAPI_hca_hndl_t hca,
                               const VAPI_qp_init_attr_t *attr)
{
    VAPI_ret_t ret = mv_reg_link(fn, hca, MV_HCA);
    if (ret != VAPI_OK)
        return ret;
    if ((ret = mv_reg_link(fn, attr->sq_cq_hndl, MV_CQ)) != VAPI_OK) {
        mv_reg_unlink(hca);
        return ret;
    }
    if ((ret = mv_reg_link(fn, attr->rq_cq_hndl, MV_CQ)) != VAPI_OK) {
        mv_reg_unlink(attr->sq_cq_hndl);
        mv_reg_unlink(hca);
    }
    return ret;
}

/* After qp_free: the CQs must outlive the flush completions pushed into them. */
static void unlink_parents(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t sq_cq, VAPI_cq_hndl_t rq_cq)
{
    mv_reg_unlink(rq_cq);
    mv_reg_unlink(sq_cq);
    mv_reg_unlink(hca);
}

/* Builds, starts and registers the QP; the HCA and both CQs are pinned by the caller. */
static VAPI_ret_t qp_create(const char *fn, VAPI_hca_hndl_t hca, struct mv_hca *hca_obj,
                            const VAPI_qp_init_attr_t *attr, struct mv_cq *sq_cq,
                            struct mv_cq *rq_cq, VAPI_qp_hndl_t *qp, VAPI_qp_prop_t *prop)
{
    struct mv_qp *obj = calloc(1, sizeof *obj);
    if (!obj)
        return mv_fail(VAPI_ENOMEM, fn, "no memory for the queue pair");
    VAPI_ret_t ret = link_parents(fn, hca, attr);
    if (ret != VAPI_OK) {
        free(obj);
        return ret;
    }
    obj->mtu = obj->path_mtu = hca_obj->mtu;
    obj->state = VAPI_INIT;
    pthread_mutex_init(&obj->modify_lock, NULL);
    int sq_rc = side_init(&obj->sq, sq_cq, attr->sq_cq_hndl, attr->max_send_wr, obj->mtu);
    int rq_rc = side_init(&obj->rq, rq_cq, attr->rq_cq_hndl, attr->max_recv_wr, obj->mtu);
    int tok_rc = deck_msg_create(&obj->token, 0);
    if (sq_rc != DECK_OK || rq_rc != DECK_OK || tok_rc != DECK_OK)
        ret = mv_fail(VAPI_ENOMEM, fn, "no memory for %u-byte DECK messages",
                      mv_wire_capacity(obj->mtu));
    if (ret == VAPI_OK) {
        obj->qp_num = atomic_fetch_add(&next_qp_num, 1);
        ret = qp_start(fn, obj);
    }
    if (ret == VAPI_OK) {
        mv_cq_bind(sq_cq, obj, 0);
        mv_cq_bind(rq_cq, obj, 1);
        obj->cq_bound = 1;
    }
    if (ret == VAPI_OK && (*qp = mv_reg_add(MV_QP, hca, obj)) == 0)
        ret = mv_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
    if (ret != VAPI_OK) {
        qp_stop(obj);
        qp_free(obj);
        unlink_parents(hca, attr->sq_cq_hndl, attr->rq_cq_hndl);
        return ret;
    }
    *prop = (VAPI_qp_prop_t){ .qp_num = obj->qp_num, .max_send_wr = attr->max_send_wr,
                              .max_recv_wr = attr->max_recv_wr };
    return VAPI_OK;
}

VAPI_ret_t VAPI_create_qp(VAPI_hca_hndl_t hca, const VAPI_qp_init_attr_t *attr,
                          VAPI_qp_hndl_t *qp, VAPI_qp_prop_t *prop)
{
    static const char fn[] = "VAPI_create_qp";
    if (!attr || !qp || !prop)
        return mv_fail(VAPI_EINVAL_PARAM, fn, "%s is NULL", !attr ? "attr" : !qp ? "qp" : "prop");
    struct mv_hca *hca_obj;
    struct mv_cq *sq_cq, *rq_cq;
    VAPI_ret_t ret = mv_reg_get(fn, hca, hca, MV_HCA, (void **)&hca_obj);
    if (ret != VAPI_OK)
        return ret;
    if ((ret = mv_reg_get(fn, hca, attr->sq_cq_hndl, MV_CQ, (void **)&sq_cq)) == VAPI_OK) {
        if ((ret = mv_reg_get(fn, hca, attr->rq_cq_hndl, MV_CQ, (void **)&rq_cq)) == VAPI_OK) {
            ret = qp_create(fn, hca, hca_obj, attr, sq_cq, rq_cq, qp, prop);
            mv_reg_put(attr->rq_cq_hndl);
        }
        mv_reg_put(attr->sq_cq_hndl);
    }
    mv_reg_put(hca);
    return ret;
}

VAPI_ret_t VAPI_destroy_qp(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp)
{
    static const char fn[] = "VAPI_destroy_qp";
    struct mv_qp *obj;
    VAPI_ret_t ret = mv_reg_get(fn, hca, qp, MV_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    if ((ret = mv_reg_retire(fn, qp, MV_QP)) != VAPI_OK) {
        mv_reg_put(qp);
        return ret;
    }
    qp_stop(obj);
    mv_reg_remove(qp);   /* posts already inside finish first; their requests get flushed */
    VAPI_cq_hndl_t sq_cq = obj->sq.cq_hndl, rq_cq = obj->rq.cq_hndl;
    qp_free(obj);
    unlink_parents(hca, sq_cq, rq_cq);
    return VAPI_OK;
}

VAPI_ret_t EVAPI_query_qp_error(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, char *buf, uint32_t len)
{
    static const char fn[] = "EVAPI_query_qp_error";
    if (!buf || len == 0)
        return mv_fail(VAPI_EINVAL_PARAM, fn, "no room for the text");
    struct mv_qp *obj;
    VAPI_ret_t ret = mv_reg_get(fn, hca, qp, MV_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    pthread_mutex_lock(&obj->sq.lock);   /* the lock mv_qp_set_error_locked's callers hold */
    snprintf(buf, len, "%s", obj->state == VAPI_ERR ? obj->err_text : "");
    pthread_mutex_unlock(&obj->sq.lock);
    mv_reg_put(qp);
    return VAPI_OK;
}

/* ---- connection -------------------------------------------------------------------------- */

/* Opens our receive mailbox to the peer alone (and watches it for the peer's death), then
 * clones the peer's receive mailbox, asking that peer only. */
static VAPI_ret_t qp_connect(const char *fn, struct mv_qp *qp, const VAPI_qp_attr_t *attr)
{
    char name[DECK_MBOX_NAME_MAX];
    snprintf(name, sizeof name, "mb-%u-%u", attr->dest_qp_num, attr->dest_id);
    /* A QP connected within this process (two sockets of one JVM) has no peer to lose, and its
     * messages never come from another process. */
    int rc = DECK_OK;
    if (attr->dest_id != (uint32_t)deck_node() && (rc = deck_mbox_watch(&qp->recv_mb, (int)attr->dest_id)) != DECK_OK)
        return mv_fail(VAPI_EGEN, fn, "watching DECK node %u failed: %s: %s", attr->dest_id,
                       deck_strerror(rc), deck_last_error());
    if ((rc = deck_mbox_clone_at(&qp->send_mb, (int)attr->dest_id, name)) != DECK_OK)
        return mv_fail(VAPI_EGEN, fn, "cloning the peer's mailbox %s (dest_qp_num %u, dest_id "
                       "%u) failed: %s: %s", name, attr->dest_qp_num, attr->dest_id,
                       deck_strerror(rc), deck_last_error());
    qp->send_mb_open = 1;
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
        return mv_fail(VAPI_EINVAL_QP_STATE, fn, "cannot go from %s to %s%s%s", mv_qp_state_name(cur),
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
        return mv_fail(VAPI_EINVAL_PARAM, fn, "attr is NULL");
    if (attr->qp_state != VAPI_INIT && attr->qp_state != VAPI_RTR && attr->qp_state != VAPI_RTS)
        return mv_fail(VAPI_EINVAL_PARAM, fn, "qp_state %u: only INIT, RTR and RTS are "
                       "supported", attr->qp_state);
    if (attr->sl > 15)
        return mv_fail(VAPI_EINVAL_PARAM, fn, "sl %u is not a service level (0..15)", attr->sl);
    struct mv_qp *obj;
    VAPI_ret_t ret = mv_reg_get(fn, hca, qp, MV_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    if (attr->path_mtu > obj->mtu) {
        ret = mv_fail(VAPI_EINVAL_PARAM, fn, "path_mtu %u is larger than the HCA's mtu %u",
                      attr->path_mtu, obj->mtu);
    } else {
        pthread_mutex_lock(&obj->modify_lock);
        ret = qp_modify(fn, obj, attr);
        pthread_mutex_unlock(&obj->modify_lock);
    }
    mv_reg_put(qp);
    return ret;
}
