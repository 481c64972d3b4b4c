/*
 * MicroVAPI's flow control and scale, between forked processes of a static DECK run, over tcp
 * and over sci:
 *  - window: a writer whose peer posts no receive gets completions for what the peer's window
 *    holds and no more (its requests wait, as a TCP writer blocks); once the peer reads, the
 *    rest completes, each window's credit waking the writer, and every byte arrives in order;
 *  - receives posted in advance: the reader posts more receives than the window holds, then only
 *    polls; the data handed straight into them must still open the writer's window (the credit
 *    goes from the engine's send thread, not from a later post), each time with a wake-up;
 *  - a writer whose next block does not fit the room its window leaves (blocks of 45 000 bytes
 *    into a window of 128 KiB) gets every credit with a wake-up, however far short it stopped;
 *  - many queue pairs: 2000 connected pairs between two processes, each carrying a message
 *    both ways, with the process's thread count unchanged by them (no thread per queue pair);
 *  - over tcp, a write of several messages goes to the kernel from the poster's thread
 *    (qp_send.c), and every byte arrives in order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "util_vapi.h"
#include "../microvapi/mv_internal.h"   /* MV_WINDOW_DEFAULT */

/* Bytes this thread handed to the kernel through sendmsg, which is how DECK tcp writes a plain
 * connection: the executable's definition comes before libc's, so a test can tell which thread
 * posted a message. */
static _Thread_local size_t sent_by_thread;

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    ssize_t n = syscall(SYS_sendmsg, fd, msg, flags);
    if (n > 0)
        sent_by_thread += (size_t)n;
    return n;
}

#define MTU         512u
#define HCA_ID      "microvapi:mtu=512"
#define WAIT_USEC   20000000u
#define WINDOW_BLKS 128u                 /* max_recv_wr: a window of 128 x 512 = 64 KiB */
#define LIST        32u                  /* blocks per list, the last one signalled */
#define LISTS       64u                  /* 64 lists of 16 KiB: 1 MiB, 16 windows */

static uint8_t byte_at(uint32_t block, uint32_t j) { return (uint8_t)(block * 13 + j * 7 + 1); }

