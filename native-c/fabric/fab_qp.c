/*
 * Queue pairs: an RDM endpoint each, with an address vector for its one peer and one
 * libfabric CQ for both directions (why: fab_internal.h).
 *
 * The address the bootstrap carries (EVAPI_query_qp_address), little-endian:
 *
 *   0       8          12                       12 + n
 *   +-------+----------+------------------------+
 *   | secret| qp_num   | endpoint name (fi_getname), n bytes
 *   +-------+----------+------------------------+
 *
 * The peer sends its data with tag = secret and its credits with tag = secret | 1; qp_num lets
 * VAPI_modify_qp check that the address and the dest_qp_num it is given belong together.
 *
 * States: RESET -> INIT at creation (receives may be posted: they wait here until the peer is
 * known), RTR or RTS once connected (sends allowed in RTS), ERR after a failure: requests not
 * yet finished complete with an error status and new ones are refused.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>

#include "fab_internal.h"

#define MAX_WR        (1u << 20)

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

VAPI_ret_t fab_queue_init(struct fab_queue *q, uint32_t cap)
{
    q->slots = calloc(cap, sizeof *q->slots);
    q->cap = cap;
    q->head = q->next = q->tail = 0;
    return q->slots ? VAPI_OK : VAPI_ENOMEM;
}

void fab_queue_free(struct fab_queue *q)
{
    free(q->slots);
    q->slots = NULL;
}

void fab_qp_fail_locked(struct fab_qp *qp, enum VAPI_wc_status status, const char *fmt, ...)
{
    if (qp->state != VAPI_ERR) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(qp->err_text, sizeof qp->err_text, fmt, ap);
        va_end(ap);
        qp->state = VAPI_ERR;
    }
    /* Receives libfabric holds come back cancelled (fab_progress.c): what arrived before is
     * read first. Sends it holds end now: libfabric cancels no send (ofi_rxm and shm ignore
     * fi_cancel on them), and a peer that is gone never completes them, so they would hold
     * every later completion (they retire in posting order) and a writer's flush would wait
     * for ever, as it did for a peer killed mid-stream (test_fabric_death_writer). An
     * InfiniBand queue pair in this state flushes them too. Their buffers stay libfabric's
     * until the destroy closes the endpoint, before the application frees them; a completion
     * libfabric still reports for one is stale and ignored (finish). What libfabric never got
     * ends now as well. */
    fab_provider_enter(qp->hca);
    struct fab_queue *queues[2] = { &qp->sq, &qp->rq };
    for (int k = 0; k < 2; k++) {
        struct fab_queue *q = queues[k];
        for (uint32_t i = q->head; i != q->tail; i++) {
            struct fab_slot *s = &q->slots[i % q->cap];
            if (s->state == FAB_POSTED && s->is_recv && qp->ep) {
                fi_cancel(&qp->ep->fid, &s->ctx);
            } else if (s->state == FAB_POSTED) {
                s->state = FAB_DONE;
                s->status = (uint8_t)status;
                qp->tx_inflight--;
            } else if (s->state == FAB_QUEUED) {
                s->state = FAB_DONE;
                s->status = (uint8_t)status;
            }
        }
        q->next = q->tail;   /* nothing more goes to libfabric */
    }
    fab_spill_cancel(qp);   /* a receive waiting on a spill completes with the spill's end */
    fab_provider_leave(qp->hca);
}

/* Everything libfabric-side of a queue pair, in reverse order of creation. */
static void close_fabric(struct fab_qp *qp)
{
    if (qp->ep)
        fi_close(&qp->ep->fid);
    qp->ep = NULL;
    fab_rescue_forget(qp);   /* no thread of ours can be inside the endpoint now */
    fab_spill_free_all(qp);
    if (qp->credit_mr)
        fi_close(&qp->credit_mr->fid);
    qp->credit_mr = NULL;
    if (qp->av)
        fi_close(&qp->av->fid);
    qp->av = NULL;
    if (qp->cq)
        fi_close(&qp->cq->fid);
    qp->cq = NULL;
}

/* The endpoint, bound to the queue pair's address vector and CQ, and enabled. */
static VAPI_ret_t open_endpoint(const char *fn, struct fab_qp *qp)
{
    int rc;
    if ((rc = fi_endpoint(qp->hca->domain, qp->hca->info, &qp->ep, NULL)) != 0)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_endpoint", rc);
    if ((rc = fi_ep_bind(qp->ep, &qp->av->fid, 0)) != 0)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_ep_bind(av)", rc);
    if ((rc = fi_ep_bind(qp->ep, &qp->cq->fid, FI_TRANSMIT | FI_RECV)) != 0)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_ep_bind(cq)", rc);
    if ((rc = fi_enable(qp->ep)) != 0)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_enable", rc);
    return VAPI_OK;
}

