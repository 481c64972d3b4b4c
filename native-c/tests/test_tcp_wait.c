/*
 * The reading retriever of DECK tcp (deck/tcp_wait.c): a retriever waiting for its mailbox
 * reads the connections itself. Static runs of 2 forked processes over tcp (one of 3). The
 * wait slice is 5 s here (DECK_TCP_WAIT_SLICE_MS), so a wait that ends well before that was
 * ended by the wake-up under test, not by the slice.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include "util_deck.h"
#include "util_numbered.h"
#include "../deck/tcp.h"

#define ROUNDS   2000
#define SLICE_MS 5000
#define EARLY_MS (SLICE_MS / 2)

/* The bytes of a numbered message before its body: {int sender, int seq}. */
#define NUMBERED_HEAD 8

/* Node 0 echoes what node 1 sends, message by message, for every size (at least
 * NUMBERED_HEAD); both check each one (util_numbered.h: number, length, every byte). */
static void ping_pong(int id, const size_t *sizes, int nsizes, int rounds)
{
    deck_mbox_t in, out;
    deck_msg_t m;
    size_t largest = 0;
    for (int k = 0; k < nsizes; k++) largest = sizes[k] > largest ? sizes[k] : largest;
    CHECK_OK(deck_msg_create(&m, largest));
    CHECK_OK(deck_mbox_create(&in, id == 0 ? "to0" : "to1"));
    CHECK_OK(deck_mbox_clone(&out, id == 0 ? "to1" : "to0"));
    for (int k = 0; k < nsizes; k++) {
        for (int r = 0; r < rounds; r++) {
            int seq = k * rounds + r, got;
            if (id == 1) util_post_numbered(&out, &m, 1, seq, sizes[k] - NUMBERED_HEAD);
            CHECK(util_retrv_numbered(&in, &m, &got) == 1);
            CHECK(got == seq && m.len == sizes[k]);
            if (id == 0) CHECK_OK(deck_mbox_post(&out, &m));
        }
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&in));
    CHECK_OK(deck_mbox_destroy(&out));
    CHECK_OK(deck_msg_destroy(&m));
}

/* A retriever that waits gets its messages from its own reading of the connection: most of
 * the frames of a ping-pong are read by the role holders, none by the readers' hand-off; and
 * with one recv each, as the JDK's read: a wait reads the socket once its poll saw bytes there,
 * not before as well (which found nothing: the answer was still coming). */
static int own_reads_node(int id, int n, void *arg)
{
    const size_t sizes[] = { 64 };
    long fills = tcp_wait_fills(), held = tcp_wait_frames_held();   /* both counted over the ping-pong only */
    ping_pong(id, sizes, 1, ROUNDS);
    held = tcp_wait_frames_held() - held;
    fills = tcp_wait_fills() - fills;
    if (held < ROUNDS / 2) fprintf(stderr, "node %d: %ld of %d frames read by waiting retrievers\n", id, held, ROUNDS);
    CHECK(held >= ROUNDS / 2);
    if (fills > held + held / 4) fprintf(stderr, "node %d: %ld recvs for %ld frames held\n", id, fills, held);
    CHECK(fills <= held + held / 4);
    return 0;
}

/* Frames around the read buffer's size, one that comes in pieces (waited for whole in the
 * socket), one above what the holder waits for (its reader reads it): each intact, in order. */
static int sizes_node(int id, int n, void *arg)
{
    const size_t sizes[] = { NUMBERED_HEAD, 24, TCP_INBUF_BYTES - 25, TCP_INBUF_BYTES, TCP_INBUF_BYTES + 1, 65536 + 24,
                             300000, 2u << 20 };
    ping_pong(id, sizes, (int)(sizeof sizes / sizeof *sizes), 20);
    return 0;
}

/* deck_mbox_retrv_apply's function in apply_stream_node: each message must be the next one. */
static void expect_next(const deck_msg_t *msg, void *arg)
{
    int *next = arg, seq;
    deck_msg_t view = *msg;
    view.pos = 0;
    CHECK(util_check_numbered(&view, &seq) == 1);
    CHECK(seq == *next);
    (*next)++;
}

