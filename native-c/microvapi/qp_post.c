/*
 * Posting work requests (VAPI_post_sr, EVAPI_post_sr_list, VAPI_post_rr, EVAPI_post_rr_list):
 * check the whole list, reserve a completion per request, then queue them, or, for sends
 * that find the queue empty and the turn free, post the first ones in the caller's thread
 * (qp_send.c) and queue only the rest, which over tcp the caller then posts as well.
 */
#include "mv_internal.h"

/* How much of a send list the caller posts itself: the first DECK message (up to 64 blocks /
 * 64 KiB coalesced), as far as the peer's window allows. The old path cost the caller a queue
 * append; posting inline costs a copy into the DECK message and one DECK post. For a short
 * write (the latency case) that saves the hand-off to a thread; over shared memory a large
 * write must not hold the caller for all of its posts, so the engine's send thread posts the
 * rest while the caller goes on, as in the thesis (over tcp the caller posts the rest too:
 * qp_send.c). The first request goes inline whatever its size: a write of one
 * large block is the latency case too, and its copy costs less than waking a thread
 * (measured: a 10 KiB ping-pong over sci took 20 us one-way when that block went to a daemon).
 * Within the window a DECK post never waits for the peer's application, only (briefly) for
 * its engine to make room in a full transport ring. */
static uint32_t inline_prefix(const struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n)
{
    return mv_send_batch(qp, list, n);
}

static VAPI_ret_t check_request(const char *fn, const VAPI_sr_desc_t *wr, uint32_t i,
                                uint32_t opcode, uint32_t max_len)
{
    if (wr->opcode != opcode)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "request %u: opcode %u, expected %s", i,
                       wr->opcode, opcode == VAPI_SEND ? "VAPI_SEND (1)" : "VAPI_RECEIVE (2)");
    if (wr->comp_type != VAPI_SIGNALED && wr->comp_type != VAPI_UNSIGNALED)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "request %u: comp_type %u is neither signalled "
                       "nor unsignalled", i, wr->comp_type);
    if (wr->len > max_len)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "request %u: len %u exceeds the path mtu %u", i,
                       wr->len, max_len);
    if (wr->len > 0 && wr->addr == 0)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "request %u: addr is 0", i);
    return VAPI_OK;
}

/* Accepts n requests on one side, all or none: the first *inline_n are for the caller to post
 * (it then holds the turn), the rest are queued; *schedule: the send thread must post them now.
 * side->lock held. */
static VAPI_ret_t side_post(const char *fn, struct mv_qp *qp, struct mv_side *side, uint32_t n,
                            const VAPI_sr_desc_t *list, int send, uint32_t *inline_n,
                            int *schedule)
{
    *inline_n = 0;
    *schedule = 0;
    if (side->stopping)
        return vapi_fail(VAPI_EINVAL_QP_HNDL, fn, "the queue pair is being destroyed");
    uint64_t outstanding = (uint64_t)side->q.count + side->inflight;
    if (side->max_wr && outstanding + n > side->max_wr)
        return vapi_fail(VAPI_EAGAIN, fn, "%llu requests outstanding, %u more exceed max_wr %u",
                       (unsigned long long)outstanding, n, side->max_wr);
    /* Every request may end in a completion (errors are reported even when unsignalled). */
    VAPI_ret_t ret = mv_cq_reserve(fn, side->cq, n);
    if (ret != VAPI_OK)
        return ret;
    uint32_t k = send && side->q.count == 0 && !side->busy ? inline_prefix(qp, list, n) : 0;
    if (mv_wrq_push(&side->q, list + k, n - k)) {
        mv_cq_unreserve(side->cq, n);
        return vapi_fail(VAPI_ENOMEM, fn, "no memory to queue %u requests", n - k);
    }
    if (k > 0) {
        side->busy = 1;
        side->inflight = k;
        *inline_n = k;
    } else if (send) {
        *schedule = mv_send_ready_locked(qp);   /* else the peer's credit or the turn holder does */
    }
    return VAPI_OK;
}

static VAPI_ret_t post_list(const char *fn, VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t n,
                            const VAPI_sr_desc_t *list, int send)
{
    if (!list)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "the request list is NULL");
    struct mv_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    struct mv_side *side = send ? &obj->sq : &obj->rq;
    uint32_t inline_n = 0;
    int schedule = 0;
    pthread_mutex_lock(&side->lock);
    /* A route whose posts do not wait for the peer (qp_send.c): the send thread posting this
     * queue pair's earlier requests is waited for, so that ours go from this thread too. */
    while (send && mv_whole_writes(obj->message_bytes) && side->busy && !side->stopping)
        pthread_cond_wait(&side->idle, &side->lock);
    if (send && obj->state != VAPI_RTS)
        ret = vapi_fail(VAPI_EINVAL_QP_STATE, fn, "the queue pair is in state %s%s%s",
                      mv_qp_state_name(obj->state),
                      obj->state == VAPI_ERR ? ": " : ", not connected",
                      obj->state == VAPI_ERR ? obj->err_text : " (VAPI_modify_qp to RTS)");
    for (uint32_t i = 0; i < n && ret == VAPI_OK; i++)
        ret = send ? check_request(fn, &list[i], i, VAPI_SEND, obj->path_mtu)
                   : check_request(fn, &list[i], i, VAPI_RECEIVE, UINT32_MAX);
    if (ret == VAPI_OK)
        ret = side_post(fn, obj, side, n, list, send, &inline_n, &schedule);
    int served = 0;
    if (ret == VAPI_OK && !send) {
        uint32_t before = side->q.count;
        mv_rq_serve_locked(obj);   /* data that waited for a request */
        served = side->q.count < before;
    }
    pthread_mutex_unlock(&side->lock);
    if (served)   /* completions a poller inside a retrieve would not see */
        mv_engine_kick();
    if (inline_n > 0)
        mv_send_inline(obj, list, inline_n);
    if (schedule)
        mv_engine_schedule_send(obj);
    if (ret == VAPI_OK && !send) {
        mv_engine_activity();
        mv_rq_credit(obj);
    }
    vh_put(qp);
    return ret;
}

VAPI_ret_t VAPI_post_sr(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const VAPI_sr_desc_t *sr)
{
    return post_list("VAPI_post_sr", hca, qp, 1, sr, 1);
}

VAPI_ret_t EVAPI_post_sr_list(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t num,
                              const VAPI_sr_desc_t *list)
{
    return post_list("EVAPI_post_sr_list", hca, qp, num, list, 1);
}

VAPI_ret_t VAPI_post_rr(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const VAPI_rr_desc_t *rr)
{
    return post_list("VAPI_post_rr", hca, qp, 1, rr, 0);
}

VAPI_ret_t EVAPI_post_rr_list(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t num,
                              const VAPI_rr_desc_t *list)
{
    return post_list("EVAPI_post_rr_list", hca, qp, num, list, 0);
}
