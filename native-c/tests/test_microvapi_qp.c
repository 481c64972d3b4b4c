/*
 * MicroVAPI queue pairs carrying data over DECK/TCP between forked processes (static DECK
 * runs made by util_run_nodes, which MicroVAPI reuses): streams in both directions at once
 * with lists of sends of every size 0..mtu, only the last of each list signalled; receive
 * buffers posted ahead; a buffer too small; a peer that dies; tear-down with receives
 * outstanding; coalesced messages (the wire format, blocks handed out a few at a time, a peer
 * dying with a message half handed out). Plus two QPs of one process connected to each other,
 * and a message rewritten while it is being handed out (engine.c dispatches messages where DECK
 * holds them, which for shared memory is memory the sender can still write).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util_deck.h"
#include "util_vapi.h"
#include "../microvapi/engine.h"   /* eng.msg: where this process's messages to itself are dispatched from */

#define MTU          512u
#define HCA_ID       "microvapi:mtu=512"
#define WAIT_USEC    20000000u   /* a completion that takes longer than this is a hang */

static void open_conn(struct conn *c, uint32_t max_send_wr, uint32_t max_recv_wr)
{
    open_conn_on(c, HCA_ID, max_send_wr, max_recv_wr);
}

/* ---- a stream of messages ---------------------------------------------------------------- */

#define STREAM_MSGS 1200
#define RECV_AHEAD  8

static uint32_t msg_size(int k)   { return (uint32_t)(k * 37) % (MTU + 1); }   /* 0..MTU */
static uint8_t msg_byte(int seed, int k, uint32_t j)
{
    return (uint8_t)(seed * 31 + k * 131 + (int)j * 7);
}

/* How a writer cuts the stream into lists, and how a reader waits for each message. */
enum write_style { LISTS_1_TO_7, BURSTS };
/* MAPPED_RING: the reader takes its completions from the mapped CQ ring (EVAPI_map_cq) as the
 * Java channel does, waiting with EVAPI_wait_cq (every other wait, and every re-post, through
 * a call block, as the Java binding makes them), and every 7th with VAPI_poll_cq: both
 * consumers of one ring, one after the other. */
enum read_style { BLOCKING, RACING_THE_DAEMON, MAPPED_RING };

struct stream {
    struct conn *c;
    int seed;
    enum write_style style;
};

/* BURSTS: a list of 40 (more than the sender posts inline, so a backlog goes to the daemon)
 * then three single sends that arrive while that backlog may still be queued. */
static int list_length(enum write_style style, int k)
{
    if (style == LISTS_1_TO_7)
        return 1 + k % 7;
    return k % 43 == 0 ? 40 : 1;
}

/* A call through this thread's bound call block (vapi.h), as the Java binding makes it; the
 * block is unbound again after it. */
static VAPI_ret_t bound_call(VAPI_ret_t (*call)(void), VAPI_hca_hndl_t hca, uint64_t handle, uint64_t list,
                             uint32_t count)
{
    EVAPI_call_t block = { .hca = hca, .handle = handle, .list = list, .count = count };
    VOK(EVAPI_bind_call_block(&block));
    VAPI_ret_t r = call();
    VOK(EVAPI_bind_call_block(NULL));
    return r;
}

/* Posts the stream in lists of 1..7 sends, only the last signalled, from its own thread (as
 * the Java writer does; every third list through a call block, as the Java binding posts) with
 * max_send_wr small enough to meet VAPI_EAGAIN; checks that every list gets exactly one
 * completion, in order. */
static void *write_stream(void *arg)
{
    struct stream *s = arg;
    struct conn *c = s->c;
    uint8_t *region = malloc((size_t)STREAM_MSGS * MTU);
    CHECK(region != NULL);
    VAPI_mr_hndl_t mr;
    uint32_t lkey;
    VOK(VAPI_register_mr(c->hca, c->pd, (uintptr_t)region, (uint64_t)STREAM_MSGS * MTU, &mr,
                         &lkey));
    int expect[STREAM_MSGS], posted_lists = 0, completed = 0;
    VAPI_wc_desc_t wc;
    for (int k = 0; k < STREAM_MSGS;) {
        int n = list_length(s->style, k);
        if (k + n > STREAM_MSGS)
            n = STREAM_MSGS - k;
        VAPI_sr_desc_t list[40];
        for (int i = 0; i < n; i++) {
            int m = k + i;
            uint8_t *p = region + (size_t)m * MTU;
            for (uint32_t j = 0; j < msg_size(m); j++)
                p[j] = msg_byte(s->seed, m, j);
            list[i] = (VAPI_sr_desc_t){ .id = (uint64_t)m, .opcode = VAPI_SEND,
                                        .comp_type = i == n - 1 ? VAPI_SIGNALED : VAPI_UNSIGNALED,
                                        .addr = (uintptr_t)p, .len = msg_size(m), .lkey = lkey };
        }
        VAPI_ret_t r = k % 3 == 0 ? bound_call(EVAPI_post_sr_bound, c->hca, c->qp, (uintptr_t)list, (uint32_t)n)
                       : n == 1 ? VAPI_post_sr(c->hca, c->qp, list)
                       : EVAPI_post_sr_list(c->hca, c->qp, (uint32_t)n, list);
        if (r == VAPI_EAGAIN) {   /* queue full: wait for a completion, nothing was posted */
            VOK(EVAPI_poll_cq_block(c->hca, c->scq, WAIT_USEC, &wc));
            CHECK(completed < posted_lists && wc.id == (uint64_t)expect[completed]);
            CHECK(wc.status == VAPI_SUCCESS && wc.opcode == VAPI_SEND);
            CHECK(wc.byte_len == msg_size(expect[completed]));
            completed++;
            continue;
        }
        VOK(r);
        expect[posted_lists++] = k + n - 1;
        k += n;
    }
    while (completed < posted_lists) {
        VAPI_wc_desc_t wcs[4];
        uint32_t got;
        VOK(EVAPI_poll_cq_block(c->hca, c->scq, WAIT_USEC, &wcs[0]));
        VOK(EVAPI_poll_cq_many(c->hca, c->scq, 3, wcs + 1, &got));
        for (uint32_t i = 0; i <= got; i++, completed++)
            CHECK(completed < posted_lists && wcs[i].id == (uint64_t)expect[completed]
                  && wcs[i].status == VAPI_SUCCESS);
    }
    VCHECK(VAPI_poll_cq(c->hca, c->scq, &wc), VAPI_CQ_EMPTY);   /* nothing for unsignalled */
    VOK(VAPI_deregister_mr(c->hca, mr));
    free(region);
    return NULL;
}

/* RACING_THE_DAEMON: now and then the reader stays away longer than the receive daemon's
 * grace (the daemon takes the turn and must give it back), or polls without blocking. */
/* The next completion of a mapped ring, as a consumer outside the library takes it. */
static int take_mapped(EVAPI_cq_ring_t *ring, VAPI_wc_desc_t *wc)
{
    uint32_t head = __atomic_load_n(&ring->head, __ATOMIC_RELAXED);
    if (__atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE) == head)
        return 0;
    const VAPI_wc_desc_t *entries = (const void *)((const char *)ring + EVAPI_CQ_RING_HEAD_BYTES);
    *wc = entries[head & (ring->cap - 1)];
    __atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
    return 1;
}