/* Threads of this process, from /proc. */
static int threads_now(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* Completions until `last` lists completed or none came for ms; each must be the next
 * signalled list, in order. */
static uint32_t completions_until(struct conn *c, uint32_t next, uint32_t last, int ms)
{
    VAPI_wc_desc_t wc;
    VAPI_ret_t r = VAPI_OK;
    while (next < last && (r = EVAPI_poll_cq_block(c->hca, c->scq, (uint32_t)ms * 1000u, &wc)) == VAPI_OK) {
        CHECK(wc.status == VAPI_SUCCESS && wc.id == (uint64_t)next * LIST + LIST - 1);
        next++;
    }
    CHECK(r == VAPI_OK || r == VAPI_ETIMEDOUT);
    return next;
}

static void write_all(struct conn *c)
{
    uint8_t *region = malloc((size_t)LISTS * LIST * MTU);
    CHECK(region != NULL);
    for (uint32_t l = 0; l < LISTS; l++) {
        VAPI_sr_desc_t list[LIST];
        for (uint32_t i = 0; i < LIST; i++) {
            uint32_t b = l * LIST + i;
            uint8_t *p = region + (size_t)b * MTU;
            for (uint32_t j = 0; j < MTU; j++)
                p[j] = byte_at(b, j);
            list[i] = (VAPI_sr_desc_t){ .id = b, .opcode = VAPI_SEND, .addr = (uintptr_t)p, .len = MTU,
                                        .comp_type = i == LIST - 1 ? VAPI_SIGNALED : VAPI_UNSIGNALED };
        }
        VOK(EVAPI_post_sr_list(c->hca, c->qp, LIST, list));
    }
    /* The peer reads nothing yet: what its window holds completes, then nothing more. */
    uint32_t done = completions_until(c, 0, LISTS, 500);
    uint32_t window_lists = WINDOW_BLKS / LIST;
    if (done != window_lists)
        fprintf(stderr, "%u lists completed with the peer's window of %u\n", done, window_lists);
    CHECK(done == window_lists);
    CHECK_OK(deck_barrier());   /* 1: the peer may read now */
    /* Each window's credit must wake this process: one that arrived without a wake-up would
     * be found only by the receive thread's periodic look, some 200 ms later (credits that
     * went quietly, tried, failed here); a completion normally follows within a millisecond. */
    done = completions_until(c, done, LISTS, 100);
    CHECK(done == LISTS);
    free(region);
}

static void read_all(struct conn *c)
{
    CHECK_OK(deck_barrier());   /* 1 */
    uint8_t bufs[8][MTU];
    for (uint32_t b = 0; b < LISTS * LIST; b++) {
        VAPI_rr_desc_t rr = { .id = b, .opcode = VAPI_RECEIVE, .addr = (uintptr_t)bufs[b % 8], .len = MTU };
        VOK(VAPI_post_rr(c->hca, c->qp, &rr));
        VAPI_wc_desc_t wc;
        VOK(EVAPI_poll_cq_block(c->hca, c->rcq, WAIT_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS && wc.id == b && wc.byte_len == MTU);
        for (uint32_t j = 0; j < MTU; j++)
            CHECK(bufs[b % 8][j] == byte_at(b, j));
    }
}

static int window_node(int id, int n, void *arg)
{
    struct conn c;
    open_conn_on(&c, HCA_ID, 0, WINDOW_BLKS);
    uint32_t peer_qp, peer_id;
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, 0, 0);
    if (id == 0)
        write_all(&c);
    else
        read_all(&c);
    CHECK_OK(deck_barrier());
    close_qp(&c);
    close_rest(&c);
    return 0;
}

/* Blocks of MTU posted ahead: a quarter more than the default window (10 MiB of 8 MiB), so the
 * writer gets through only on the credits the data handed into them opens. */
#define AHEAD (MV_WINDOW_DEFAULT / MTU + MV_WINDOW_DEFAULT / MTU / 4)
/* The writer's requests that complete: every 1024th (512 KiB) and the last. */
static int signalled_ahead(uint32_t b) { return b % 1024 == 1023 || b == AHEAD - 1; }

static int posted_ahead_node(int id, int n, void *arg)
{
    struct conn c;
    open_conn_on(&c, HCA_ID, 0, 0);   /* max_recv_wr 0: any number posted, the default window */
    uint32_t peer_qp, peer_id;
    exchange(id, &c, &peer_qp, &peer_id);
    uint8_t *region = malloc((size_t)AHEAD * MTU);
    CHECK(region != NULL);
    if (id == 1) {
        VAPI_rr_desc_t *rr = calloc(AHEAD, sizeof *rr);
        CHECK(rr != NULL);
        for (uint32_t b = 0; b < AHEAD; b++)
            rr[b] = (VAPI_rr_desc_t){ .id = b, .opcode = VAPI_RECEIVE, .addr = (uintptr_t)(region + (size_t)b * MTU),
                                      .len = MTU };
        VOK(EVAPI_post_rr_list(c.hca, c.qp, AHEAD, rr));
        free(rr);
    }
    connect_conn(&c, peer_qp, peer_id, 0, 0);
    VAPI_wc_desc_t wc;
    if (id == 0) {
        for (uint32_t b = 0; b < AHEAD; b++) {
            memset(region + (size_t)b * MTU, (int)(b & 0xff), MTU);
            VAPI_sr_desc_t sr = { .id = b, .opcode = VAPI_SEND, .addr = (uintptr_t)(region + (size_t)b * MTU),
                                  .len = MTU, .comp_type = signalled_ahead(b) ? VAPI_SIGNALED : VAPI_UNSIGNALED };
            VOK(VAPI_post_sr(c.hca, c.qp, &sr));
        }
        /* No credit may wait in this process's mailbox for the receive thread's periodic look
         * (some 200 ms): each part of the stream completes within 100 ms of the one before. */
        for (uint32_t b = 0; b < AHEAD; b++) {
            if (!signalled_ahead(b))
                continue;
            VOK(EVAPI_poll_cq_block(c.hca, c.scq, 100000, &wc));
            CHECK(wc.status == VAPI_SUCCESS && wc.id == b);
        }
    } else {
        for (uint32_t b = 0; b < AHEAD; b++) {
            VOK(EVAPI_poll_cq_block(c.hca, c.rcq, WAIT_USEC, &wc));
            CHECK(wc.status == VAPI_SUCCESS && wc.id == b && wc.byte_len == MTU);
            CHECK(region[(size_t)b * MTU] == (uint8_t)(b & 0xff));
        }
    }
    CHECK_OK(deck_barrier());
    close_qp(&c);
    close_rest(&c);
    free(region);
    return 0;
}

/* A window of two 64 KiB blocks (max_recv_wr 2) and blocks of 45 000 bytes: two fit, and the
 * writer stops 41 072 bytes short of its edge, more than a quarter of the window. */
#define GAP_HCA  "microvapi:mtu=65536"
#define GAP_BLK  45000u
#define GAP_BLKS 40u

static uint8_t gap_byte(uint32_t b, uint32_t j) { return (uint8_t)(b * 7 + j * 13 + 3); }

static int gap_node(int id, int n, void *arg)
{
    struct conn c;
    open_conn_on(&c, GAP_HCA, 0, 2);
    uint32_t peer_qp, peer_id;
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, 0, 0);
    /* the writer's blocks, each in its own place; one receive buffer for the reader */
    uint8_t *region = malloc(id == 0 ? (size_t)GAP_BLKS * GAP_BLK : 65536);
    CHECK(region != NULL);
    VAPI_wc_desc_t wc;
    if (id == 0) {
        for (uint32_t b = 0; b < GAP_BLKS; b++) {
            uint8_t *p = region + (size_t)b * GAP_BLK;
            for (uint32_t j = 0; j < GAP_BLK; j++)
                p[j] = gap_byte(b, j);
            VAPI_sr_desc_t sr = { .id = b, .opcode = VAPI_SEND, .addr = (uintptr_t)p, .len = GAP_BLK,
                                  .comp_type = VAPI_SIGNALED };
            VOK(VAPI_post_sr(c.hca, c.qp, &sr));
        }
        CHECK_OK(deck_barrier());   /* 1: the peer reads */
        /* Every credit that opens the window wakes this process: none waits for the receive
         * thread's periodic look, some 200 ms. (Credits that went quietly while the data was
         * more than a quarter of the window short of the last edge told with a wake-up,
         * tried, failed here: this writer stops 41 072 bytes short.) */
        for (uint32_t b = 0; b < GAP_BLKS; b++) {
            VOK(EVAPI_poll_cq_block(c.hca, c.scq, 100000, &wc));
            CHECK(wc.status == VAPI_SUCCESS && wc.id == b);
        }
    } else {
        CHECK_OK(deck_barrier());   /* 1 */
        for (uint32_t b = 0; b < GAP_BLKS; b++) {
            VAPI_rr_desc_t rr = { .id = b, .opcode = VAPI_RECEIVE, .addr = (uintptr_t)region, .len = 65536 };
            VOK(VAPI_post_rr(c.hca, c.qp, &rr));
            VOK(EVAPI_poll_cq_block(c.hca, c.rcq, WAIT_USEC, &wc));
            CHECK(wc.status == VAPI_SUCCESS && wc.id == b && wc.byte_len == GAP_BLK);
            for (uint32_t j = 0; j < GAP_BLK; j++)
                CHECK(region[j] == gap_byte(b, j));
        }
    }
    CHECK_OK(deck_barrier());
    close_qp(&c);
    close_rest(&c);
    free(region);
    return 0;
}