/* A stream retrieved with deck_mbox_retrv_apply: the holder hands the frames it reads whole to
 * the retrieve's function where they lie in the connection's buffer (mbox_table.c,
 * deck_table_apply_here); frames too long for it come through its reader and the queue, and
 * the ones behind them are queued behind them. Every message arrives intact and in order.
 * Then a ping-pong retrieved with apply, where each message comes while its retriever waits
 * with nothing queued: most of them are handed over where they lay. */
static int apply_stream_node(int id, int n, void *arg)
{
    const size_t sizes[] = { NUMBERED_HEAD, 24, TCP_INBUF_BYTES - 25, TCP_INBUF_BYTES + 1, 65536 + 24,
                             TCP_HELD_FRAME_MAX - TCP_FRAME_BYTES, TCP_HELD_FRAME_MAX - TCP_FRAME_BYTES + 1, 1u << 20 };
    const int nsizes = (int)(sizeof sizes / sizeof *sizes), rounds = 30;
    deck_mbox_t mb;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 1u << 20));
    if (id == 0) CHECK_OK(deck_mbox_create(&mb, "stream"));
    CHECK_OK(deck_barrier());
    if (id == 1) {
        CHECK_OK(deck_mbox_clone(&mb, "stream"));
        for (int seq = 0; seq < nsizes * rounds; seq++)
            util_post_numbered(&mb, &m, 1, seq, sizes[seq % nsizes] - NUMBERED_HEAD);
    } else {
        int next = 0;
        while (next < nsizes * rounds) CHECK_OK(deck_mbox_retrv_apply(&mb, &m, -1, expect_next, &next));
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));

    deck_mbox_t in, out;
    CHECK_OK(deck_mbox_create(&in, id == 0 ? "apply0" : "apply1"));
    CHECK_OK(deck_mbox_clone(&out, id == 0 ? "apply1" : "apply0"));
    long before = deck_table_applied_here();
    int next = 0;
    for (int seq = 0; seq < ROUNDS / 4; seq++) {
        if (id == 1) util_post_numbered(&out, &m, 1, seq, 64);
        if (id == 0) {
            CHECK_OK(deck_mbox_retrv_apply(&in, &m, -1, expect_next, &next));
            util_post_numbered(&out, &m, 0, seq, 0);
        } else {
            int echoed;
            CHECK(util_retrv_numbered(&in, &m, &echoed) == 0 && echoed == seq);
        }
    }
    if (id == 0) {
        long here = deck_table_applied_here() - before;
        if (here < ROUNDS / 8) fprintf(stderr, "node 0: %ld of %d handed over where they lay\n", here, ROUNDS / 4);
        CHECK(here >= ROUNDS / 8);
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&in));
    CHECK_OK(deck_mbox_destroy(&out));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

typedef struct {
    deck_mbox_t *mb;
    int          destroy;      /* destroy the mailbox instead of posting to it */
} later_t;

static void *post_or_destroy_later(void *arg)
{
    later_t *l = arg;
    util_sleep_ms(100);
    if (l->destroy) {
        CHECK_OK(deck_mbox_destroy(l->mb));
    } else {
        deck_msg_t m;
        CHECK_OK(deck_msg_create(&m, NUMBERED_HEAD));
        util_post_numbered(l->mb, &m, 0, 7, 0);
        CHECK_OK(deck_msg_destroy(&m));
    }
    return NULL;
}

/* The holder's wait ends at its deadline, on a post to its mailbox by another thread of its
 * process, and when its mailbox is destroyed, each long before the wait slice would end it. */