static void wait_mapped(struct conn *c, EVAPI_cq_ring_t *ring, int k, VAPI_wc_desc_t *wc)
{
    long t0 = util_now_ms();
    for (;;) {
        if (k % 7 == 0) {
            VAPI_ret_t r = VAPI_poll_cq(c->hca, c->rcq, wc);
            if (r == VAPI_OK)
                return;
            VCHECK(r, VAPI_CQ_EMPTY);
        } else if (take_mapped(ring, wc)) {
            return;
        }
        VAPI_ret_t r = k % 2 ? bound_call(EVAPI_wait_cq_bound, c->hca, c->rcq, 0, 100000)
                             : EVAPI_wait_cq(c->hca, c->rcq, 100000);
        CHECK(r == VAPI_OK || r == VAPI_ETIMEDOUT);
        CHECK(util_now_ms() - t0 < (long)(WAIT_USEC / 1000));
    }
}

static void wait_message(struct conn *c, int k, enum read_style style, VAPI_wc_desc_t *wc)
{
    if (style == RACING_THE_DAEMON && k % 100 < 10)
        util_sleep_ms(5);
    if (style == RACING_THE_DAEMON && k % 100 >= 10 && k % 100 < 30) {
        long t0 = util_now_ms();
        VAPI_ret_t r;
        while ((r = VAPI_poll_cq(c->hca, c->rcq, wc)) == VAPI_CQ_EMPTY) {
            CHECK(util_now_ms() - t0 < (long)(WAIT_USEC / 1000));
            usleep(50);
        }
        VOK(r);
        return;
    }
    VOK(EVAPI_poll_cq_block(c->hca, c->rcq, WAIT_USEC, wc));
}

/* Receives the stream with RECV_AHEAD buffers posted ahead; checks every byte and the order. */
static void read_stream(struct conn *c, int seed, enum read_style style)
{
    uint8_t *bufs = malloc((size_t)RECV_AHEAD * MTU);
    CHECK(bufs != NULL);
    VAPI_rr_desc_t rr[RECV_AHEAD];
    for (int i = 0; i < RECV_AHEAD; i++)
        rr[i] = (VAPI_rr_desc_t){ .id = (uint64_t)i, .opcode = VAPI_RECEIVE,
                                  .addr = (uintptr_t)(bufs + (size_t)i * MTU), .len = MTU };
    EVAPI_cq_ring_t *ring = NULL;
    if (style == MAPPED_RING) {
        VOK(EVAPI_map_cq(c->hca, c->rcq, &ring));
        CHECK(ring->cap >= 16 && (ring->cap & (ring->cap - 1)) == 0 && (uintptr_t)ring % 64 == 0);
    }
    VOK(EVAPI_post_rr_list(c->hca, c->qp, RECV_AHEAD, rr));
    for (int k = 0; k < STREAM_MSGS; k++) {
        VAPI_wc_desc_t wc;
        if (ring)
            wait_mapped(c, ring, k, &wc);
        else
            wait_message(c, k, style, &wc);
        CHECK(wc.id == (uint64_t)k && wc.status == VAPI_SUCCESS && wc.opcode == VAPI_RECEIVE);
        CHECK(wc.byte_len == msg_size(k));
        const uint8_t *p = bufs + (size_t)(k % RECV_AHEAD) * MTU;
        for (uint32_t j = 0; j < wc.byte_len; j++)
            if (p[j] != msg_byte(seed, k, j)) {
                fprintf(stderr, "message %d byte %u: got %u, want %u\n", k, j, p[j],
                        msg_byte(seed, k, j));
                exit(1);
            }
        if (k + RECV_AHEAD < STREAM_MSGS) {
            VAPI_rr_desc_t again = rr[k % RECV_AHEAD];
            again.id = (uint64_t)(k + RECV_AHEAD);
            VOK(ring ? bound_call(EVAPI_post_rr_bound, c->hca, c->qp, (uintptr_t)&again, 1)
                     : VAPI_post_rr(c->hca, c->qp, &again));
        }
    }
    free(bufs);
}

struct stream_test {
    enum write_style write;
    enum read_style read;
};

/* Both nodes write and read at the same time on one QP each. */
static int stream_node(int id, int n, void *arg)
{
    const struct stream_test *how = arg;
    struct conn c;
    uint32_t peer_qp, peer_id;
    open_conn(&c, 64, 0);
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, id == 0, 0);
    struct stream s = { .c = &c, .seed = id, .style = how->write };
    pthread_t writer;
    CHECK(pthread_create(&writer, NULL, write_stream, &s) == 0);
    read_stream(&c, (int)peer_id, how->read);
    CHECK(pthread_join(writer, NULL) == 0);
    CHECK_OK(deck_barrier());   /* both have read everything before either tears down */
    close_qp(&c);
    close_rest(&c);
    return 0;
}

/* Two QPs of one process connected to each other (two sockets of one JVM). */
static int loopback_node(int id, int n, void *arg)
{
    struct conn a, b;
    open_conn(&a, 0, 0);
    open_conn(&b, 0, 0);
    connect_conn(&a, b.prop.qp_num, (uint32_t)deck_node(), 1, MTU);
    connect_conn(&b, a.prop.qp_num, (uint32_t)deck_node(), 0, MTU);
    struct stream ab = { .c = &a, .seed = 5 }, ba = { .c = &b, .seed = 6 };
    pthread_t wa, wb;
    CHECK(pthread_create(&wa, NULL, write_stream, &ab) == 0);
    CHECK(pthread_create(&wb, NULL, write_stream, &ba) == 0);
    read_stream(&b, 5, BLOCKING);
    read_stream(&a, 6, BLOCKING);
    CHECK(pthread_join(wa, NULL) == 0);
    CHECK(pthread_join(wb, NULL) == 0);
    close_qp(&a);
    close_qp(&b);
    close_rest(&a);
    close_rest(&b);
    return 0;
}

/* ---- errors ------------------------------------------------------------------------------ */

static void post_recv(struct conn *c, uint64_t id, void *buf, uint32_t len);
static void expect_completion(struct conn *c, VAPI_cq_hndl_t cq, uint64_t id, uint32_t status,
                              uint32_t byte_len);

/* A message whose second record's length changes after the window counted it: the first
 * receive buffer lies over that length in the buffer the message is dispatched from, as a
 * sender writing into its shared segment meanwhile would change it. The queue pair fails; it
 * does not take the new length (here beyond the message) as a record. Two processes on sci:
 * a protocol-1 message (this one, 48 bytes) is the one still retrieved into the engine's
 * scratch message before it is handed out (longer ones and queued ones are handed in place). */
static int rewritten_node(int id, int n, void *arg)
{
    (void)n; (void)arg;
    struct conn c;
    uint32_t peer_qp, peer_id;
    open_conn(&c, 0, 0);
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, 1 - id, MTU);
    /* [head][len 8][8 bytes][len 16][16 bytes]: the first record's bytes land on "len 16" */
    int32_t forged = 100000;
    uint8_t first[8] = { 0 }, second[16] = { 0 };
    memcpy(first, &forged, sizeof forged);
    if (id == 0) {
        char *over_second_length = eng.msg.buf + MV_WIRE_HEAD + MV_WIRE_HEADER + sizeof first;
        post_recv(&c, 1, over_second_length, sizeof first);
        CHECK_OK(deck_barrier());                  /* posted before node 1 sends */
        expect_completion(&c, c.rcq, 1, VAPI_SUCCESS, sizeof first);
        uint8_t next[64];
        post_recv(&c, 2, next, sizeof next);
        VAPI_wc_desc_t wc;
        VOK(EVAPI_poll_cq_block(c.hca, c.rcq, WAIT_USEC, &wc));
        CHECK(wc.id == 2 && wc.status != VAPI_SUCCESS);   /* not the forged 100000-byte record */
        char why[256];
        VOK(EVAPI_query_qp_error(c.hca, c.qp, why, sizeof why));
        if (!strstr(why, "changed a message")) fprintf(stderr, "queue pair error: '%s'\n", why);
        CHECK(strstr(why, "changed a message") != NULL);
    } else {
        CHECK_OK(deck_barrier());
        VAPI_sr_desc_t list[2] = {
            { .id = 1, .opcode = VAPI_SEND, .comp_type = VAPI_UNSIGNALED, .addr = (uintptr_t)first, .len = sizeof first },
            { .id = 2, .opcode = VAPI_SEND, .comp_type = VAPI_SIGNALED, .addr = (uintptr_t)second, .len = sizeof second },
        };
        VOK(EVAPI_post_sr_list(c.hca, c.qp, 2, list));
        expect_completion(&c, c.scq, 2, VAPI_SUCCESS, sizeof second);
    }
    CHECK_OK(deck_barrier());
    close_qp(&c);
    close_rest(&c);
    return 0;
}