#define WHOLE_HCA   "microvapi:mtu=65536"
#define WHOLE_BLK   65536u
#define WHOLE_BLKS  16u                  /* one list of 1 MiB: four tcp messages of 256 KiB */

static int whole_write_node(int id, int n, void *arg)
{
    struct conn c;
    open_conn_on(&c, WHOLE_HCA, 0, 0);   /* the default window (8 MiB) holds the whole write */
    uint32_t peer_qp, peer_id;
    exchange(id, &c, &peer_qp, &peer_id);
    uint8_t *region = malloc((size_t)WHOLE_BLKS * WHOLE_BLK);
    CHECK(region != NULL);
    VAPI_rr_desc_t rr = { .opcode = VAPI_RECEIVE, .len = WHOLE_BLK };
    for (uint32_t b = 0; b < WHOLE_BLKS; b++) {   /* the reader's buffers; the writer's first one */
        rr.id = b;
        rr.addr = (uintptr_t)(region + (size_t)b * WHOLE_BLK);
        if (id == 1 || b == 0)
            VOK(VAPI_post_rr(c.hca, c.qp, &rr));
    }
    connect_conn(&c, peer_qp, peer_id, 0, 0);
    VAPI_wc_desc_t wc;
    if (id == 0) {
        /* The reader's block comes after the window it told at its connect: ours is open. */
        VOK(EVAPI_poll_cq_block(c.hca, c.rcq, WAIT_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS && wc.id == 0);
        VAPI_sr_desc_t list[WHOLE_BLKS];
        for (uint32_t b = 0; b < WHOLE_BLKS; b++) {
            memset(region + (size_t)b * WHOLE_BLK, (int)(b + 1), WHOLE_BLK);
            list[b] = (VAPI_sr_desc_t){ .id = b, .opcode = VAPI_SEND, .addr = (uintptr_t)(region + (size_t)b * WHOLE_BLK),
                                        .len = WHOLE_BLK, .comp_type = b == WHOLE_BLKS - 1 ? VAPI_SIGNALED : VAPI_UNSIGNALED };
        }
        size_t before = sent_by_thread;
        VOK(EVAPI_post_sr_list(c.hca, c.qp, WHOLE_BLKS, list));
        size_t here = sent_by_thread - before;
        if (here < (size_t)WHOLE_BLKS * WHOLE_BLK)
            fprintf(stderr, "the poster sent %zu of the write's %u bytes itself\n", here, WHOLE_BLKS * WHOLE_BLK);
        CHECK(here >= (size_t)WHOLE_BLKS * WHOLE_BLK);
        VOK(EVAPI_poll_cq_block(c.hca, c.scq, WAIT_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS && wc.id == WHOLE_BLKS - 1);
    } else {
        static uint8_t hello = 1;   /* not in region: its blocks are posted for receiving */
        VAPI_sr_desc_t one = { .id = 0, .opcode = VAPI_SEND, .addr = (uintptr_t)&hello, .len = 1,
                               .comp_type = VAPI_SIGNALED };
        VOK(VAPI_post_sr(c.hca, c.qp, &one));
        VOK(EVAPI_poll_cq_block(c.hca, c.scq, WAIT_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS);
        for (uint32_t b = 0; b < WHOLE_BLKS; b++) {
            VOK(EVAPI_poll_cq_block(c.hca, c.rcq, WAIT_USEC, &wc));
            CHECK(wc.status == VAPI_SUCCESS && wc.id == b && wc.byte_len == WHOLE_BLK);
            for (uint32_t j = 0; j < WHOLE_BLK; j += 4093)
                CHECK(region[(size_t)b * WHOLE_BLK + j] == (uint8_t)(b + 1));
        }
    }
    CHECK_OK(deck_barrier());
    close_qp(&c);
    close_rest(&c);
    free(region);
    return 0;
}

#define PAIRS 2000

/* Both nodes open PAIRS queue pairs on one HCA (one CQ pair shared: a CQ per QP is not what
 * is tested), connect QP i to the peer's QP i, and send one message on each both ways. */
static int many_node(int id, int n, void *arg)
{
    int threads_before = -1;
    VAPI_hca_hndl_t hca;
    VAPI_cq_hndl_t scq, rcq;
    uint32_t entries;
    VOK(EVAPI_get_hca_hndl(HCA_ID, &hca));
    VOK(VAPI_create_cq(hca, 2 * PAIRS, &scq, &entries));
    VOK(VAPI_create_cq(hca, 2 * PAIRS, &rcq, &entries));
    VAPI_qp_hndl_t *qps = calloc(PAIRS, sizeof *qps);
    unsigned *nums = calloc(PAIRS, sizeof *nums);
    CHECK(qps && nums);
    VAPI_qp_init_attr_t init = { .sq_cq_hndl = scq, .rq_cq_hndl = rcq };
    for (int i = 0; i < PAIRS; i++) {
        VAPI_qp_prop_t prop;
        VOK(VAPI_create_qp(hca, &init, &qps[i], &prop));
        nums[i] = prop.qp_num;
    }
    exchange_uints(id, "many", nums, PAIRS);   /* the bootstrap: every qp_num each way */
    CHECK_OK(deck_barrier());
    threads_before = threads_now();   /* DECK, the engine and the connection to the peer are up */
    for (int i = 0; i < PAIRS; i++) {
        VAPI_qp_attr_t attr = { .qp_state = VAPI_RTS, .dest_qp_num = nums[i], .dest_id = (uint32_t)(1 - id) };
        VOK(VAPI_modify_qp(hca, qps[i], &attr));
    }
    CHECK_OK(deck_barrier());
    uint32_t *in = calloc(PAIRS, sizeof *in), *out = calloc(PAIRS, sizeof *out);
    CHECK(in && out);
    for (int i = 0; i < PAIRS; i++) {
        VAPI_rr_desc_t rr = { .id = (uint64_t)i, .opcode = VAPI_RECEIVE, .addr = (uintptr_t)&in[i], .len = 4 };
        VOK(VAPI_post_rr(hca, qps[i], &rr));
    }
    for (int i = 0; i < PAIRS; i++) {
        out[i] = (uint32_t)(i * 3 + id);
        VAPI_sr_desc_t sr = { .id = (uint64_t)i, .opcode = VAPI_SEND, .comp_type = VAPI_SIGNALED,
                              .addr = (uintptr_t)&out[i], .len = 4 };
        VOK(VAPI_post_sr(hca, qps[i], &sr));
    }
    int got_sent = 0, got_received = 0;
    for (VAPI_wc_desc_t wc; got_sent < PAIRS;) {
        VOK(EVAPI_poll_cq_block(hca, scq, WAIT_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS);
        got_sent++;
    }
    for (VAPI_wc_desc_t wc; got_received < PAIRS;) {
        VOK(EVAPI_poll_cq_block(hca, rcq, WAIT_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS && wc.byte_len == 4 && wc.id < PAIRS);
        CHECK(in[wc.id] == (uint32_t)(wc.id * 3 + (uint64_t)(1 - id)));   /* QP i's peer is QP i */
        got_received++;
    }
    int threads_after = threads_now();
    if (threads_after > threads_before)
        fprintf(stderr, "threads: %d with DECK up, %d with %d queue pairs\n", threads_before, threads_after, PAIRS);
    CHECK(threads_after <= threads_before);
    CHECK_OK(deck_barrier());
    for (int i = 0; i < PAIRS; i++)
        VOK(VAPI_destroy_qp(hca, qps[i]));
    VOK(VAPI_destroy_cq(hca, scq));
    VOK(VAPI_destroy_cq(hca, rcq));
    VOK(EVAPI_release_hca_hndl(hca));
    free(qps); free(nums); free(in); free(out);
    return 0;
}

int main(void)
{
    int failed = 0;
    static const char *const transports[] = { "tcp", "sci" };
    for (int t = 0; t < 2; t++) {
        char name[80];
        snprintf(name, sizeof name, "microvapi over %s: a peer's window", transports[t]);
        failed += util_run_test_on(transports[t], name, 2, window_node, NULL);
        snprintf(name, sizeof name, "microvapi over %s: receives posted beyond the window in advance", transports[t]);
        failed += util_run_test_on(transports[t], name, 2, posted_ahead_node, NULL);
        snprintf(name, sizeof name, "microvapi over %s: a writer stopped short of its edge", transports[t]);
        failed += util_run_test_on(transports[t], name, 2, gap_node, NULL);
        snprintf(name, sizeof name, "microvapi over %s: %d queue pairs, no thread each", transports[t], PAIRS);
        failed += util_run_test_on(transports[t], name, 2, many_node, NULL);
    }
    failed += util_run_test_on("tcp", "microvapi over tcp: a write of several messages goes from the poster",
                               2, whole_write_node, NULL);
    return failed ? 1 : 0;
}