static VAPI_ret_t open_fabric(const char *fn, struct fab_qp *qp)
{
    struct fab_hca *h = qp->hca;
    struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .count = 64 };
    int rc = fi_av_open(h->domain, &av_attr, &qp->av, NULL);
    if (rc)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_av_open", rc);
    struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_FD,
                                  .size = (size_t)qp->sq.cap + qp->rq.cap + 2 * FAB_CREDIT_BUFS };
    rc = fi_cq_open(h->domain, &cq_attr, &qp->cq, NULL);
    if (rc == -FI_ENOSYS || rc == -FI_EINVAL) {   /* no wait object: fab_wait.c sleeps in slices */
        cq_attr.wait_obj = FI_WAIT_NONE;
        rc = fi_cq_open(h->domain, &cq_attr, &qp->cq, NULL);
    }
    if (rc)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_cq_open", rc);
    qp->wait_fd = -1;
    if (cq_attr.wait_obj == FI_WAIT_FD && fi_control(&qp->cq->fid, FI_GETWAIT, &qp->wait_fd) != 0)
        qp->wait_fd = -1;
    fab_signals_hold();   /* libfabric's shm would take the process's SIGSEGV (fab_signals.c) */
    VAPI_ret_t ret = open_endpoint(fn, qp);
    fab_signals_restore();
    if (ret != VAPI_OK)
        return ret;
    size_t len = sizeof qp->addr - FAB_ADDR_HEAD;
    if ((rc = fi_getname(&qp->ep->fid, qp->addr + FAB_ADDR_HEAD, &len)) != 0)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_getname", rc);
    put_le(qp->addr, qp->secret, 8);
    put_le(qp->addr + 8, qp->qp_num, 4);
    qp->addr_len = FAB_ADDR_HEAD + (uint32_t)len;
    if (h->mr_local) {
        char *from = (char *)qp->credit_rx, *to = (char *)(&qp->goodbye_tx + 1);
        if ((rc = fi_mr_reg(h->domain, from, (size_t)(to - from), FI_SEND | FI_RECV, 0, h->next_mr_key++, 0,
                            &qp->credit_mr, NULL)) != 0)
            return FAB_FAIL(VAPI_EGEN, fn, "fi_mr_reg(credits)", rc);
    }
    qp->cq_data = h->info->domain_attr->cq_data_size >= 4;
    qp->rx_depth = (uint32_t)(h->info->rx_attr->size ? h->info->rx_attr->size : 64);
    qp->tx_depth = (uint32_t)(h->info->tx_attr->size ? h->info->tx_attr->size : 64);
    return VAPI_OK;
}

static void qp_free(struct fab_qp *qp)
{
    close_fabric(qp);
    fab_queue_free(&qp->sq);
    fab_queue_free(&qp->rq);
    pthread_mutex_destroy(&qp->lock);
    free(qp);
}