static int wakes_node(int id, int n, void *arg)
{
    const size_t sizes[] = { 16 };
    ping_pong(id, sizes, 1, 10);            /* the connection is up: there is something to read */
    if (id == 0) {
        deck_mbox_t mb, self;
        deck_msg_t m;
        CHECK_OK(deck_msg_create(&m, 8));
        CHECK_OK(deck_mbox_create(&mb, "quiet"));
        long t0 = util_now_ms();
        CHECK_RC(deck_mbox_retrv_timed(&mb, &m, 150), DECK_ETIMEDOUT);
        long waited = util_now_ms() - t0;
        CHECK(waited >= 140 && waited < EARLY_MS);

        CHECK_OK(deck_mbox_clone_at(&self, 0, "quiet"));
        later_t post = { &self, 0 };
        pthread_t t;
        long held = tcp_wait_frames_held();
        t0 = util_now_ms();
        CHECK(pthread_create(&t, NULL, post_or_destroy_later, &post) == 0);
        CHECK_OK(deck_mbox_retrv_timed(&mb, &m, 4 * SLICE_MS));
        CHECK(util_now_ms() - t0 < EARLY_MS);
        int sender, seq;
        CHECK_OK(deck_msg_unpack(&m, DECK_INT, &sender, 1));
        CHECK_OK(deck_msg_unpack(&m, DECK_INT, &seq, 1));
        CHECK(m.len == NUMBERED_HEAD && sender == 0 && seq == 7);
        CHECK(pthread_join(t, NULL) == 0);
        CHECK(tcp_wait_frames_held() == held);     /* it came through the mailbox, not the wire */
        CHECK_OK(deck_mbox_destroy(&self));

        later_t destroy = { &mb, 1 };
        t0 = util_now_ms();
        CHECK(pthread_create(&t, NULL, post_or_destroy_later, &destroy) == 0);
        CHECK_RC(deck_mbox_retrv(&mb, &m), DECK_ECLOSED);
        CHECK(util_now_ms() - t0 < EARLY_MS);
        CHECK(pthread_join(t, NULL) == 0);
        CHECK_OK(deck_msg_destroy(&m));
    }
    CHECK_OK(deck_barrier());
    return 0;
}

/* Node 1 dies while node 0's retriever holds the role on their connection: its watched
 * mailbox says DECK_EPEER, after the messages node 1 sent first, long before the slice. */
static int death_node(int id, int n, void *arg)
{
    deck_mbox_t watched;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 64));
    if (id == 1) {
        CHECK_OK(deck_mbox_clone(&watched, "watched"));
        for (int i = 0; i < 3; i++) util_post_numbered(&watched, &m, 1, i, 40 - NUMBERED_HEAD);
        util_sleep_ms(300);                     /* node 0 is waiting by then */
        _exit(0);                               /* no deck_done: an abrupt death */
    }
    CHECK_OK(deck_mbox_create(&watched, "watched"));
    CHECK_OK(deck_mbox_watch(&watched, 1));
    for (int i = 0; i < 3; i++) {
        int seq;
        CHECK(util_retrv_numbered(&watched, &m, &seq) == 1 && seq == i && m.len == 40);
    }
    long t0 = util_now_ms();
    CHECK_RC(deck_mbox_retrv(&watched, &m), DECK_EPEER);
    CHECK(util_now_ms() - t0 < EARLY_MS);
    CHECK_OK(deck_mbox_destroy(&watched));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

/* DECK_SPIN_US=-1 (main sets it for this run): every wait of a holder polls until its
 * message comes and none sleeps, so every poll finds something. */
static int spin_always_node(int id, int n, void *arg)
{
    const size_t sizes[] = { 64 };
    ping_pong(id, sizes, 1, 200);
    long hits, spins = tcp_wait_spins(&hits);
    if (spins == 0 || hits != spins) fprintf(stderr, "node %d: %ld waits polled, %ld found something\n", id, spins, hits);
    CHECK(spins > 0 && hits == spins);
    return 0;
}

/* DECK_SPIN_US=0: no wait polls. */
static int spin_off_node(int id, int n, void *arg)
{
    const size_t sizes[] = { 64 };
    ping_pong(id, sizes, 1, 200);
    long hits;
    CHECK(tcp_wait_spins(&hits) == 0 && hits == 0);
    return 0;
}

/* Node 0 waits `waits` times for ms on a mailbox nobody posts to, each wait timing out. */
static void wait_quietly(int waits, int ms)
{
    deck_mbox_t quiet;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 8));
    CHECK_OK(deck_mbox_create(&quiet, "quiet"));
    for (int i = 0; i < waits; i++) CHECK_RC(deck_mbox_retrv_timed(&quiet, &m, ms), DECK_ETIMEDOUT);
    CHECK_OK(deck_mbox_destroy(&quiet));
    CHECK_OK(deck_msg_destroy(&m));
}