static void post_recv(struct conn *c, uint64_t id, void *buf, uint32_t len)
{
    VAPI_rr_desc_t rr = { .id = id, .opcode = VAPI_RECEIVE, .addr = (uintptr_t)buf, .len = len };
    VOK(VAPI_post_rr(c->hca, c->qp, &rr));
}

static void send_signalled(struct conn *c, uint64_t id, const void *buf, uint32_t len)
{
    VAPI_sr_desc_t sr = { .id = id, .opcode = VAPI_SEND, .comp_type = VAPI_SIGNALED,
                          .addr = (uintptr_t)buf, .len = len };
    VOK(VAPI_post_sr(c->hca, c->qp, &sr));
}

static void expect_completion(struct conn *c, VAPI_cq_hndl_t cq, uint64_t id, uint32_t status,
                              uint32_t byte_len)
{
    VAPI_wc_desc_t wc;
    VOK(EVAPI_poll_cq_block(c->hca, cq, WAIT_USEC, &wc));
    if (wc.id != id || wc.status != status || wc.byte_len != byte_len) {
        fprintf(stderr, "completion {id %llu, status %u, len %u}, expected {%llu, %u, %u}\n",
                (unsigned long long)wc.id, wc.status, wc.byte_len, (unsigned long long)id,
                status, byte_len);
        exit(1);
    }
}

/* Node 1 sends 100, 50 and 0 bytes; node 0 offers 10, 100 and 10: the first is too small.
 * Node 0 then destroys its QP with three receives outstanding: they are flushed in order. */
static int short_buffer_node(int id, int n, void *arg)
{
    struct conn c;
    uint32_t peer_qp, peer_id;
    static uint8_t data[300], got[100];
    for (unsigned i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 3 + 1);
    open_conn(&c, 0, 0);
    exchange(id, &c, &peer_qp, &peer_id);
    if (id == 1) {
        connect_conn(&c, peer_qp, peer_id, 0, 256);
        VAPI_sr_desc_t big = { .id = 9, .opcode = VAPI_SEND, .addr = (uintptr_t)data,
                               .len = 300 };
        VCHECK(VAPI_post_sr(c.hca, c.qp, &big), VAPI_EINVAL_PARAM);   /* over path_mtu */
        send_signalled(&c, 1, data, 100);
        send_signalled(&c, 2, data + 100, 50);
        send_signalled(&c, 3, data, 0);
        expect_completion(&c, c.scq, 1, VAPI_SUCCESS, 100);
        expect_completion(&c, c.scq, 2, VAPI_SUCCESS, 50);
        expect_completion(&c, c.scq, 3, VAPI_SUCCESS, 0);
        CHECK_OK(deck_barrier());
        close_qp(&c);
    } else {
        connect_conn(&c, peer_qp, peer_id, 1, 0);
        post_recv(&c, 1, got, 10);
        post_recv(&c, 2, got, 100);
        post_recv(&c, 3, got, 10);
        expect_completion(&c, c.rcq, 1, VAPI_LOC_LEN_ERR, 100);
        expect_completion(&c, c.rcq, 2, VAPI_SUCCESS, 50);
        CHECK(memcmp(got, data + 100, 50) == 0);
        expect_completion(&c, c.rcq, 3, VAPI_SUCCESS, 0);
        for (uint64_t r = 10; r < 13; r++)
            post_recv(&c, r, got, sizeof got);
        close_qp(&c);
        for (uint64_t r = 10; r < 13; r++)
            expect_completion(&c, c.rcq, r, VAPI_WR_FLUSH_ERR, 0);
        CHECK_OK(deck_barrier());
    }
    close_rest(&c);
    return 0;
}

/* Node 1 sends one message and dies; node 0's receives complete with VAPI_REM_ABORT_ERR
 * instead of hanging, and its QP refuses further sends. */
static int peer_death_node(int id, int n, void *arg)
{
    struct conn c;
    uint32_t peer_qp, peer_id;
    static char buf[64] = "last words";
    open_conn(&c, 0, 0);
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, 0, 0);
    CHECK_OK(deck_barrier());   /* both connected */
    char healthy[16] = "x";
    VCHECK(EVAPI_query_qp_error(c.hca, c.qp, healthy, sizeof healthy), VAPI_OK);
    CHECK(healthy[0] == '\0');
    if (id == 1) {
        send_signalled(&c, 1, buf, 11);
        expect_completion(&c, c.scq, 1, VAPI_SUCCESS, 11);
        _exit(0);   /* dies without any tear-down */
    }
    char got[64];
    post_recv(&c, 1, got, sizeof got);
    post_recv(&c, 2, got, sizeof got);
    expect_completion(&c, c.rcq, 1, VAPI_SUCCESS, 11);
    CHECK(strcmp(got, "last words") == 0);
    long t0 = util_now_ms();
    expect_completion(&c, c.rcq, 2, VAPI_REM_ABORT_ERR, 0);
    CHECK(util_now_ms() - t0 < 15000);
    post_recv(&c, 3, got, sizeof got);   /* every later receive fails the same way */
    expect_completion(&c, c.rcq, 3, VAPI_REM_ABORT_ERR, 0);
    VAPI_sr_desc_t sr = { .id = 4, .opcode = VAPI_SEND, .addr = (uintptr_t)buf, .len = 4 };
    VCHECK(VAPI_post_sr(c.hca, c.qp, &sr), VAPI_EINVAL_QP_STATE);
    CHECK(strstr(EVAPI_last_error(), "ERR") != NULL);
    char why[512], tiny[8];             /* the completion's status says less than DECK did */
    VCHECK(EVAPI_query_qp_error(c.hca, c.qp, why, sizeof why), VAPI_OK);
    CHECK(strstr(why, "DECK process 1") != NULL && strstr(why, "gone away") != NULL);
    VCHECK(EVAPI_query_qp_error(c.hca, c.qp, tiny, sizeof tiny), VAPI_OK);
    CHECK(strlen(tiny) == sizeof tiny - 1 && strncmp(tiny, why, sizeof tiny - 1) == 0);
    VCHECK(EVAPI_query_qp_error(c.hca, c.qp, tiny, 0), VAPI_EINVAL_PARAM);
    close_qp(&c);
    close_rest(&c);
    return 0;
}


/* ---- the reader progressing DECK itself -------------------------------------------------- */

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* With receives posted and no traffic, a blocking poll (which now waits inside DECK's
 * retrieve) times out on time and sleeps meanwhile; then a message still gets through. */