VAPI_ret_t VAPI_create_qp(VAPI_hca_hndl_t hca, const VAPI_qp_init_attr_t *attr, VAPI_qp_hndl_t *qp,
                          VAPI_qp_prop_t *prop)
{
    static const char fn[] = "VAPI_create_qp";
    if (!attr || !qp || !prop)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "%s is NULL", !attr ? "attr" : !qp ? "qp" : "prop");
    if (attr->max_send_wr == 0 || attr->max_send_wr > MAX_WR || attr->max_recv_wr == 0
        || attr->max_recv_wr > MAX_WR)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "max_send_wr %u and max_recv_wr %u must be in 1..%u",
                         attr->max_send_wr, attr->max_recv_wr, MAX_WR);
    struct fab_hca *h;
    struct fab_cq *scq, *rcq;
    VAPI_ret_t ret = vh_get(fn, hca, hca, VH_HCA, (void **)&h);
    if (ret != VAPI_OK)
        return ret;
    if ((ret = vh_get(fn, hca, attr->sq_cq_hndl, VH_CQ, (void **)&scq)) != VAPI_OK) {
        vh_put(hca);
        return ret;
    }
    if ((ret = vh_get(fn, hca, attr->rq_cq_hndl, VH_CQ, (void **)&rcq)) != VAPI_OK) {
        vh_put(attr->sq_cq_hndl);
        vh_put(hca);
        return ret;
    }
    struct fab_qp *obj = calloc(1, sizeof *obj);
    if (!obj) {
        ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the queue pair");
        goto out;
    }
    pthread_mutex_init(&obj->lock, NULL);
    obj->hca = h;
    obj->hca_h = hca;
    obj->scq_h = attr->sq_cq_hndl;
    obj->rcq_h = attr->rq_cq_hndl;
    obj->scq = scq;
    obj->rcq = rcq;
    obj->state = VAPI_INIT;
    obj->qp_num = h->next_qp_num++;
    obj->wait_fd = -1;
    if (getrandom(&obj->secret, sizeof obj->secret, 0) != sizeof obj->secret) {
        ret = vapi_fail(VAPI_EGEN, fn, "getrandom: no random bytes for the queue pair's secret");
    } else if (fab_queue_init(&obj->sq, attr->max_send_wr) != VAPI_OK
               || fab_queue_init(&obj->rq, attr->max_recv_wr) != VAPI_OK) {
        ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for %u send and %u receive requests", attr->max_send_wr,
                        attr->max_recv_wr);
    }
    obj->secret &= ~1ull;
    if (ret == VAPI_OK) {
        fab_provider_enter(h);
        ret = open_fabric(fn, obj);
        fab_provider_leave(h);
    }
    /* The QP keeps its HCA and both CQs alive; the CQs progress it when polled. */
    int links = 0;
    if (ret == VAPI_OK && (ret = vh_link(fn, hca, VH_HCA)) == VAPI_OK && ++links
        && (ret = vh_link(fn, obj->scq_h, VH_CQ)) == VAPI_OK && ++links
        && (ret = vh_link(fn, obj->rcq_h, VH_CQ)) == VAPI_OK && ++links
        && (obj->handle = vh_add(VH_QP, hca, obj)) == 0)
        ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
    if (ret == VAPI_OK && (ret = fab_cq_attach(fn, scq, obj)) == VAPI_OK && rcq != scq
        && (ret = fab_cq_attach(fn, rcq, obj)) != VAPI_OK)
        fab_cq_detach(scq, obj);
    if (ret == VAPI_OK && (ret = fab_keeper_add(fn, h, obj->handle)) != VAPI_OK) {
        fab_cq_detach(scq, obj);
        fab_cq_detach(rcq, obj);
    }
    if (ret == VAPI_OK) {
        *qp = obj->handle;
        *prop = (VAPI_qp_prop_t){ .qp_num = obj->qp_num, .max_send_wr = attr->max_send_wr,
                                  .max_recv_wr = attr->max_recv_wr };
    } else if (obj) {
        if (obj->handle) {
            vh_retire(fn, obj->handle, VH_QP);
            vh_remove(obj->handle);
        }
        if (links > 2)
            vh_unlink(obj->rcq_h);
        if (links > 1)
            vh_unlink(obj->scq_h);
        if (links > 0)
            vh_unlink(hca);
        qp_free(obj);
    }
out:
    vh_put(attr->rq_cq_hndl);
    vh_put(attr->sq_cq_hndl);
    vh_put(hca);
    return ret;
}

VAPI_ret_t EVAPI_query_qp_address(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint8_t *buf, uint32_t *len)
{
    static const char fn[] = "EVAPI_query_qp_address";
    if (!len)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "len is NULL");
    struct fab_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    if (!buf || *len < obj->addr_len)
        ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "the address has %u bytes, the buffer %u", obj->addr_len,
                        buf ? *len : 0);
    else
        memcpy(buf, obj->addr, obj->addr_len);
    *len = obj->addr_len;
    vh_put(qp);
    return ret;
}

VAPI_ret_t EVAPI_set_qp_dest_address(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const uint8_t *addr, uint32_t len)
{
    static const char fn[] = "EVAPI_set_qp_dest_address";
    if (!addr || len <= FAB_ADDR_HEAD || len > EVAPI_QP_ADDRESS_MAX)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "an address of %u bytes; a queue pair's has %u..%u", addr ? len : 0,
                         FAB_ADDR_HEAD + 1, EVAPI_QP_ADDRESS_MAX);
    struct fab_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    pthread_mutex_lock(&obj->lock);
    if (obj->state != VAPI_INIT && obj->state != VAPI_RESET) {
        ret = vapi_fail(VAPI_EINVAL_QP_STATE, fn, "the queue pair is connected already");
    } else {
        memcpy(obj->peer_addr, addr, len);
        obj->peer_addr[len] = '\0';
        obj->peer_addr_len = len;
    }
    pthread_mutex_unlock(&obj->lock);
    vh_put(qp);
    return ret;
}

