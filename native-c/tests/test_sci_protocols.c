/*
 * The three DECK/SCI protocols between two processes on the sci transport (POSIX shared
 * memory): sizes on both sides of every threshold in a random mix (content and order checked,
 * so protocol interleavings keep the sender's order), protocol-1 ring wrap-around, protocol-2
 * rounds, a slow receiver, protocol 3 into a message-segment buffer (zero copy) and into a
 * plain malloc'ed buffer (chunked fallback), truncation, timeouts, a mailbox of one's own;
 * messages posted in pieces (deck_mbox_postv_keyed; as many as DECK_GATHER_MAX, more than
 * one vectored write takes) and retrieved in place (deck_mbox_retrv_apply), on sci and on tcp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util_deck.h"

#define BIG (1ul << 20)
#define CAP (3 * BIG + 64)        /* receiving messages: room for the 3 MiB chunked messages */
/* 40000: on tcp, a queued message in a reused buffer (qmsg.c keeps 16..65 KiB ones) */
static const unsigned long sizes[] = { 0, 1, 62, 63, 64, 1000, 8192, 8193, 40000, 100000, BIG };
#define NSIZES (sizeof sizes / sizeof sizes[0])

static unsigned char pat(int k, unsigned long j) { return (unsigned char)(k * 131 + j * 7 + (j >> 8)); }

/* Size of message k of a run with this seed: the same sequence on both sides. */
static unsigned long size_of(unsigned seed, int k)
{
    unsigned x = seed * 2654435761u + (unsigned)k * 40503u;
    x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
    return sizes[x % NSIZES];
}

static void fill(deck_msg_t *m, int k, unsigned long len)
{
    for (unsigned long j = 0; j < len; j++) m->buf[j] = (char)pat(k, j);
    m->len = len;
}

static void expect(const deck_msg_t *m, int k, unsigned long len)
{
    if (m->len != len) fprintf(stderr, "message %d: %lu bytes, expected %lu\n", k, m->len, len);
    CHECK(m->len == len);
    for (unsigned long j = 0; j < len; j++)
        if ((unsigned char)m->buf[j] != pat(k, j)) {
            fprintf(stderr, "message %d (%lu bytes): byte %lu differs\n", k, len, j);
            CHECK(!"content");
        }
}

typedef struct plan {
    int           count;
    unsigned      seed;           /* 0: sizes[] in turn */
    unsigned long fixed;          /* nonzero: every message this size (with seed 0) */
    int           receiver_waits_ms;
    int           slow_every;     /* receiver sleeps 1 ms every this many (0: never) */
    int           plain_buffer;   /* receive into a malloc'ed buffer, not the message segment */
    int           p2_then_p1;     /* 300 protocol-2 messages, then protocol 1 and 2 alternating */
    int           pieces;         /* the sender posts each message in pieces: THREE or GATHER_MAX */
    int           apply;          /* the receiver takes each with deck_mbox_retrv_apply */
} plan_t;

static unsigned long plan_size(const plan_t *p, int k)
{
    if (p->p2_then_p1) return k < 300 || k % 2 ? 63 : 10;
    if (p->fixed) return p->fixed - 1 + (unsigned long)(k % 3) * (p->fixed > 70 ? 20 : 0);
    return p->seed ? size_of(p->seed, k) : sizes[k % NSIZES];
}

/* What the function given to deck_mbox_retrv_apply saw. */
typedef struct applied {
    const plan_t    *plan;
    const deck_msg_t *scratch;
    int              k, calls, in_place;
} applied_t;

static void check_applied(const deck_msg_t *msg, void *arg)
{
    applied_t *a = arg;
    expect(msg, a->k, plan_size(a->plan, a->k));
    CHECK(msg->src == 1);
    a->calls++;
    a->in_place += msg != a->scratch;
}

enum { THREE = 1, GATHER_MAX };