/* The default window: a holder whose polls keep finding nothing stops polling but for a probe
 * now and then, so 100 waits of 2 ms on a quiet mailbox poll a few times, not 100. */
static int spin_backoff_node(int id, int n, void *arg)
{
    const size_t sizes[] = { 16 };
    ping_pong(id, sizes, 1, 10);            /* the connection is up: the holder has it to poll */
    if (id == 0) {
        long hits, before = tcp_wait_spins(&hits);
        wait_quietly(100, 2);
        long polled = tcp_wait_spins(&hits) - before;
        if (polled < 1 || polled > 25) fprintf(stderr, "100 quiet waits polled %ld times\n", polled);
        CHECK(polled >= 1 && polled <= 25);
    }
    CHECK_OK(deck_barrier());
    return 0;
}

/* A frame the holder stopped waiting for (its retriever's deadline passed) is read by its
 * reader, which must not inherit the holder's SO_RCVLOWAT: with the mark left at the frame's
 * missing bytes, a reader that has taken some of them sleeps in recv while the rest, fewer
 * than the mark, arrives, and nothing wakes it. Node 1 writes a DATA frame by hand on its
 * connection in 2000-byte pieces (small segments: the kernel's "window nearly closed" wake-up
 * stays out of it), first its header and half its payload, the rest 700 ms later. */
#define STALE_LEN   40000
#define STALE_PIECE 2000

static void send_pieces(int fd, const unsigned char *p, size_t n)
{
    for (size_t at = 0; at < n; at += STALE_PIECE) {
        size_t k = n - at < STALE_PIECE ? n - at : STALE_PIECE;
        CHECK(send(fd, p + at, k, MSG_NOSIGNAL) == (ssize_t)k);
    }
}

static int stale_lowat_node(int id, int n, void *arg)
{
    static unsigned char frame[TCP_FRAME_BYTES + STALE_LEN];
    deck_mbox_t big;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, STALE_LEN));
    if (id == 0) CHECK_OK(deck_mbox_create(&big, "big"));
    CHECK_OK(deck_barrier());                  /* "big" exists; the connection is up */
    if (id == 1) {
        int index;
        tcp_conn_t *c;
        CHECK_OK(tcp_peer_lookup(0, "big", 1000, &index));
        CHECK_OK(tcp_peer_conn(0, 1000, "test", &c));
        tcp_frame_t f = { .type = FRAME_DATA, .src = 1, .index = index, .len = STALE_LEN };
        tcp_frame_encode(frame, &f);
        for (int k = 0; k < STALE_LEN; k++) frame[TCP_FRAME_BYTES + k] = (unsigned char)(k * 7);
        size_t half = TCP_FRAME_BYTES + STALE_LEN / 2;
        deck_mutex_lock(&c->send_lock);        /* no other frame between the pieces */
        send_pieces(c->io.fd, frame, half);
        util_sleep_ms(700);
        send_pieces(c->io.fd, frame + half, sizeof frame - half);
        deck_mutex_unlock(&c->send_lock);
        tcp_conn_unref(c);
    } else {
        CHECK_RC(deck_mbox_retrv_timed(&big, &m, 300), DECK_ETIMEDOUT);  /* the holder waited */
        util_sleep_ms(200);                    /* its reader takes the connection meanwhile */
        CHECK_OK(deck_mbox_retrv_timed(&big, &m, 3000));
        CHECK(m.len == STALE_LEN);
        for (int k = 0; k < STALE_LEN; k++) CHECK((unsigned char)m.buf[k] == (unsigned char)(k * 7));
    }
    CHECK_OK(deck_barrier());
    if (id == 0) CHECK_OK(deck_mbox_destroy(&big));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

/* A holder that waits 600 ms on a quiet mailbox keeps its connection's reader parked: the reader
 * looks again every KEPT_WAIT_MS (10), about 60 times, not every grace (1 ms), which woke it 600
 * times. Each connection has its own reader, and these two nodes, whose first sends cross, each
 * dial the other (tcp_peer_conn): two connections. Mostly the holder has one of them and its
 * reader looks 58-60 times; one CI run under TSan had both readers parked, 121 looks. So the
 * bound is 120 per live connection; a reader woken every grace still fails it. */