/* INIT -> RTR/RTS: the peer enters the address vector; what waited goes to libfabric. */
static VAPI_ret_t connect_locked(const char *fn, struct fab_qp *qp, const VAPI_qp_attr_t *attr)
{
    if (qp->peer_addr_len == 0)
        return vapi_fail(VAPI_EINVAL_QP_STATE, fn, "no destination address (EVAPI_set_qp_dest_address first)");
    uint32_t peer_num = (uint32_t)get_le(qp->peer_addr + 8, 4);
    if (peer_num != attr->dest_qp_num)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "dest_qp_num %u, but the destination address is queue pair %u's",
                         attr->dest_qp_num, peer_num);
    fab_provider_enter(qp->hca);
    int rc = fi_av_insert(qp->av, qp->peer_addr + FAB_ADDR_HEAD, 1, &qp->peer, 0, NULL);
    fab_provider_leave(qp->hca);
    if (rc != 1)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_av_insert", rc < 0 ? rc : -FI_EADDRNOTAVAIL);
    char why[200];
    if (!fab_shm_peer_mapped(qp, why, sizeof why)) {
        /* What it sent before it went waits in our endpoint and must never be read: joined
         * stays 0, and the connect is refused (the state stays, as after any failed modify). */
        return vapi_fail(VAPI_EGEN, fn, "the peer's endpoint closed before this queue pair connected to it (%s)", why);
    }
    qp->joined = 1;
    qp->shm_peer = fab_shm_peer_pid(qp) > 0;
    if (qp->shm_peer)
        fab_rescue_watch(qp);
    qp->peer_secret = get_le(qp->peer_addr, 8) & ~1ull;
    qp->state = attr->qp_state;
    qp->credit_due = 1;   /* tell the peer the receives posted before now */
    qp->heard_ns = qp->told_ns = vapi_now_ns();
    fab_cq_stir(qp->scq);   /* the peer answers soon: sleep in short slices (fab_cq.c) */
    fab_cq_stir(qp->rcq);
    fab_pump_locked(qp);
    return VAPI_OK;
}

VAPI_ret_t VAPI_modify_qp(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const VAPI_qp_attr_t *attr)
{
    static const char fn[] = "VAPI_modify_qp";
    if (!attr)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "attr is NULL");
    struct fab_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    pthread_mutex_lock(&obj->lock);
    int from = obj->state, to = (int)attr->qp_state;
    if (to == VAPI_ERR) {
        fab_qp_fail_locked(obj, VAPI_WR_FLUSH_ERR, "moved to VAPI_ERR by the application");
    } else if ((to == VAPI_RTR || to == VAPI_RTS) && (from == VAPI_INIT || from == VAPI_RESET)) {
        ret = connect_locked(fn, obj, attr);
    } else if (to == VAPI_RTS && from == VAPI_RTR) {
        obj->state = VAPI_RTS;
        fab_pump_locked(obj);
    } else if (to != from) {
        ret = vapi_fail(VAPI_EINVAL_QP_STATE, fn, "no transition from state %d to %d", from, to);
    }
    pthread_mutex_unlock(&obj->lock);
    vh_put(qp);
    return ret;
}

VAPI_ret_t VAPI_destroy_qp(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp)
{
    static const char fn[] = "VAPI_destroy_qp";
    struct fab_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    if ((ret = vh_retire(fn, qp, VH_QP)) != VAPI_OK) {
        vh_put(qp);
        return ret;
    }
    /* Pollers sleeping with this QP pinned wake, find it retired and let it go. */
    fab_keeper_remove(obj->hca, qp);
    fab_cq_detach(obj->scq, obj);
    if (obj->rcq != obj->scq)
        fab_cq_detach(obj->rcq, obj);
    fab_cq_wake(obj->scq);
    fab_cq_wake(obj->rcq);
    vh_remove(qp);
    pthread_mutex_lock(&obj->lock);
    fab_provider_enter(obj->hca);
    fab_qp_fail_locked(obj, VAPI_WR_FLUSH_ERR, "destroyed");
    fab_goodbye_locked(obj);   /* after the failure: nothing more is handed to libfabric */
    close_fabric(obj);   /* libfabric writes into no request from now on */
    fab_provider_leave(obj->hca);
    if (obj->peer_silent)
        fab_reap_dead_peer(obj);
    fab_flush_locked(obj);
    pthread_mutex_unlock(&obj->lock);
    vh_unlink(obj->rcq_h);
    vh_unlink(obj->scq_h);
    vh_unlink(hca);
    qp_free(obj);
    return VAPI_OK;
}

VAPI_ret_t EVAPI_query_qp_error(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, char *buf, uint32_t len)
{
    static const char fn[] = "EVAPI_query_qp_error";
    if (!buf || len == 0)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "no room for the text");
    struct fab_qp *obj;
    VAPI_ret_t ret = vh_get(fn, hca, qp, VH_QP, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    pthread_mutex_lock(&obj->lock);
    snprintf(buf, len, "%s", obj->state == VAPI_ERR ? obj->err_text : "");
    pthread_mutex_unlock(&obj->lock);
    vh_put(qp);
    return VAPI_OK;
}

VAPI_ret_t EVAPI_query_qp_post_bytes(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t *bytes)
{
    /* One message per send request: no coalescing to ask for. */
    return vapi_fail(VAPI_ENOSYS, "EVAPI_query_qp_post_bytes", "every send request is a message of its own");
}