static int idle_poll_node(int id, int n, void *arg)
{
    struct conn c;
    uint32_t peer_qp, peer_id;
    static char buf[64];
    open_conn(&c, 0, 0);
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, 0, 0);
    if (id == 0) {
        VAPI_wc_desc_t wc;
        post_recv(&c, 1, buf, sizeof buf);
        post_recv(&c, 2, buf, sizeof buf);
        long t0 = util_now_ms();
        double cpu0 = cpu_seconds();
        VCHECK(EVAPI_poll_cq_block(c.hca, c.rcq, 300000, &wc), VAPI_ETIMEDOUT);
        long waited = util_now_ms() - t0;
        double cpu = cpu_seconds() - cpu0;
        CHECK(waited >= 290 && waited < 3000);
        CHECK(cpu < 0.05);   /* every thread of the process, daemons included */
        VCHECK(VAPI_poll_cq(c.hca, c.rcq, &wc), VAPI_CQ_EMPTY);
        CHECK_OK(deck_barrier());   /* now node 1 sends */
        expect_completion(&c, c.rcq, 1, VAPI_SUCCESS, 5);
        CHECK(strcmp(buf, "ping") == 0);
    } else {
        CHECK_OK(deck_barrier());
        send_signalled(&c, 1, "ping", 5);
        expect_completion(&c, c.scq, 1, VAPI_SUCCESS, 5);
    }
    CHECK_OK(deck_barrier());
    close_qp(&c);
    close_rest(&c);
    return 0;
}

/* Node 0 is blocked in a poll of its receive CQ, so inside DECK's retrieve in its own thread,
 * when node 1 dies: the poll returns the failure instead of hanging, and later requests fail
 * the same way, whether polled blocking or not. */
static int poller_peer_death_node(int id, int n, void *arg)
{
    struct conn c;
    uint32_t peer_qp, peer_id;
    char got[64];
    open_conn(&c, 0, 0);
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, 0, 0);
    CHECK_OK(deck_barrier());
    if (id == 1) {
        util_sleep_ms(300);   /* node 0 is in its poll by now */
        _exit(0);
    }
    post_recv(&c, 1, got, sizeof got);
    post_recv(&c, 2, got, sizeof got);
    long t0 = util_now_ms();
    expect_completion(&c, c.rcq, 1, VAPI_REM_ABORT_ERR, 0);
    CHECK(util_now_ms() - t0 >= 250 && util_now_ms() - t0 < 15000);
    VAPI_wc_desc_t wc;
    long t1 = util_now_ms();
    VAPI_ret_t r;
    while ((r = VAPI_poll_cq(c.hca, c.rcq, &wc)) == VAPI_CQ_EMPTY)
        CHECK(util_now_ms() - t1 < 5000);
    VOK(r);
    CHECK(wc.id == 2 && wc.status == VAPI_REM_ABORT_ERR);
    post_recv(&c, 3, got, sizeof got);
    expect_completion(&c, c.rcq, 3, VAPI_REM_ABORT_ERR, 0);
    close_qp(&c);
    close_rest(&c);
    return 0;
}

struct blocked_poll {
    struct conn   *c;
    VAPI_ret_t     ret;
    VAPI_wc_desc_t wc;
};

static void *poll_for_ever(void *arg)
{
    struct blocked_poll *p = arg;
    p->ret = EVAPI_poll_cq_block(p->c->hca, p->c->rcq, 0, &p->wc);
    return NULL;
}

/* Destroying a QP while a thread waits for ever in a poll of its receive CQ (inside DECK's
 * retrieve): the poller is woken, nothing is freed under it (ASan), and the receives are
 * flushed in order, the first possibly to the poller itself. */
static int destroy_under_poller_node(int id, int n, void *arg)
{
    struct conn a, b;
    static char buf[4][64];
    open_conn(&a, 0, 0);
    open_conn(&b, 0, 0);
    connect_conn(&a, b.prop.qp_num, (uint32_t)deck_node(), 0, 0);
    connect_conn(&b, a.prop.qp_num, (uint32_t)deck_node(), 0, 0);
    for (int i = 0; i < 4; i++)
        post_recv(&b, (uint64_t)i, buf[i], sizeof buf[i]);
    send_signalled(&a, 7, "one", 4);   /* delivered first, through the poller */
    expect_completion(&b, b.rcq, 0, VAPI_SUCCESS, 4);
    struct blocked_poll p = { .c = &b, .ret = 99 };
    pthread_t t;
    CHECK(pthread_create(&t, NULL, poll_for_ever, &p) == 0);
    util_sleep_ms(100);
    CHECK(p.ret == 99);   /* still waiting */
    long t0 = util_now_ms();
    close_qp(&b);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(util_now_ms() - t0 < 5000);
    uint64_t next = 1;
    if (p.ret == VAPI_OK) {
        CHECK(p.wc.id == next && p.wc.status == VAPI_WR_FLUSH_ERR);
        next++;
    } else {
        CHECK(p.ret == VAPI_ETIMEDOUT);
    }
    VAPI_wc_desc_t wc[4];
    uint32_t count;
    VOK(EVAPI_poll_cq_many(b.hca, b.rcq, 4, wc, &count));
    CHECK(count == 4 - next);
    for (uint32_t i = 0; i < count; i++)
        CHECK(wc[i].id == next + i && wc[i].status == VAPI_WR_FLUSH_ERR);
    expect_completion(&a, a.scq, 7, VAPI_SUCCESS, 4);
    close_qp(&a);
    close_rest(&a);
    close_rest(&b);
    return 0;
}

/* ---- coalescing: several blocks per DECK message ----------------------------------------- */

#define BIG_LIST 200

/* Block k of the coalescing tests: 1..MTU bytes, assorted. */
static uint32_t block_size(int k) { return 1 + (uint32_t)(k * 97 + k / 3) % MTU; }

/* Sends blocks [from, from + n) as one list, only the last signalled, and waits for its one
 * completion (the DECK posts carrying the list have all returned by then). */
static void send_blocks(struct conn *c, uint8_t *region, int seed, int from, int n)
{
    VAPI_sr_desc_t *list = malloc((size_t)n * sizeof *list);
    CHECK(list != NULL);
    for (int i = 0; i < n; i++) {
        int k = from + i;
        uint8_t *p = region + (size_t)k * MTU;
        for (uint32_t j = 0; j < block_size(k); j++)
            p[j] = msg_byte(seed, k, j);
        list[i] = (VAPI_sr_desc_t){ .id = (uint64_t)k, .opcode = VAPI_SEND,
                                    .comp_type = i == n - 1 ? VAPI_SIGNALED : VAPI_UNSIGNALED,
                                    .addr = (uintptr_t)p, .len = block_size(k) };
    }
    VOK(n == 1 ? VAPI_post_sr(c->hca, c->qp, list)
               : EVAPI_post_sr_list(c->hca, c->qp, (uint32_t)n, list));
    expect_completion(c, c->scq, (uint64_t)(from + n - 1), VAPI_SUCCESS, block_size(from + n - 1));
    free(list);
}

static void check_block(int seed, int k, const uint8_t *p, uint32_t len)
{
    CHECK(len == block_size(k));
    for (uint32_t j = 0; j < len; j++)
        if (p[j] != msg_byte(seed, k, j)) {
            fprintf(stderr, "block %d byte %u: got %u, want %u\n", k, j, p[j],
                    msg_byte(seed, k, j));
            exit(1);
        }
}

/* The head of a MicroVAPI message as wire.c draws it, declared here so that the tests below
 * check the layout instead of taking it from the library. */
struct mv_head { uint32_t dest_qp, src_qp, credit, kind; };

/* The wire format as the peer process's mailbox sees it: node 1 plays the peer with a bare
 * DECK mailbox named as MicroVAPI names a process's ("mv-<id>"); node 0's QP, connected to its
 * queue pair 4242, first announces its window (a credit message), then posts a list of
 * BIG_LIST blocks and a zero-length end marker: they arrive as a few DECK messages, each a
 * head naming both queue pairs and then [int32 length][data] records, in order, within the
 * coalescing bounds. */