static int idle_reader_node(int id, int n, void *arg)
{
    const size_t sizes[] = { 16 };
    ping_pong(id, sizes, 1, 10);            /* the connection is up, its reader parked or reading */
    if (id == 0) {
        long before = tcp_wait_reader_wakes();
        wait_quietly(1, 600);
        long wakes = tcp_wait_reader_wakes() - before;
        int conns = tcp_conns_live();
        if (wakes > 120L * conns)
            fprintf(stderr, "the parked readers of %d connections woke %ld times in 600 ms\n", conns, wakes);
        CHECK(conns >= 1 && wakes <= 120L * conns);
    }
    CHECK_OK(deck_barrier());
    return 0;
}

/* A connection that comes up while a retriever holds the role is not in what the holder polls:
 * its reader must read it meanwhile, not keep out until the holder's wait ends (5 s here; it
 * did, and the new peer's lookup went unanswered that long). Node 1 waits on "late" holding
 * the role over its connection to node 0 (up since the barrier); node 2, which has not talked
 * to node 1 yet, then connects to it, looks "late" up and posts. */
static int new_conn_node(int id, int n, void *arg)
{
    deck_mbox_t late;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 64));
    if (id == 1) CHECK_OK(deck_mbox_create(&late, "late"));
    CHECK_OK(deck_barrier());                  /* "late" exists; nodes 1 and 2 each have node 0 */
    if (id == 1) {
        long t0 = util_now_ms();
        int seq;
        CHECK(util_retrv_numbered(&late, &m, &seq) == 2 && seq == 5 && m.len == 40);
        long waited = util_now_ms() - t0;
        if (waited >= EARLY_MS) fprintf(stderr, "node 1 waited %ld ms for the new connection's message\n", waited);
        CHECK(waited < EARLY_MS);
    } else if (id == 2) {
        util_sleep_ms(300);                    /* node 1 holds the role by then */
        CHECK_OK(deck_mbox_clone_at(&late, 1, "late"));
        util_post_numbered(&late, &m, 2, 5, 40 - NUMBERED_HEAD);
    }
    CHECK_OK(deck_barrier());
    if (id != 0) CHECK_OK(deck_mbox_destroy(&late));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

int main(void)
{
    char slice[16];
    snprintf(slice, sizeof slice, "%d", SLICE_MS);
    setenv("DECK_TCP_WAIT_SLICE_MS", slice, 1);
    int failed = 0;
    failed += util_run_test_on("tcp", "waiting retrievers read their own messages", 2, own_reads_node, NULL);
    failed += util_run_test_on("tcp", "sizes around the buffer and the whole-frame wait", 2, sizes_node, NULL);
    failed += util_run_test_on("tcp", "a stream retrieved with apply: in order, handed over where it lies", 2,
                               apply_stream_node, NULL);
    failed += util_run_test_on("tcp", "deadline, post and destroy end the holder's wait", 2, wakes_node, NULL);
    failed += util_run_test_on("tcp", "a peer's death ends the holder's wait", 2, death_node, NULL);
    failed += util_run_test_on("tcp", "a frame the holder gave up on reaches its reader's recv", 2,
                               stale_lowat_node, NULL);
    failed += util_run_test_on("tcp", "a connection that comes while the role is held is read", 3,
                               new_conn_node, NULL);
    failed += util_run_test_on("tcp", "a reader parked behind a long wait looks again seldom", 2,
                               idle_reader_node, NULL);
    failed += util_run_test_on("tcp", "quiet waits stop polling but for probes", 2, spin_backoff_node, NULL);
    setenv("DECK_SPIN_US", "-1", 1);
    failed += util_run_test_on("tcp", "DECK_SPIN_US=-1: every wait polls until its message", 2,
                               spin_always_node, NULL);
    setenv("DECK_SPIN_US", "0", 1);
    failed += util_run_test_on("tcp", "DECK_SPIN_US=0: no wait polls", 2, spin_off_node, NULL);
    unsetenv("DECK_SPIN_US");
    return failed ? 1 : 0;
}
