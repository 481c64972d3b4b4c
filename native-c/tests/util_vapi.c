/* Connection helpers of the MicroVAPI C tests (util_vapi.h). */
#include "util_vapi.h"


void open_conn_on(struct conn *c, const char *hca_id, uint32_t max_send_wr, uint32_t max_recv_wr)
{
    uint32_t n;
    VOK(EVAPI_get_hca_hndl(hca_id, &c->hca));
    VOK(VAPI_alloc_pd(c->hca, &c->pd));
    VOK(VAPI_create_cq(c->hca, 16, &c->scq, &n));
    VOK(VAPI_create_cq(c->hca, 16, &c->rcq, &n));
    VAPI_qp_init_attr_t init = { .sq_cq_hndl = c->scq, .rq_cq_hndl = c->rcq,
                                 .max_send_wr = max_send_wr, .max_recv_wr = max_recv_wr };
    VOK(VAPI_create_qp(c->hca, &init, &c->qp, &c->prop));
}

/* Waits for the peer's connect as on InfiniBand a QP takes the peer's sends only once it is
 * connected to it (MicroVAPI drops data for a QP not connected to its sender), which Aldeia's
 * bootstrap makes sure of with its CONNECTED exchange. */
void connect_conn(struct conn *c, uint32_t peer_qp, uint32_t peer_id, int via_rtr, uint32_t path_mtu)
{
    VAPI_qp_attr_t attr = { .qp_state = VAPI_RTR, .dest_qp_num = peer_qp, .dest_id = peer_id,
                            .path_mtu = path_mtu, .sl = 3, .port = 1 };
    if (via_rtr)
        VOK(VAPI_modify_qp(c->hca, c->qp, &attr));
    attr.qp_state = VAPI_RTS;
    VOK(VAPI_modify_qp(c->hca, c->qp, &attr));
    if (peer_id != (uint32_t)deck_node())
        CHECK_OK(deck_barrier());
}

void close_qp(struct conn *c)
{
    VOK(VAPI_destroy_qp(c->hca, c->qp));
}

void close_rest(struct conn *c)
{
    VOK(VAPI_destroy_cq(c->hca, c->scq));
    VOK(VAPI_destroy_cq(c->hca, c->rcq));
    VOK(VAPI_dealloc_pd(c->hca, c->pd));
    VOK(EVAPI_release_hca_hndl(c->hca));
}

void exchange_uints(int id, const char *tag, unsigned *values, int n)
{
    char name[32];
    deck_mbox_t mine, theirs;
    deck_msg_t msg;
    snprintf(name, sizeof name, "%s-%d", tag, id);
    CHECK_OK(deck_mbox_create(&mine, name));
    snprintf(name, sizeof name, "%s-%d", tag, 1 - id);
    CHECK_OK(deck_mbox_clone(&theirs, name));
    CHECK_OK(deck_msg_create(&msg, (unsigned long)n * sizeof *values + 64));
    CHECK_OK(deck_msg_pack(&msg, DECK_UINT, values, n));
    CHECK_OK(deck_mbox_post(&theirs, &msg));
    CHECK_OK(deck_msg_clear(&msg));
    CHECK_OK(deck_mbox_retrv(&mine, &msg));
    CHECK_OK(deck_msg_unpack(&msg, DECK_UINT, values, n));
    CHECK_OK(deck_msg_destroy(&msg));
    CHECK_OK(deck_mbox_destroy(&theirs));
    CHECK_OK(deck_mbox_destroy(&mine));
}

void exchange(int id, const struct conn *c, uint32_t *peer_qp, uint32_t *peer_id)
{
    VAPI_hca_port_t port;
    VOK(VAPI_query_hca_port_prop(c->hca, 1, &port));
    CHECK(port.lid == (uint16_t)id);
    unsigned pair[2] = { c->prop.qp_num, (unsigned)deck_node() };
    exchange_uints(id, "boot", pair, 2);
    *peer_qp = pair[0];
    *peer_id = pair[1];
}
