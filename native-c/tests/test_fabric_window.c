/*
 * What libaldeiafabric lets libfabric hold for a receiver, over shm and tcp (through ofi_rxm),
 * with 32 KiB blocks (above ofi_rxm's 16 KiB eager limit: rendezvous messages, which the
 * receiver reads from the sender when a receive matches) and peer_timeout = 1000 ms:
 *
 *  - a data message never waits in libfabric as unexpected: a receiver that posted more
 *    receives than the provider takes at once (ofi_rxm's rx_size is 32 here) and does not
 *    poll, whose sender then destroys its queue pair (or, over tcp, whose sender's process
 *    ends), later reads what arrived, in order, then an error, and does not crash. libfabric 1.17's ofi_rxm, when a receive matches an
 *    unexpected rendezvous message whose connection has closed since, reads through the
 *    connection's NULL endpoint: SIGSEGV at libfabric.so.1+0xafe00 (rxm_rndv_xfer_read ->
 *    fi_readv) inside fi_trecv.
 *  - a peer's destroy is seen at once (its goodbye), not after peer_timeout (10 s in this
 *    part): a receiver that reads what the peer sent before, then blocks, gets an error with
 *    "the peer destroyed its queue pair" within a second of the destroy;
 *  - the receive window: a reader that keeps 8 receives posted and has a window of 64 blocks
 *    (max_recv_wr) lets a writer write 64 blocks (and the 8 its CQ took) while it reads
 *    nothing, no more; it then reads all 100 blocks in order and intact (most copied out of
 *    the library's spill buffers);
 *  - what waits in spill buffers is read after the writer's destroy, then the destroy, even
 *    when the reader starts after peer_timeout;
 *  - a 4 MiB echo whose client writes all before it reads completes (1 MiB send rings, 5 MiB
 *    windows, 8 receives posted), as over TCP; with credit for posted receives only it hung.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_util.h"

#define BLOCK   32768u
#define BLOCKS  64u

struct side_res {
    VAPI_hca_hndl_t hca;
    VAPI_pd_hndl_t  pd;
    VAPI_cq_hndl_t  scq, rcq;
    VAPI_qp_hndl_t  qp;
    VAPI_qp_prop_t  prop;
    uint8_t        *mem;   /* BLOCKS blocks */
    VAPI_mr_hndl_t  mr;
    uint32_t        lkey;
};

/* A queue pair of max_send_wr and max_recv_wr `wr` (the receive window in blocks) and `blocks`
 * registered blocks. */
static void open_side_wr(struct side_res *r, uint32_t rcq_entries, uint32_t wr, uint32_t blocks)
{
    uint32_t n;
    VOK(EVAPI_get_hca_hndl(hca_id, &r->hca));
    VOK(VAPI_alloc_pd(r->hca, &r->pd));
    VOK(VAPI_create_cq(r->hca, wr + 1, &r->scq, &n));
    VOK(VAPI_create_cq(r->hca, rcq_entries, &r->rcq, &n));
    VAPI_qp_init_attr_t a = { .sq_cq_hndl = r->scq, .rq_cq_hndl = r->rcq, .max_send_wr = wr, .max_recv_wr = wr };
    VOK(VAPI_create_qp(r->hca, &a, &r->qp, &r->prop));
    size_t bytes = (size_t)BLOCK * blocks;
    r->mem = aligned_alloc(4096, bytes);
    CHECK(r->mem);
    memset(r->mem, 0, bytes);
    VOK(VAPI_register_mr(r->hca, r->pd, (uint64_t)(uintptr_t)r->mem, bytes, &r->mr, &r->lkey));
}

static void open_side(struct side_res *r, uint32_t rcq_entries)
{
    open_side_wr(r, rcq_entries, BLOCKS, BLOCKS);
}

static void connect_side(struct side_res *r)
{
    struct end e = { .hca = r->hca, .qp = r->qp, .prop = r->prop };
    connect_end(&e);
}