static int wire_format_node(int id, int n, void *arg)
{
    (void)n; (void)arg;
    if (id == 0) {
        struct conn c;
        open_conn(&c, 0, 0);
        connect_conn(&c, 4242, 1, 0, 0);
        uint8_t *region = malloc((size_t)BIG_LIST * MTU);
        CHECK(region != NULL);
        send_blocks(&c, region, 3, 0, BIG_LIST);
        send_signalled(&c, 99, "", 0);
        expect_completion(&c, c.scq, 99, VAPI_SUCCESS, 0);
        unsigned qp_num = c.prop.qp_num;
        CHECK_OK(deck_barrier());   /* node 1 has read everything */
        deck_mbox_t to;
        deck_msg_t m;
        CHECK_OK(deck_mbox_clone_at(&to, 1, "qp-num"));
        CHECK_OK(deck_msg_create(&m, 16));
        CHECK_OK(deck_msg_pack(&m, DECK_UINT, &qp_num, 1));
        CHECK_OK(deck_mbox_post(&to, &m));
        CHECK_OK(deck_msg_destroy(&m));
        CHECK_OK(deck_mbox_destroy(&to));
        close_qp(&c);
        close_rest(&c);
        free(region);
        return 0;
    }
    deck_mbox_t raw, qp_num_box;
    CHECK_OK(deck_mbox_create(&raw, "mv-1"));
    CHECK_OK(deck_mbox_create(&qp_num_box, "qp-num"));
    CHECK_OK(deck_barrier());        /* node 0's connect */
    deck_msg_t msg;
    CHECK_OK(deck_msg_create(&msg, 1u << 20));
    struct mv_head head, first;
    CHECK_OK(deck_mbox_retrv_timed(&raw, &msg, 5000));
    CHECK(msg.len == sizeof first && msg.src == 0);
    memcpy(&first, msg.buf, sizeof first);
    CHECK(first.dest_qp == 4242 && first.kind == 2 && first.credit == MV_WINDOW_DEFAULT);  /* the window */
    int k = 0, messages = 0;
    while (k <= BIG_LIST) {   /* block BIG_LIST is the end marker */
        CHECK_OK(deck_msg_clear(&msg));
        CHECK_OK(deck_mbox_retrv_timed(&raw, &msg, 5000));
        messages++;
        CHECK(msg.len > sizeof head && msg.src == 0);
        memcpy(&head, msg.buf, sizeof head);
        CHECK(head.dest_qp == 4242 && head.src_qp == first.src_qp && head.kind == 1);
        CHECK(head.credit == MV_WINDOW_DEFAULT);   /* nothing taken yet: the same edge */
        uint32_t records = 0, payload = 0;
        for (unsigned long off = sizeof head; off < msg.len; records++, k++) {
            int32_t len;
            CHECK(msg.len - off >= sizeof len);
            memcpy(&len, msg.buf + off, sizeof len);
            off += sizeof len;
            CHECK(len >= 0 && (unsigned long)len <= msg.len - off);
            if (k < BIG_LIST)
                check_block(3, k, (const uint8_t *)msg.buf + off, (uint32_t)len);
            else
                CHECK(k == BIG_LIST && len == 0);
            off += (unsigned long)len;
            payload += (uint32_t)len;
        }
        CHECK(records >= 1 && records <= 64 && (records == 1 || payload <= 65536 + 512));
    }
    /* 200 blocks of 256 bytes on average: 4 messages of 64 blocks, then the rest and the
     * marker; one message per block would be 201. */
    CHECK(messages <= 6);
    CHECK(deck_mbox_retrv_timed(&raw, &msg, 0) == DECK_ETIMEDOUT);
    CHECK_OK(deck_barrier());
    unsigned qp_num;
    CHECK_OK(deck_msg_clear(&msg));
    CHECK_OK(deck_mbox_retrv_timed(&qp_num_box, &msg, 5000));
    CHECK_OK(deck_msg_unpack(&msg, DECK_UINT, &qp_num, 1));
    CHECK(qp_num == first.src_qp);
    CHECK_OK(deck_msg_destroy(&msg));
    CHECK_OK(deck_mbox_destroy(&qp_num_box));
    CHECK_OK(deck_mbox_destroy(&raw));
    return 0;
}

/* Node 0's end in the tests below where node 1 plays the peer with a bare mailbox: once node 1
 * has read everything (a barrier), the queue pair and the rest go. */
static int end_after_raw_peer(struct conn *c, void *region)
{
    CHECK_OK(deck_barrier());
    close_qp(c);
    close_rest(c);
    free(region);
    return 0;
}

/* Node 1's start there: the mailbox MicroVAPI names process 1's ("mv-1"), a barrier (node 0 then
 * connects to it), and a message that holds any of node 0's. */
static void open_raw_peer(deck_mbox_t *raw, deck_msg_t *msg)
{
    CHECK_OK(deck_mbox_create(raw, "mv-1"));
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_msg_create(msg, 1u << 20));
}

/* A connect given the peer's window (dest_window, as Aldeia's bootstrap carries it) sends no
 * credit message, which would wake the peer's engine on every connection, and may send up to
 * that window at once: node 1 plays the peer with a bare mailbox that never answers, and node 0's
 * three lists (about 150 KiB, beyond MicroVAPI's initial 64 KiB) complete all the same. The
 * first message node 1 gets is data, carrying node 0's window. */
#define GIVEN_LISTS  3
#define GIVEN_WINDOW (256u * 1024u)

static int window_given_node(int id, int n, void *arg)
{
    (void)n; (void)arg;
    if (id == 0) {
        struct conn c;
        open_conn(&c, 0, 0);
        CHECK(c.prop.window == MV_WINDOW_DEFAULT);
        VAPI_qp_attr_t attr = { .qp_state = VAPI_RTS, .dest_qp_num = 4242, .dest_id = 1,
                                .dest_window = GIVEN_WINDOW };
        VOK(VAPI_modify_qp(c.hca, c.qp, &attr));
        uint8_t *region = malloc((size_t)GIVEN_LISTS * BIG_LIST * MTU);
        CHECK(region != NULL);
        CHECK_OK(deck_barrier());   /* node 1's mailbox exists */
        for (int l = 0; l < GIVEN_LISTS; l++)
            send_blocks(&c, region, 5, l * BIG_LIST, BIG_LIST);
        send_signalled(&c, 99, "", 0);
        expect_completion(&c, c.scq, 99, VAPI_SUCCESS, 0);
        return end_after_raw_peer(&c, region);
    }
    deck_mbox_t raw;
    deck_msg_t msg;
    open_raw_peer(&raw, &msg);
    struct mv_head head;
    int k = 0, first = 1;
    while (k <= GIVEN_LISTS * BIG_LIST) {   /* the last record is the empty end marker */
        CHECK_OK(deck_msg_clear(&msg));
        CHECK_OK(deck_mbox_retrv_timed(&raw, &msg, 5000));
        CHECK(msg.len >= sizeof head && msg.src == 0);
        memcpy(&head, msg.buf, sizeof head);
        if (first)
            CHECK(head.kind == 1 && head.credit == MV_WINDOW_DEFAULT);   /* data, not a credit */
        first = 0;
        CHECK(head.dest_qp == 4242 && head.kind == 1);
        for (unsigned long off = sizeof head; off < msg.len; k++) {
            int32_t len;
            CHECK(msg.len - off >= sizeof len);
            memcpy(&len, msg.buf + off, sizeof len);
            off += sizeof len;
            CHECK(len >= 0 && (unsigned long)len <= msg.len - off);
            if (k < GIVEN_LISTS * BIG_LIST)
                check_block(5, k, (const uint8_t *)msg.buf + off, (uint32_t)len);
            else
                CHECK(len == 0);
            off += (unsigned long)len;
        }
    }
    CHECK(deck_mbox_retrv_timed(&raw, &msg, 0) == DECK_ETIMEDOUT);
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_msg_destroy(&msg));
    CHECK_OK(deck_mbox_destroy(&raw));
    return 0;
}