/* What deck_mbox_retrv_apply handed over from a mailbox of this process, posted to by it. */
static void check_own(const deck_msg_t *msg, void *arg)
{
    applied_t *a = arg;
    expect(msg, a->k, 5000);
    CHECK(msg->src == 0);
    a->calls++;
    a->in_place += msg != a->scratch;
}

/* Message k posted as [0, len/3), an empty piece, [len/3, len); or cut into DECK_GATHER_MAX
 * pieces of len / DECK_GATHER_MAX bytes or one more (many of them empty for a short message). */
static void post_in_pieces(deck_mbox_t *mb, const deck_msg_t *m, int how)
{
    static struct iovec iov[DECK_GATHER_MAX];
    unsigned long third = m->len / 3;
    int cnt = how == THREE ? 3 : DECK_GATHER_MAX;
    if (how == THREE) {
        iov[0] = (struct iovec){ m->buf, third };
        iov[1] = (struct iovec){ m->buf + third, 0 };
        iov[2] = (struct iovec){ m->buf + third, m->len - third };
    } else {
        for (unsigned long i = 0, at = 0; i < DECK_GATHER_MAX; i++) {
            unsigned long end = m->len * (i + 1) / DECK_GATHER_MAX;
            iov[i] = (struct iovec){ m->buf + at, end - at };
            at = end;
        }
    }
    CHECK_OK(deck_mbox_postv_keyed(mb, iov, cnt, DECK_KEY_ANY));
}

static int stream_node(int id, int n, void *arg)
{
    const plan_t *p = arg;
    deck_mbox_t mb;
    deck_msg_t m;
    if (id == 0) {
        if (p->plain_buffer) {
            m = (deck_msg_t){ .buf = malloc(CAP), .size = CAP };
            CHECK(m.buf != NULL);
        } else {
            CHECK_OK(deck_msg_create(&m, CAP));
            const char *tp = getenv("DECK_TRANSPORT");
            CHECK(m.impl != NULL || strcmp(tp, "tcp") == 0);   /* sci: above the limit, in the message segment */
        }
        CHECK_OK(deck_mbox_create(&mb, "stream"));
        if (p->receiver_waits_ms) util_sleep_ms(p->receiver_waits_ms);
        applied_t a = { .plan = p, .scratch = &m };
        for (int k = 0; k < p->count; k++) {
            if (p->slow_every && k % p->slow_every == 0) util_sleep_ms(1);
            if (p->apply) {
                a.k = k;
                CHECK_OK(deck_mbox_retrv_apply(&mb, &m, -1, check_applied, &a));
                CHECK(a.calls == k + 1);
            } else {
                CHECK_OK(deck_mbox_retrv(&mb, &m));
                expect(&m, k, plan_size(p, k));
            }
        }
        /* sci hands protocol-2 messages over in place; tcp every message (the one it read) */
        const char *transport = getenv("DECK_TRANSPORT");
        if (p->apply) CHECK(transport && strcmp(transport, "sci") == 0 ? a.in_place > 0 : a.in_place == p->count);
    } else {
        CHECK_OK(deck_msg_create(&m, CAP));
        CHECK_OK(deck_mbox_clone(&mb, "stream"));
        for (int k = 0; k < p->count; k++) {
            fill(&m, k, plan_size(p, k));
            if (p->pieces) post_in_pieces(&mb, &m, p->pieces);
            else CHECK_OK(deck_mbox_post(&mb, &m));
        }
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));
    if (id == 0 && p->plain_buffer) free(m.buf);
    else CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