static void close_side(struct side_res *r, int qp_gone)
{
    if (!qp_gone)
        VOK(VAPI_destroy_qp(r->hca, r->qp));
    VAPI_wc_desc_t wc;
    while (VAPI_poll_cq(r->hca, r->scq, &wc) == VAPI_OK || VAPI_poll_cq(r->hca, r->rcq, &wc) == VAPI_OK)
        ;
    VOK(VAPI_deregister_mr(r->hca, r->mr));
    VOK(VAPI_destroy_cq(r->hca, r->scq));
    VOK(VAPI_destroy_cq(r->hca, r->rcq));
    VOK(VAPI_dealloc_pd(r->hca, r->pd));
    VOK(EVAPI_release_hca_hndl(r->hca));
    free(r->mem);
}

static uint8_t pattern(uint32_t k, uint32_t j)
{
    return (uint8_t)(k * 13 + j * 5 + 1);
}

static void post_block_recv(struct side_res *r, uint32_t k)
{
    VAPI_rr_desc_t d = { .id = k, .opcode = VAPI_RECEIVE, .addr = (uint64_t)(uintptr_t)(r->mem + (size_t)k * BLOCK),
                         .len = BLOCK, .lkey = r->lkey };
    VOK(VAPI_post_rr(r->hca, r->qp, &d));
}

static void post_block_send(struct side_res *r, uint32_t k)
{
    uint8_t *b = r->mem + (size_t)k * BLOCK;
    for (uint32_t j = 0; j < BLOCK; j++)
        b[j] = pattern(k, j);
    VAPI_sr_desc_t d = { .id = k, .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)b, .len = BLOCK,
                         .lkey = r->lkey, .comp_type = VAPI_SIGNALED };
    VOK(VAPI_post_sr(r->hca, r->qp, &d));
}

