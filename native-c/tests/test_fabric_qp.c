/*
 * libaldeiafabric's queue pairs between two processes, over libfabric's shm provider and over
 * its tcp provider on loopback (the hardware providers cannot run here): the addresses the
 * bootstrap would carry go through a socketpair. What a channel relies on:
 *  - blocks arrive whole, in posting order, with their lengths, zero-length ones included;
 *  - a stream far larger than the receive queue, written with signalled and unsignalled sends
 *    and read by a receiver slower than the sender, loses and reorders nothing (flow control:
 *    the sender's queue fills, posts see VAPI_EAGAIN, never an overrun);
 *  - a blocked poll sleeps (CPU time well under the wall time) and wakes for the peer's data;
 *  - bad requests are refused with the right code (unregistered memory, a range outside the
 *    region, a send before connect, an address of another queue pair, a message larger than
 *    the receive buffer);
 *  - an endpoint that knows the address but not the secret reaches no posted receive;
 *  - destroying a queue pair flushes what it held.
 * Each runs over both providers in turn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fabric_util.h"

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* Requests that must be refused, on a connected queue pair. */
static void bad_requests(struct end *e)
{
    VAPI_sr_desc_t s = { .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)send_buf(e, 0), .len = 8,
                         .lkey = e->lkey + 100, .comp_type = VAPI_SIGNALED };
    VCHECK(VAPI_post_sr(e->hca, e->qp, &s), VAPI_EINVAL_PARAM);           /* no such region */
    s.lkey = e->lkey;
    s.addr = (uint64_t)(uintptr_t)(e->mem + (size_t)MTU * (RECVS + SENDS) - 4);
    VCHECK(VAPI_post_sr(e->hca, e->qp, &s), VAPI_EINVAL_PARAM);           /* runs past its end */
    s.addr = (uint64_t)(uintptr_t)send_buf(e, 0);
    s.len = MTU + 1;
    VCHECK(VAPI_post_sr(e->hca, e->qp, &s), VAPI_EINVAL_PARAM);           /* above the mtu */
    s.len = 8;
    s.opcode = VAPI_RECEIVE;
    VCHECK(VAPI_post_sr(e->hca, e->qp, &s), VAPI_EINVAL_PARAM);           /* a receive as a send */
    uint8_t small[4];
    uint32_t len = sizeof small;
    VCHECK(EVAPI_query_qp_address(e->hca, e->qp, small, &len), VAPI_EINVAL_PARAM);
    CHECK(len > sizeof small && len <= EVAPI_QP_ADDRESS_MAX);
}

/* A third endpoint in the sender's process aims at the receiver's address with a made-up
 * secret: what it sends must not reach the receiver's posted receives. It stays open until the
 * receiver has looked (libfabric 1.17's shm provider crashes a receiver that finds a message
 * from an endpoint already closed: see fab_hca.c). */
static void stranger_sends(struct end *x, const uint8_t *victim, uint32_t victim_len, uint32_t victim_num)
{
    open_end(x);
    uint8_t forged[EVAPI_QP_ADDRESS_MAX];
    memcpy(forged, victim, victim_len);
    for (int i = 0; i < 8; i++)
        forged[i] ^= 0x5a;
    VOK(EVAPI_set_qp_dest_address(x->hca, x->qp, forged, victim_len));
    VAPI_qp_attr_t attr = { .qp_state = VAPI_RTS, .dest_qp_num = victim_num, .path_mtu = MTU };
    VOK(VAPI_modify_qp(x->hca, x->qp, &attr));
    /* Without the victim's credit it cannot even send: force the attempt anyway by posting; it
     * stays queued here, and nothing of it may arrive. */
    VAPI_sr_desc_t s = { .id = 1, .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)send_buf(x, 0), .len = 16,
                         .lkey = x->lkey, .comp_type = VAPI_SIGNALED };
    memset(send_buf(x, 0), 0xee, 16);
    VOK(VAPI_post_sr(x->hca, x->qp, &s));
    VAPI_wc_desc_t wc;
    VCHECK(EVAPI_poll_cq_block(x->hca, x->scq, 200000, &wc), VAPI_ETIMEDOUT);
}

