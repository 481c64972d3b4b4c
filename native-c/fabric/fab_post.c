/*
 * Posting: a request is checked (opcode, the registered region its lkey names), queued in its
 * queue pair in posting order, and handed to libfabric right away when the provider's queue,
 * and for a send the peer's credit, allow (fab_progress.c, fab_pump_locked); otherwise by the
 * next progress of the queue pair. A list is taken whole or not at all (VAPI_EAGAIN when it
 * does not fit in the queue).
 */
#include "fab_internal.h"

static VAPI_ret_t post_list(const char *fn, VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t num,
                            const VAPI_sr_desc_t *list, int recv)
{
    if (!list && num > 0)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "list is NULL");
    struct fab_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    uint32_t want = recv ? VAPI_RECEIVE : VAPI_SEND, mtu = obj->hca->config.mtu;
    pthread_mutex_lock(&obj->lock);
    obj->app_calls++;
    struct fab_queue *q = recv ? &obj->rq : &obj->sq;
    /* Receives posted to a queue pair in error are taken and complete flushed, behind what came
     * before, as on an InfiniBand queue pair and MicroVAPI's: a reader that reposts the buffer it
     * just emptied after the peer left still reads the peer's last bytes and its end of stream
     * (refused, the post failed a Java read that had copied them: FabricStreamTest over tcp). */
    int flushed = recv && obj->state == VAPI_ERR;
    if (!recv && obj->state != VAPI_RTS)
        ret = vapi_fail(VAPI_EINVAL_QP_STATE, fn, "the queue pair is %s",
                        obj->state == VAPI_ERR ? obj->err_text : "not connected (VAPI_RTS) yet");
    else if (num > q->cap - (q->tail - q->head))
        ret = vapi_fail(VAPI_EAGAIN, fn, "%u requests do not fit: %u of %u queued", num, q->tail - q->head, q->cap);
    /* Filled into the free slots after tail, which count only once all of them passed. */
    for (uint32_t k = 0; ret == VAPI_OK && k < num; k++) {
        const VAPI_sr_desc_t *d = &list[k];
        struct fab_slot *s = &q->slots[(q->tail + k) % q->cap];
        *s = (struct fab_slot){ .qp = obj, .id = d->id, .addr = d->addr, .len = d->len,
                                .signaled = recv || d->comp_type == VAPI_SIGNALED,
                                .state = flushed ? FAB_DONE : FAB_QUEUED,
                                .status = flushed ? VAPI_WR_FLUSH_ERR : VAPI_SUCCESS, .is_recv = (uint8_t)recv };
        if (d->opcode != want)
            ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "request %u: opcode %u, expected %u", k, d->opcode, want);
        else if (d->len > mtu)
            ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "request %u: %u bytes, more than the mtu %u", k, d->len, mtu);
        else if (d->len > 0)
            ret = fab_mr_desc(fn, obj->hca, d->lkey, d->addr, d->len, &s->desc);
    }
    if (ret == VAPI_OK)
        q->tail += num;   /* a receive counts as credit once handed to libfabric (fab_pump_locked) */
    if (flushed) {
        q->next = q->tail;   /* never handed to libfabric */
        fab_progress_locked(obj);
    }
    fab_pump_locked(obj);
    pthread_mutex_unlock(&obj->lock);
    vh_put(qp);
    return ret;
}

VAPI_ret_t EVAPI_post_sr_list(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t num, const VAPI_sr_desc_t *list)
{
    return post_list("EVAPI_post_sr_list", hca, qp, num, list, 0);
}

VAPI_ret_t VAPI_post_sr(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const VAPI_sr_desc_t *sr)
{
    return post_list("VAPI_post_sr", hca, qp, 1, sr, 0);
}

VAPI_ret_t EVAPI_post_rr_list(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t num, const VAPI_rr_desc_t *list)
{
    return post_list("EVAPI_post_rr_list", hca, qp, num, list, 1);
}

VAPI_ret_t VAPI_post_rr(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const VAPI_rr_desc_t *rr)
{
    return post_list("VAPI_post_rr", hca, qp, 1, rr, 1);
}