/* Sends blocks 0..n-1 and waits until every one completed well. */
static void send_blocks_and_wait(struct side_res *r, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        post_block_send(r, k);
    VAPI_wc_desc_t wc;
    for (uint32_t k = 0; k < n; k++) {
        VOK(EVAPI_poll_cq_block(r->hca, r->scq, POLL_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS);
    }
}

/* Receives block k in order; 0 when the completion is an error instead. */
static int receive_block(struct side_res *r, uint32_t k, uint32_t timeout_usec)
{
    VAPI_wc_desc_t wc;
    VOK(EVAPI_poll_cq_block(r->hca, r->rcq, timeout_usec, &wc));
    if (wc.status != VAPI_SUCCESS)
        return 0;
    CHECK(wc.id == k && wc.byte_len == BLOCK);
    const uint8_t *b = r->mem + (size_t)k * BLOCK;
    for (uint32_t j = 0; j < BLOCK; j++)
        CHECK(b[j] == pattern(k, j));
    return 1;
}

static int sender_dies;   /* the sender's process ends without destroying anything (no goodbye) */

/* The sender posts every block at once and leaves after 1.5 s, whatever completed (destroys
 * its queue pair, or, with sender_dies, its process ends: the sender is then the child); the
 * receiver posted all its receives and polls nothing until the sender is gone (its keeper
 * progresses it meanwhile, into a receive CQ of 8 entries). */
static void sender_leaves(int parent)
{
    int sender = sender_dies ? !parent : parent;
    struct side_res r;
    open_side(&r, 8);
    if (!sender)
        for (uint32_t k = 0; k < BLOCKS; k++)
            post_block_recv(&r, k);
    connect_side(&r);
    if (sender) {
        for (uint32_t k = 0; k < BLOCKS; k++)
            post_block_send(&r, k);
        uint32_t done = 0;
        VAPI_wc_desc_t wc;
        for (int i = 0; i < 15; i++)   /* 1.5 s of progress: the receiver reads what matched */
            while (EVAPI_poll_cq_block(r.hca, r.scq, 100000, &wc) == VAPI_OK)
                done += wc.status == VAPI_SUCCESS;
        printf("  sender: %u of %u sends completed, then %s\n", done, BLOCKS, sender_dies ? "died" : "destroyed");
        if (sender_dies) {
            fflush(stdout);
            write_all("d", 1);
            _exit(0);   /* the kernel closes its sockets: the receiver's provider sees the connection go */
        }
        VOK(VAPI_destroy_qp(r.hca, r.qp));
        sync_peer();
        close_side(&r, 1);
        return;
    }
    if (sender_dies) {
        char c;
        read_all(&c, 1);
    } else {
        sync_peer();
    }
    usleep(500 * 1000);   /* the sender's connection closes here; the keeper sees it */
    uint32_t got = 0;
    while (got < BLOCKS && receive_block(&r, got, POLL_USEC))
        got++;
    char why[256];
    VOK(EVAPI_query_qp_error(r.hca, r.qp, why, sizeof why));
    printf("  receiver: %u blocks in order, then: %s\n", got, got < BLOCKS ? why : "(all)");
    CHECK(got > 0);
    close_side(&r, 0);
}

#define WIN    64u    /* the reader's max_recv_wr: its receive window in blocks */
#define POSTED 8u     /* receives the reader keeps posted */
#define STREAM 100u   /* blocks the writer writes: more than the window */

/* Receive number k into buffer k % POSTED. Once the peer destroyed its queue pair and all it
 * sent is in completions, the queue pair is in error and the receive completes flushed, after
 * those (peer_gone). */
static void post_into(struct side_res *r, uint32_t k)
{
    VAPI_rr_desc_t d = { .id = k, .opcode = VAPI_RECEIVE,
                         .addr = (uint64_t)(uintptr_t)(r->mem + (size_t)(k % POSTED) * BLOCK), .len = BLOCK,
                         .lkey = r->lkey };
    VOK(VAPI_post_rr(r->hca, r->qp, &d));
}

/* Reads blocks 0..n-1 in order, keeping POSTED receives posted. */
static void read_blocks(struct side_res *r, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        VAPI_wc_desc_t wc;
        VOK(EVAPI_poll_cq_block(r->hca, r->rcq, POLL_USEC, &wc));
        if (wc.status != VAPI_SUCCESS) {
            char why[256];
            VOK(EVAPI_query_qp_error(r->hca, r->qp, why, sizeof why));
            fprintf(stderr, "block %u: status %u: %s\n", k, wc.status, why);
            exit(1);
        }
        CHECK(wc.id == k && wc.byte_len == BLOCK);
        const uint8_t *b = r->mem + (size_t)(k % POSTED) * BLOCK;
        for (uint32_t j = 0; j < BLOCK; j++)
            CHECK(b[j] == pattern(k, j));
        post_into(r, k + POSTED);
    }
}

/* Reads block k, next in order, and reposts its buffer for block k + POSTED. */
static void read_blocks_from(struct side_res *r, uint32_t k)
{
    VAPI_wc_desc_t wc;
    VOK(EVAPI_poll_cq_block(r->hca, r->rcq, POLL_USEC, &wc));
    CHECK(wc.status == VAPI_SUCCESS && wc.id == k && wc.byte_len == BLOCK);
    const uint8_t *b = r->mem + (size_t)(k % POSTED) * BLOCK;
    for (uint32_t j = 0; j < BLOCK; j++)
        CHECK(b[j] == pattern(k, j));
    post_into(r, k + POSTED);
}

/* Within 2 s the queue pair says its peer destroyed its own; receives still posted end with
 * an error (there may be none: all the peer sent was read). */
static void peer_gone(struct side_res *r)
{
    char why[256] = "";
    for (int i = 0; i < 100 && !strstr(why, "the peer destroyed its queue pair"); i++) {
        VAPI_wc_desc_t wc;
        if (EVAPI_poll_cq_block(r->hca, r->rcq, 20000, &wc) == VAPI_OK)
            CHECK(wc.status != VAPI_SUCCESS);
        VOK(EVAPI_query_qp_error(r->hca, r->qp, why, sizeof why));
    }
    CHECK(strstr(why, "the peer destroyed its queue pair"));
}

/* A reader with POSTED receives posted and a window of WIN blocks reads nothing for 1.5 s: the
 * writer gets WIN blocks (and those the reader's CQ took) beyond what it read, no more; then
 * the reader reads all STREAM blocks, in order, intact, and after them the writer's destroy. */