/* Truncation leaves the message in place for every protocol; timeouts; posting to oneself. */
static int edges_node(int id, int n, void *arg)
{
    deck_mbox_t mb, self_in, self_out;
    deck_msg_t small, big;
    CHECK_OK(deck_msg_create(&small, 10));
    CHECK_OK(deck_msg_create(&big, 20000));
    if (id == 0) {
        CHECK_OK(deck_mbox_create(&mb, "edges"));
        CHECK_RC(deck_mbox_retrv_timed(&mb, &small, 0), DECK_ETIMEDOUT);
        long t0 = util_now_ms();
        CHECK_RC(deck_mbox_retrv_timed(&mb, &small, 60), DECK_ETIMEDOUT);
        CHECK(util_now_ms() - t0 >= 55);
        CHECK_OK(deck_barrier());                          /* node 1 posts 40, 5000, 20000 bytes */
        for (int k = 0; k < 3; k++) {
            unsigned long len = k == 0 ? 40 : k == 1 ? 5000 : 20000;
            CHECK_RC(deck_mbox_retrv(&mb, &small), DECK_ETRUNC);
            CHECK_OK(deck_mbox_retrv(&mb, &big));
            expect(&big, k, len);
        }
        /* a mailbox of this process, posted to by this process */
        CHECK_OK(deck_mbox_create(&self_in, "mine"));
        CHECK_OK(deck_mbox_clone(&self_out, "mine"));
        CHECK(self_out.node == 0);
        for (int k = 0; k < 3; k++) {
            fill(&big, k, sizes[k * 3 + 1]);
            CHECK_OK(deck_mbox_post(&self_out, &big));
        }
        for (int k = 0; k < 3; k++) {
            CHECK_OK(deck_mbox_retrv(&self_in, &big));
            expect(&big, k, sizes[k * 3 + 1]);
        }
        /* handed over in place from the queue, bounded by the scratch's size as a retrieve is */
        for (int k = 0; k < 2; k++) {
            fill(&big, k, 5000);
            CHECK_OK(deck_mbox_post(&self_out, &big));
        }
        applied_t own = { .scratch = &small };
        CHECK_RC(deck_mbox_retrv_apply(&self_in, &small, -1, check_own, &own), DECK_ETRUNC);
        CHECK(own.calls == 0);
        own.scratch = &big;
        for (own.k = 0; own.k < 2; own.k++) CHECK_OK(deck_mbox_retrv_apply(&self_in, &big, -1, check_own, &own));
        CHECK(own.calls == 2 && own.in_place == 2);
        CHECK_OK(deck_mbox_destroy(&self_out));
        CHECK_OK(deck_mbox_destroy(&self_in));
    } else {
        CHECK_OK(deck_mbox_clone(&mb, "edges"));
        CHECK_OK(deck_barrier());
        for (int k = 0; k < 3; k++) {
            fill(&big, k, k == 0 ? 40 : k == 1 ? 5000 : 20000);
            CHECK_OK(deck_mbox_post(&mb, &big));
        }
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));
    if (id == 1) CHECK_RC(deck_mbox_post(&mb, &small), DECK_ESTATE);   /* handle destroyed */
    CHECK_OK(deck_msg_destroy(&small));
    CHECK_OK(deck_msg_destroy(&big));
    return 0;
}

/* Big messages live in the message segment and give their space back when destroyed; one
 * that does not fit any more is an ordinary heap message. Run with DECK_MSEG_SIZE = 2 MiB. */
static int mseg_node(int id, int n, void *arg)
{
    deck_msg_t a, b, small, huge;
    for (int i = 0; i < 50; i++) {
        CHECK_OK(deck_msg_create(&a, 700000));
        CHECK_OK(deck_msg_create(&b, 700000));
        CHECK(a.impl != NULL && b.impl != NULL);
        CHECK(b.buf >= a.buf + 700000 || a.buf >= b.buf + 700000);
        memset(a.buf, 1, a.size);
        memset(b.buf, 2, b.size);
        CHECK(a.buf[a.size - 1] == 1);
        CHECK_OK(deck_msg_destroy(&b));
        CHECK_OK(deck_msg_destroy(&a));
    }
    CHECK_OK(deck_msg_create(&small, 8192));
    CHECK_OK(deck_msg_create(&huge, 3u << 20));
    CHECK(small.impl == NULL && huge.impl == NULL);
    memset(huge.buf, 3, huge.size);
    CHECK_OK(deck_msg_destroy(&huge));
    CHECK_OK(deck_msg_destroy(&small));
    return 0;
}