/* With 64 KiB blocks (Aldeia's default mtu) a list of a full block and a tail of up to 512 B,
 * a write of 64 KiB behind a program's frame header, travels as one DECK message (one system
 * call over tcp); over sci a longer tail goes in a message of its own. Over tcp a message
 * carries up to 256 KiB of blocks (deck_mbox_post_hint), which EVAPI_query_qp_post_bytes tells
 * the writer: a stream's blocks go four to a frame. Node 1 plays the peer's mailbox as in
 * wire_format_node. */
#define BIG_MTU 65536u
#define LISTS   3

/* What a transport does with the lists node 0 posts: {64 KiB, 512 B}, {64 KiB, 513 B} and five
 * blocks of 64 KiB and 8 B; per DECK message its records' lengths (0 ends). */
struct coalescing {
    uint32_t post_bytes;               /* EVAPI_query_qp_post_bytes once connected */
    uint32_t messages[8][6];
};
static const struct coalescing over_sci = { BIG_MTU, {
    { BIG_MTU, 512 }, { BIG_MTU }, { 513 },
    { BIG_MTU }, { BIG_MTU }, { BIG_MTU }, { BIG_MTU }, { BIG_MTU, 8 } } };
static const struct coalescing over_tcp = { 4 * BIG_MTU, {
    { BIG_MTU, 512 }, { BIG_MTU, 513 }, { BIG_MTU, BIG_MTU, BIG_MTU, BIG_MTU }, { BIG_MTU, 8 } } };

static int coalescing_node(int id, int n, void *arg)
{
    (void)n;
    const struct coalescing *want = arg;
    static const uint32_t blocks[LISTS] = { 1, 1, 5 }, tails[LISTS] = { 512, 513, 8 };
    if (id == 0) {
        struct conn c;
        open_conn_on(&c, "microvapi:mtu=65536", 0, 0);
        connect_conn(&c, 4242, 1, 0, 0);
        uint32_t post_bytes = 0;
        VOK(EVAPI_query_qp_post_bytes(c.hca, c.qp, &post_bytes));
        CHECK(post_bytes == want->post_bytes);
        /* Node 1 opens the window beyond MicroVAPI's initial 64 KiB with a 1-byte data message
         * (every message carries the sender's edge): once it is received, the edge is ours. */
        char one;
        post_recv(&c, 7, &one, 1);
        expect_completion(&c, c.rcq, 7, VAPI_SUCCESS, 1);
        uint8_t *region = calloc(1, 5 * BIG_MTU + 1024);
        CHECK(region != NULL);
        for (uint64_t t = 0; t < LISTS; t++) {
            VAPI_sr_desc_t list[6];
            for (uint32_t k = 0; k <= blocks[t]; k++)
                list[k] = (VAPI_sr_desc_t){ .id = 10 * t + k, .opcode = VAPI_SEND,
                                            .comp_type = k == blocks[t] ? VAPI_SIGNALED : VAPI_UNSIGNALED,
                                            .addr = (uintptr_t)region + k * BIG_MTU,
                                            .len = k == blocks[t] ? tails[t] : BIG_MTU };
            VOK(EVAPI_post_sr_list(c.hca, c.qp, blocks[t] + 1, list));
            expect_completion(&c, c.scq, 10 * t + blocks[t], VAPI_SUCCESS, tails[t]);
        }
        return end_after_raw_peer(&c, region);
    }
    deck_mbox_t raw;
    deck_msg_t msg;
    open_raw_peer(&raw, &msg);
    CHECK_OK(deck_mbox_retrv_timed(&raw, &msg, 5000));   /* its window */
    struct mv_head first, head;
    memcpy(&first, msg.buf, sizeof first);
    head = (struct mv_head){ .dest_qp = first.src_qp, .src_qp = 4242, .credit = 1u << 20, .kind = 1 };
    int32_t one = 1;
    char byte = 'x';
    deck_mbox_t to;
    deck_msg_t d;
    CHECK_OK(deck_mbox_clone_at(&to, 0, "mv-0"));
    CHECK_OK(deck_msg_create(&d, 64));
    CHECK_OK(deck_msg_pack(&d, DECK_UINT, &head, 4));   /* the head: four native uint32 */
    CHECK_OK(deck_msg_pack(&d, DECK_INT, &one, 1));     /* one record of 1 byte */
    CHECK_OK(deck_msg_pack(&d, DECK_CHAR, &byte, 1));
    CHECK_OK(deck_mbox_post(&to, &d));
    CHECK_OK(deck_msg_destroy(&d));
    CHECK_OK(deck_mbox_destroy(&to));
    /* records per DECK message, and their lengths, in order */
    for (int m = 0; m < 8 && want->messages[m][0]; m++) {
        CHECK_OK(deck_msg_clear(&msg));
        CHECK_OK(deck_mbox_retrv_timed(&raw, &msg, 5000));
        uint32_t records = 0;
        for (unsigned long off = sizeof(struct mv_head); off < msg.len; records++) {
            int32_t len;
            CHECK(msg.len - off >= sizeof len && records < 6 && want->messages[m][records]);
            memcpy(&len, msg.buf + off, sizeof len);
            CHECK((uint32_t)len == want->messages[m][records]);
            off += sizeof len + (unsigned long)len;
        }
        CHECK(records == 6 || !want->messages[m][records]);
    }
    CHECK(deck_mbox_retrv_timed(&raw, &msg, 0) == DECK_ETIMEDOUT);
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_msg_destroy(&msg));
    CHECK_OK(deck_mbox_destroy(&raw));
    return 0;
}

/* A message for a queue pair that is gone, as when both ends close at once: node 1 plays the
 * peer with a bare mailbox "mv-1" (node 0's engine knows it: node 0's QP connects to it) and
 * posts to a queue pair node 0 does not have, first an end of stream alone, then data. As TCP
 * acknowledges a FIN for a closed connection but resets data, only the data gets a reset back. */