static void silent_reader(int sender)
{
    struct side_res r;
    if (sender) {
        open_side_wr(&r, 8, 2 * STREAM, STREAM);
    } else {
        open_side_wr(&r, WIN, WIN, POSTED);
        for (uint32_t k = 0; k < POSTED; k++)
            post_into(&r, k);
    }
    connect_side(&r);
    if (sender) {
        for (uint32_t k = 0; k < STREAM; k++)
            post_block_send(&r, k);
        uint32_t done = 0;
        VAPI_wc_desc_t wc;
        for (int i = 0; i < 15; i++)
            while (EVAPI_poll_cq_block(r.hca, r.scq, 100000, &wc) == VAPI_OK) {
                CHECK(wc.status == VAPI_SUCCESS);
                done++;
            }
        printf("  writer: %u of %u blocks went before the silent reader read (window %u, %u posted)\n", done, STREAM,
               WIN, POSTED);
        CHECK(done >= WIN && done <= WIN + POSTED);
        sync_peer();
        while (done < STREAM) {
            VOK(EVAPI_poll_cq_block(r.hca, r.scq, POLL_USEC, &wc));
            CHECK(wc.status == VAPI_SUCCESS);
            done++;
        }
        sync_peer();
        VOK(VAPI_destroy_qp(r.hca, r.qp));
        sync_peer();
        close_side(&r, 1);
        return;
    }
    sync_peer();
    read_blocks(&r, STREAM);
    sync_peer();
    sync_peer();   /* the writer destroyed */
    peer_gone(&r);
    close_side(&r, 0);
}

/* The writer writes 40 blocks, sees them all complete (most wait in the reader's spill
 * buffers) and destroys its queue pair; the reader, 1.5 s later (peer_timeout is 1 s: a peer
 * that said goodbye is not given up for its silence), still reads all 40, then the destroy. */
static void read_after_goodbye(int sender)
{
    struct side_res r;
    if (sender) {
        open_side_wr(&r, 8, 64, 40);
    } else {
        open_side_wr(&r, WIN, WIN, POSTED);
        for (uint32_t k = 0; k < POSTED; k++)
            post_into(&r, k);
    }
    connect_side(&r);
    if (sender) {
        send_blocks_and_wait(&r, 40);
        VOK(VAPI_destroy_qp(r.hca, r.qp));
        sync_peer();
        close_side(&r, 1);
        return;
    }
    sync_peer();
    usleep(1500 * 1000);   /* the keeper took the goodbye; longer than peer_timeout (1 s here) */
    read_blocks(&r, 40);
    peer_gone(&r);
    printf("  reader: 40 blocks after the writer's destroy, then its goodbye\n");
    close_side(&r, 0);
}


#define ECHO_BLOCKS 128u   /* 4 MiB */
#define ECHO_WIN    160u   /* max_recv_wr: a 5 MiB window */
#define RING        32u    /* send slots, 1 MiB: a slot is written again once its send completed */

/* Block k as a send from ring slot k % RING (buffers POSTED.. of the area), waiting for the
 * oldest send's completion when the ring is full (every send signalled). */
static void ring_send(struct side_res *r, uint32_t k)
{
    VAPI_wc_desc_t wc;
    if (k >= RING) {
        VOK(EVAPI_poll_cq_block(r->hca, r->scq, POLL_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS && wc.id == k - RING);
    }
    uint8_t *b = r->mem + (size_t)(POSTED + k % RING) * BLOCK;
    for (uint32_t j = 0; j < BLOCK; j++)
        b[j] = pattern(k, j);
    VAPI_sr_desc_t d = { .id = k, .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)b, .len = BLOCK,
                         .lkey = r->lkey, .comp_type = VAPI_SIGNALED };
    VOK(VAPI_post_sr(r->hca, r->qp, &d));
}

/* A 4 MiB echo whose client writes it all before it reads (the server echoes each block as it
 * reads it, from one thread): each side's writes block on a 1 MiB ring, so the echo completes
 * only if the two windows hold what neither reads meanwhile; with credit for posted receives
 * only (8 here) it deadlocked. */