int main(void)
{
    setenv("DECK_TRANSPORT", "sci", 1);
    int failed = 0;
    plan_t every_size = { .count = 3 * NSIZES };
    plan_t mixed = { .count = 400, .seed = 7 };
    plan_t ring_wrap = { .count = 300, .fixed = 30, .receiver_waits_ms = 150 };   /* > 64 queued */
    plan_t rounds = { .count = 8000, .fixed = 1000 };     /* > 256 rounds: the round byte wraps too */
    /* Every third message is 8192 bytes (the others go by protocol 3), which take 8256 bytes
     * of the protocol-2 buffer: three fill the default 24768 exactly, leaving no room for a
     * wrap line, so both sides wrap by themselves (sci.h). */
    plan_t rounds_exact = { .count = 3000, .fixed = 8193 };
    plan_t slow = { .count = 300, .seed = 11, .slow_every = 5 };
    plan_t fallback = { .count = 120, .seed = 3, .plain_buffer = 1 };
    plan_t chunked = { .count = 6, .fixed = 3 * BIG, .plain_buffer = 1 };        /* 3 windows each */
    failed |= util_run_test("sci_every_size_in_turn", 2, stream_node, &every_size);
    failed |= util_run_test("sci_random_mix_keeps_order", 2, stream_node, &mixed);
    failed |= util_run_test("sci_protocol1_ring_wraps", 2, stream_node, &ring_wrap);
    failed |= util_run_test("sci_protocol2_rounds", 2, stream_node, &rounds);
    failed |= util_run_test("sci_protocol2_rounds_without_wrap_line", 2, stream_node, &rounds_exact);
    failed |= util_run_test("sci_slow_receiver", 2, stream_node, &slow);
    failed |= util_run_test("sci_protocol3_fallback_mixed", 2, stream_node, &fallback);
    failed |= util_run_test("sci_protocol3_chunked_3MiB", 2, stream_node, &chunked);
    failed |= util_run_test("sci_truncation_timeouts_self", 2, edges_node, NULL);
    /* More than 256 messages ahead of a protocol-1 packet: its 8-bit sequence number agrees
     * with the expected one long before its turn, and must still wait for it. */
    plan_t seq_wrap = { .count = 600, .p2_then_p1 = 1, .receiver_waits_ms = 150 };
    setenv("DECK_MEDBUF_SIZE", "1048576", 1);
    failed |= util_run_test("sci_sequence_byte_wraps_while_queued", 2, stream_node, &seq_wrap);
    unsetenv("DECK_MEDBUF_SIZE");
    setenv("DECK_MSEG_SIZE", "2097152", 1);
    failed |= util_run_test("sci_message_segment_reuses_space", 1, mseg_node, NULL);
    unsetenv("DECK_MSEG_SIZE");
    plan_t gathered = { .count = 400, .seed = 7, .pieces = THREE };
    plan_t in_place = { .count = 400, .seed = 5, .apply = 1 };
    plan_t both = { .count = 400, .seed = 9, .pieces = THREE, .apply = 1, .slow_every = 20 };
    plan_t most_pieces = { .count = 60, .seed = 11, .pieces = GATHER_MAX, .apply = 1 };
    failed |= util_run_test("sci_posts_in_pieces", 2, stream_node, &gathered);
    failed |= util_run_test("sci_retrieves_applied_in_place", 2, stream_node, &in_place);
    failed |= util_run_test("sci_pieces_applied_slow_receiver", 2, stream_node, &both);
    failed |= util_run_test("sci_posts_in_the_most_pieces", 2, stream_node, &most_pieces);
    setenv("DECK_TRANSPORT", "tcp", 1);
    failed |= util_run_test("tcp_pieces_written_vectored_applied_in_place", 2, stream_node, &both);
    failed |= util_run_test("tcp_posts_in_more_pieces_than_one_write_takes", 2, stream_node, &most_pieces);
    failed |= util_run_test("tcp_truncation_timeouts_self", 2, edges_node, NULL);
    return failed;
}