static int gone_qp_node(int id, int n, void *arg)
{
    (void)n; (void)arg;
    const uint32_t gone_qp = 0x7777, eos_from = 111, data_from = 222;
    if (id == 0) {
        struct conn c;
        deck_mbox_t done;
        deck_msg_t m;
        CHECK_OK(deck_mbox_create(&done, "done"));
        CHECK_OK(deck_msg_create(&m, 16));
        open_conn(&c, 0, 0);
        connect_conn(&c, 4242, 1, 0, 0);   /* its barrier: node 1 may post */
        CHECK_OK(deck_mbox_retrv_timed(&done, &m, 10000));   /* node 1 has seen what came back */
        close_qp(&c);
        close_rest(&c);
        CHECK_OK(deck_msg_destroy(&m));
        CHECK_OK(deck_mbox_destroy(&done));
        return 0;
    }
    deck_mbox_t raw, to;
    CHECK_OK(deck_mbox_create(&raw, "mv-1"));
    CHECK_OK(deck_barrier());        /* node 0's connect */
    deck_msg_t msg;
    CHECK_OK(deck_msg_create(&msg, 4096));
    struct mv_head head;
    CHECK_OK(deck_mbox_retrv_timed(&raw, &msg, 5000));   /* node 0's QP announces its window */
    memcpy(&head, msg.buf, sizeof head);
    CHECK(head.kind == 2);
    CHECK_OK(deck_mbox_clone_at(&to, 0, "mv-0"));
    int32_t lens[2] = { 0, 3 };
    const uint32_t from[2] = { eos_from, data_from };
    for (int i = 0; i < 2; i++) {
        struct mv_head h = { .dest_qp = gone_qp, .src_qp = from[i], .credit = 0, .kind = 1 };
        CHECK_OK(deck_msg_clear(&msg));
        memcpy(msg.buf, &h, sizeof h);
        memcpy(msg.buf + sizeof h, &lens[i], sizeof lens[i]);
        memcpy(msg.buf + sizeof h + sizeof lens[i], "abc", (size_t)lens[i]);
        CHECK_OK(deck_msg_setlength(&msg, sizeof h + sizeof lens[i] + (unsigned long)lens[i]));
        CHECK_OK(deck_mbox_post(&to, &msg));
    }
    /* In order from one sender: a reset for the end of stream would come first. */
    CHECK_OK(deck_msg_clear(&msg));
    CHECK_OK(deck_mbox_retrv_timed(&raw, &msg, 5000));
    CHECK(msg.len == sizeof head);
    memcpy(&head, msg.buf, sizeof head);
    CHECK(head.kind == 3 && head.dest_qp == data_from && head.src_qp == gone_qp);
    CHECK_OK(deck_msg_clear(&msg));
    CHECK(deck_mbox_retrv_timed(&raw, &msg, 300) == DECK_ETIMEDOUT);
    deck_mbox_t done;
    CHECK_OK(deck_mbox_clone_at(&done, 0, "done"));
    CHECK_OK(deck_msg_clear(&msg));
    CHECK_OK(deck_mbox_post(&done, &msg));
    CHECK_OK(deck_msg_destroy(&msg));
    CHECK_OK(deck_mbox_destroy(&done));
    CHECK_OK(deck_mbox_destroy(&to));
    CHECK_OK(deck_mbox_destroy(&raw));
    return 0;
}

/* Node 1 sends, before node 0 posts anything: a list of BIG_LIST blocks, then single sends
 * and short lists mixed, then a zero-length end marker. Node 0 then receives with only 3
 * requests posted at a time, so most messages are handed out over several posts; every
 * block comes in order with its bytes. Then node 1 sends 10 more and node 0 destroys its QP
 * with 7 of them still pending (nothing leaks, nothing hangs). */
static int remainder_node(int id, int n, void *arg)
{
    struct conn c;
    uint32_t peer_qp, peer_id;
    enum { MIXED = BIG_LIST + 30, END = MIXED, TOTAL = END + 1 + 10 };
    open_conn(&c, 0, 0);
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, 0, 0);
    if (id == 1) {
        uint8_t *region = malloc((size_t)TOTAL * MTU);
        CHECK(region != NULL);
        send_blocks(&c, region, 1, 0, BIG_LIST);
        for (int k = BIG_LIST; k < MIXED;) {   /* 1, 5, 1, 5, ... */
            int len = (k - BIG_LIST) % 6 == 0 ? 1 : 5;
            send_blocks(&c, region, 1, k, len);
            k += len;
        }
        send_signalled(&c, END, "", 0);
        expect_completion(&c, c.scq, END, VAPI_SUCCESS, 0);
        send_blocks(&c, region, 1, END + 1, 10);
        CHECK_OK(deck_barrier());   /* all sent before node 0 posts a receive */
        CHECK_OK(deck_barrier());   /* node 0 is done */
        close_qp(&c);
        free(region);
    } else {
        CHECK_OK(deck_barrier());
        static uint8_t bufs[3][MTU];
        int k = 0;
        while (k <= END + 3) {   /* everything up to the marker, then 3 of the last 10 */
            for (int i = 0; i < 3; i++)
                post_recv(&c, (uint64_t)(k + i), bufs[i], MTU);
            for (int i = 0; i < 3; i++, k++) {
                VAPI_wc_desc_t wc;
                VOK(EVAPI_poll_cq_block(c.hca, c.rcq, WAIT_USEC, &wc));
                CHECK(wc.id == (uint64_t)k && wc.status == VAPI_SUCCESS);
                if (k == END)
                    CHECK(wc.byte_len == 0);
                else
                    check_block(1, k, bufs[i], wc.byte_len);
            }
        }
        close_qp(&c);
        CHECK_OK(deck_barrier());
    }
    close_rest(&c);
    return 0;
}

/* Node 1 sends a list of 10 blocks (one DECK message) and dies. Node 0 takes 3 of them,
 * waits until the peer is surely gone, and still gets the other 7 before the failure (one of
 * them too long for its buffer: VAPI_LOC_LEN_ERR for it alone). */
static int pending_peer_death_node(int id, int n, void *arg)
{
    struct conn c;
    uint32_t peer_qp, peer_id;
    open_conn(&c, 0, 0);
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, 0, 0);
    if (id == 1) {
        static uint8_t region[10 * MTU];
        send_blocks(&c, region, 2, 0, 10);
        CHECK_OK(deck_barrier());
        _exit(0);   /* dies without any tear-down */
    }
    CHECK_OK(deck_barrier());
    static uint8_t bufs[12][MTU];
    for (int k = 0; k < 3; k++)
        post_recv(&c, (uint64_t)k, bufs[k], MTU);
    VAPI_wc_desc_t wc;
    for (int k = 0; k < 3; k++) {
        VOK(EVAPI_poll_cq_block(c.hca, c.rcq, WAIT_USEC, &wc));
        CHECK(wc.id == (uint64_t)k && wc.status == VAPI_SUCCESS);
        check_block(2, k, bufs[k], wc.byte_len);
    }
    util_sleep_ms(300);   /* DECK has seen the connection close by now */
    for (int k = 3; k < 12; k++)   /* block 5 finds a buffer one byte short */
        post_recv(&c, (uint64_t)k, bufs[k], k == 5 ? block_size(5) - 1 : MTU);
    for (int k = 3; k < 10; k++) {
        VOK(EVAPI_poll_cq_block(c.hca, c.rcq, WAIT_USEC, &wc));
        CHECK(wc.id == (uint64_t)k && wc.status == (k == 5 ? VAPI_LOC_LEN_ERR : VAPI_SUCCESS));
        if (k != 5)
            check_block(2, k, bufs[k], wc.byte_len);
    }
    expect_completion(&c, c.rcq, 10, VAPI_REM_ABORT_ERR, 0);
    expect_completion(&c, c.rcq, 11, VAPI_REM_ABORT_ERR, 0);
    close_qp(&c);
    close_rest(&c);
    return 0;
}

/* ---- ping-pong latency ------------------------------------------------------------------- */

#define PINGPONG_MTU 1024u

/* Round trips per size: MV_PINGPONG_ITERS in the environment (10000 for a measurement), a
 * quick default for the test suite. */
static int pingpong_iters(void)
{
    const char *v = getenv("MV_PINGPONG_ITERS");
    int n = v ? atoi(v) : 0;
    return n > 0 ? n : 500;
}

/* Node 0 sends `size` bytes, node 1 sends them back, `iters` times, one receive posted ahead;
 * every echo is checked. Prints the one-way time t_c / (2 i) as the thesis's Fig. 5.2. */