static void run(int sender, uint32_t total)
{
    struct end e;
    open_end(&e);
    /* before connect: a send is refused, receives wait */
    VAPI_sr_desc_t early = { .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)send_buf(&e, 0), .len = 1,
                             .lkey = e.lkey };
    VCHECK(VAPI_post_sr(e.hca, e.qp, &early), VAPI_EINVAL_QP_STATE);
    for (uint32_t i = 0; i < RECVS; i++)
        post_recv(&e, i);
    uint8_t mine[EVAPI_QP_ADDRESS_MAX];
    uint32_t mine_len = sizeof mine;
    VOK(EVAPI_query_qp_address(e.hca, e.qp, mine, &mine_len));
    connect_end(&e);
    bad_requests(&e);

    /* 1. the stream, the receiver slowed down now and then */
    if (sender)
        stream_send(&e, total);
    else
        stream_receive(&e, total, 1);
    sync_peer();

    /* 2. a blocked receiver sleeps until the peer sends, 300 ms later */
    if (sender) {
        usleep(300000);
        send_block(&e, 1, 2, &(uint32_t){ 0 });   /* block 1, signalled as the last of 2 */
        CHECK(wait_wc(&e, e.scq).status == VAPI_SUCCESS);
    } else {
        double c0 = cpu_seconds(), w0 = fabric_now_s();
        VAPI_wc_desc_t wc = wait_wc(&e, e.rcq);
        double cpu = cpu_seconds() - c0, wall = fabric_now_s() - w0;
        CHECK(wc.status == VAPI_SUCCESS && wc.byte_len == block_len(1));
        printf("  blocked receive: %.0f ms waited, %.1f ms of CPU\n", wall * 1e3, cpu * 1e3);
        CHECK(wall > 0.2 && cpu < wall / 4);
        post_recv(&e, (uint32_t)wc.id);
    }
    sync_peer();

    /* 3. a stranger with the address but not the secret: the receiver gets nothing */
    uint32_t peer_len = 0, peer_num = 0;
    uint8_t peer[EVAPI_QP_ADDRESS_MAX];
    struct end stranger;
    if (!sender) {
        write_all(&mine_len, sizeof mine_len);
        write_all(mine, mine_len);
        write_all(&e.prop.qp_num, sizeof e.prop.qp_num);
    } else {
        read_all(&peer_len, sizeof peer_len);
        read_all(peer, peer_len);
        read_all(&peer_num, sizeof peer_num);
        stranger_sends(&stranger, peer, peer_len, peer_num);
    }
    sync_peer();
    if (!sender) {
        VAPI_wc_desc_t wc;
        VCHECK(EVAPI_poll_cq_block(e.hca, e.rcq, 100000, &wc), VAPI_ETIMEDOUT);
    }
    sync_peer();
    if (sender)
        close_end(&stranger);

    close_end(&e);
}

/* A message larger than the receive buffer: VAPI_LOC_LEN_ERR and the receiver's queue pair in
 * error, with a reason; the sender's requests that never got credit are flushed when its
 * queue pair is destroyed (errors complete whether signalled or not). */
static void run_truncation(int sender)
{
    struct end e;
    open_end(&e);
    if (!sender) {
        VAPI_rr_desc_t r = { .id = 5, .opcode = VAPI_RECEIVE, .addr = (uint64_t)(uintptr_t)recv_buf(&e, 0),
                             .len = 16, .lkey = e.lkey };
        VOK(VAPI_post_rr(e.hca, e.qp, &r));
    }
    connect_end(&e);
    if (sender) {
        for (uint32_t k = 0; k < 3; k++) {
            VAPI_sr_desc_t s = { .id = 10 + k, .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)send_buf(&e, k),
                                 .len = 100, .lkey = e.lkey, .comp_type = k == 0 ? VAPI_SIGNALED : VAPI_UNSIGNALED };
            VOK(VAPI_post_sr(e.hca, e.qp, &s));
        }
        VAPI_wc_desc_t wc = wait_wc(&e, e.scq);   /* the first went out on the receiver's one credit */
        CHECK(wc.id == 10);
        sync_peer();   /* the receiver saw the truncation */
        VOK(VAPI_destroy_qp(e.hca, e.qp));
        for (uint32_t k = 1; k < 3; k++) {
            CHECK(VAPI_poll_cq(e.hca, e.scq, &wc) == VAPI_OK);
            CHECK(wc.id == 10 + k && wc.status == VAPI_WR_FLUSH_ERR);
        }
        VOK(VAPI_deregister_mr(e.hca, e.mr));
        VOK(VAPI_destroy_cq(e.hca, e.scq));
        VOK(VAPI_destroy_cq(e.hca, e.rcq));
        VOK(VAPI_dealloc_pd(e.hca, e.pd));
        VOK(EVAPI_release_hca_hndl(e.hca));
        free(e.mem);
        return;
    }
    VAPI_wc_desc_t wc = wait_wc(&e, e.rcq);
    char why[256];
    VOK(EVAPI_query_qp_error(e.hca, e.qp, why, sizeof why));
    CHECK(wc.id == 5 && wc.status == VAPI_LOC_LEN_ERR);
    printf("  truncated: %s\n", why);
    CHECK(strstr(why, "larger than the 16-byte receive buffer"));
    post_recv_expect(&e, VAPI_OK);   /* taken in error, and flushed */
    wc = wait_wc(&e, e.rcq);
    CHECK(wc.id == 0 && wc.status == VAPI_WR_FLUSH_ERR);
    sync_peer();
    close_end(&e);
}

static void both(int sender)
{
    run(sender, 20000);
    run_truncation(sender);
}

int main(void)
{
    for (int i = 0; i < FABRIC_PROVIDERS; i++) {
        printf("%s\n", fabric_select(i, ""));
        run_pair(both);
    }
    printf("test_fabric_qp: ok\n");
    return 0;
}