static void echo_4mib(int client)
{
    struct side_res r;
    open_side_wr(&r, ECHO_WIN, ECHO_WIN, POSTED + RING);
    for (uint32_t k = 0; k < POSTED; k++)
        post_into(&r, k);
    connect_side(&r);
    double t0 = fabric_now_s();
    if (client) {
        for (uint32_t k = 0; k < ECHO_BLOCKS; k++)
            ring_send(&r, k);
        read_blocks(&r, ECHO_BLOCKS);
        printf("  4 MiB written, then its echo read: %.0f ms\n", (fabric_now_s() - t0) * 1e3);
    } else {
        for (uint32_t k = 0; k < ECHO_BLOCKS; k++) {
            read_blocks_from(&r, k);
            ring_send(&r, k);
        }
    }
    VAPI_wc_desc_t wc;
    for (uint32_t k = ECHO_BLOCKS - RING; k < ECHO_BLOCKS; k++) {
        VOK(EVAPI_poll_cq_block(r.hca, r.scq, POLL_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS && wc.id == k);
    }
    sync_peer();
    close_side(&r, 0);
}

/* The sender sends 8 blocks, waits for them, pauses 300 ms and destroys its queue pair; the
 * receiver reads the 8 and is blocked in its next poll when the destroy comes. */
static void peer_destroys(int sender)
{
    struct side_res r;
    open_side(&r, BLOCKS);
    if (!sender)
        for (uint32_t k = 0; k < 16; k++)
            post_block_recv(&r, k);
    connect_side(&r);
    if (sender) {
        send_blocks_and_wait(&r, 8);
        sync_peer();
        usleep(300 * 1000);
        double t0 = fabric_now_s();
        VOK(VAPI_destroy_qp(r.hca, r.qp));
        printf("  sender: destroyed in %.1f ms\n", (fabric_now_s() - t0) * 1e3);
        write_all(&t0, sizeof t0);
        sync_peer();
        close_side(&r, 1);
        return;
    }
    for (uint32_t k = 0; k < 8; k++)
        CHECK(receive_block(&r, k, POLL_USEC));
    sync_peer();
    CHECK(!receive_block(&r, 8, POLL_USEC));   /* blocked here when the peer destroys */
    double t1 = fabric_now_s(), t0;
    read_all(&t0, sizeof t0);
    char why[256];
    VOK(EVAPI_query_qp_error(r.hca, r.qp, why, sizeof why));
    printf("  receiver: 8 blocks, then after the destroy %.1f ms: %s\n", (t1 - t0) * 1e3, why);
    CHECK(strstr(why, "the peer destroyed its queue pair"));
    CHECK(t1 - t0 < 1.0);
    sync_peer();
    close_side(&r, 0);
}

int main(void)
{
    /* ofi_rxm takes 32 posted receives per endpoint (default 2048), so that 64 exceed it */
    setenv("FI_OFI_RXM_RX_SIZE", "32", 1);
    /* and keeps its own eager limit, which the library would raise to the mtu (fab_hca.c):
     * 32 KiB blocks go by rendezvous, as blocks above 64 KiB do in Aldeia */
    setenv("FI_OFI_RXM_EAGER_LIMIT", "16384", 1);
    fabric_mtu = BLOCK;
    for (int i = 0; i < FABRIC_PROVIDERS; i++) {
        printf("%s\n", fabric_select(i, ",peer_timeout=1000"));
        run_pair(sender_leaves);
        if (i == 1) {   /* tcp: a process that ends leaves nothing behind (shm: its endpoint objects) */
            printf("  the sender dies instead\n");
            sender_dies = 1;
            run_pair(sender_leaves);
            sender_dies = 0;
        }
        printf("%s\n", fabric_select(i, ""));
        run_pair(peer_destroys);
        run_pair(silent_reader);
        fabric_select(i, ",peer_timeout=1000");
        run_pair(read_after_goodbye);
        fabric_select(i, "");
        run_pair(echo_4mib);
    }
    printf("test_fabric_window: ok\n");
    return 0;
}