static void pingpong_size(int id, struct conn *c, uint32_t size, int iters)
{
    static uint8_t out[PINGPONG_MTU], in[PINGPONG_MTU];
    VAPI_wc_desc_t wc;
    post_recv(c, 0, in, PINGPONG_MTU);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int k = 0; k < iters; k++) {
        if (id == 0) {
            for (uint32_t j = 0; j < size; j++)
                out[j] = (uint8_t)(k + j);
            send_signalled(c, (uint64_t)k, out, size);
        }
        VOK(EVAPI_poll_cq_block(c->hca, c->rcq, WAIT_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS && wc.byte_len == size && wc.id == (uint64_t)k);
        if (id == 0)
            CHECK(memcmp(in, out, size) == 0);
        else
            memcpy(out, in, size);
        if (k + 1 < iters)
            post_recv(c, (uint64_t)k + 1, in, PINGPONG_MTU);
        if (id == 1)
            send_signalled(c, (uint64_t)k, out, size);
        VOK(EVAPI_poll_cq_block(c->hca, c->scq, WAIT_USEC, &wc));
        CHECK(wc.status == VAPI_SUCCESS && wc.id == (uint64_t)k);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double us = ((double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3)
                / (2.0 * iters);
    if (id == 0)
        printf("  ping-pong %4u B: %8.1f us one-way (%d round trips)\n", size, us, iters);
    fflush(stdout);
}

static int pingpong_node(int id, int n, void *arg)
{
    struct conn c;
    uint32_t peer_qp, peer_id;
    open_conn_on(&c, "microvapi:mtu=1024", 0, 0);
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, 0, 0);
    int iters = pingpong_iters();
    pingpong_size(id, &c, 1, iters);
    pingpong_size(id, &c, PINGPONG_MTU, iters);
    CHECK_OK(deck_barrier());   /* the last echo is in before either side tears down */
    close_qp(&c);
    close_rest(&c);
    return 0;
}

/* A mapped CQ keeps its place and size: a post that would need more completions than it holds
 * is refused, where an unmapped one grows. */
static int mapped_capacity_node(int id, int n, void *arg)
{
    struct conn c;
    open_conn(&c, 0, 0);
    uint32_t entries;
    VAPI_cq_hndl_t small, growing;
    VOK(VAPI_create_cq(c.hca, 3, &small, &entries));
    VOK(VAPI_create_cq(c.hca, 3, &growing, &entries));
    VAPI_qp_hndl_t qa, qb;
    VAPI_qp_prop_t prop;
    VAPI_qp_init_attr_t init = { .sq_cq_hndl = c.scq, .rq_cq_hndl = small };
    VOK(VAPI_create_qp(c.hca, &init, &qa, &prop));
    init.rq_cq_hndl = growing;
    VOK(VAPI_create_qp(c.hca, &init, &qb, &prop));
    EVAPI_cq_ring_t *ring, *again;
    VOK(EVAPI_map_cq(c.hca, small, &ring));
    CHECK(ring->cap == 4 && ring->head == 0 && ring->tail == 0);
    static uint8_t buf[64];
    VAPI_rr_desc_t rr = { .opcode = VAPI_RECEIVE, .addr = (uintptr_t)buf, .len = sizeof buf };
    for (int i = 0; i < 4; i++) {
        rr.id = (uint64_t)i;
        VOK(VAPI_post_rr(c.hca, qa, &rr));
        VOK(VAPI_post_rr(c.hca, qb, &rr));
    }
    VCHECK(VAPI_post_rr(c.hca, qa, &rr), VAPI_EAGAIN);
    /* The bound block's form fails as the call it stands for does; without a block bound, the
     * calls are refused. */
    VCHECK(bound_call(EVAPI_post_rr_bound, c.hca, qa, (uintptr_t)&rr, 1), VAPI_EAGAIN);
    VCHECK(bound_call(EVAPI_post_rr_bound, c.hca, qa ^ (1ull << 40), (uintptr_t)&rr, 1),   /* no such QP */
           VAPI_EINVAL_QP_HNDL);
    VCHECK(EVAPI_post_rr_bound(), VAPI_EINVAL_PARAM);
    VCHECK(EVAPI_post_sr_bound(), VAPI_EINVAL_PARAM);
    VCHECK(EVAPI_wait_cq_bound(), VAPI_EINVAL_PARAM);
    VOK(VAPI_post_rr(c.hca, qb, &rr));
    VOK(EVAPI_map_cq(c.hca, small, &again));
    CHECK(again == ring);
    VCHECK(EVAPI_map_cq(c.hca, small, NULL), VAPI_EINVAL_PARAM);
    /* Destroying the queue pairs flushes their receives into the rings. */
    VOK(VAPI_destroy_qp(c.hca, qa));
    VOK(VAPI_destroy_qp(c.hca, qb));
    CHECK(__atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE) == 4);
    VAPI_wc_desc_t wc;
    for (int i = 0; i < 4; i++) {
        CHECK(take_mapped(ring, &wc));
        CHECK(wc.id == (uint64_t)i && wc.status == VAPI_WR_FLUSH_ERR);
    }
    CHECK(!take_mapped(ring, &wc));
    VOK(VAPI_destroy_cq(c.hca, small));
    VOK(VAPI_destroy_cq(c.hca, growing));
    close_qp(&c);
    close_rest(&c);
    return 0;
}

int main(void)
{
    int failed = 0;
    failed += util_run_test("microvapi: two QPs of one process", 1, loopback_node, NULL);
    failed += util_run_test_on("sci", "microvapi: a message rewritten while handed out fails its queue pair", 2,
                               rewritten_node, NULL);
    static const struct stream_test lists = { LISTS_1_TO_7, BLOCKING },
                                     bursts = { BURSTS, BLOCKING },
                                     racing = { LISTS_1_TO_7, RACING_THE_DAEMON },
                                     mapped = { LISTS_1_TO_7, MAPPED_RING };
    failed += util_run_test("microvapi: streams both ways, lists, varying sizes", 2,
                            stream_node, (void *)&lists);
    failed += util_run_test("microvapi: inline sends and daemon backlog keep order", 2,
                            stream_node, (void *)&bursts);
    failed += util_run_test("microvapi: readers racing the receive daemon", 2, stream_node,
                            (void *)&racing);
    failed += util_run_test("microvapi: readers taking from the mapped CQ ring", 2, stream_node,
                            (void *)&mapped);
    failed += util_run_test("microvapi: a mapped CQ does not grow", 1, mapped_capacity_node, NULL);
    failed += util_run_test("microvapi: short buffer, zero-length send, flush", 2,
                            short_buffer_node, NULL);
    failed += util_run_test("microvapi: peer death", 2, peer_death_node, NULL);
    failed += util_run_test("microvapi: blocking poll with no traffic sleeps", 2,
                            idle_poll_node, NULL);
    failed += util_run_test("microvapi: peer death while the reader retrieves", 2,
                            poller_peer_death_node, NULL);
    failed += util_run_test("microvapi: destroy while the reader retrieves", 1,
                            destroy_under_poller_node, NULL);
    failed += util_run_test("microvapi: coalesced wire format", 2, wire_format_node, NULL);
    failed += util_run_test("microvapi: a connect given the peer's window sends nothing and opens it",
                            2, window_given_node, NULL);
    failed += util_run_test_on("sci", "microvapi: a 64 KiB block and a short tail in one message", 2,
                               coalescing_node, (void *)&over_sci);
    failed += util_run_test_on("tcp", "microvapi: over tcp, four 64 KiB blocks in one message", 2,
                               coalescing_node, (void *)&over_tcp);
    failed += util_run_test("microvapi: an end of stream for a gone queue pair gets no reset, data does", 2,
                            gone_qp_node, NULL);
    failed += util_run_test("microvapi: coalesced blocks, 3 receives at a time", 2,
                            remainder_node, NULL);
    failed += util_run_test("microvapi: peer death with a message half handed out", 2,
                            pending_peer_death_node, NULL);
    failed += util_run_test("microvapi: ping-pong, 1 B and 1 KiB", 2, pingpong_node, NULL);
    return failed ? 1 : 0;
}
