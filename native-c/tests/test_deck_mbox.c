/*
 * Mailboxes in static runs of 2..3 forked processes over the TCP transport (free ports found at
 * run time): ordering, many senders, many mailboxes, clone, truncation, timeouts, peer death,
 * barrier. Every node function returns 0 on success; CHECK exits the process on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util_deck.h"
#include "util_numbered.h"

#define MAX_BODY 5000

/* Body of message `seq` of `sender`: 0 .. MAX_BODY-1 bytes, varying. */
static unsigned long body_of(int sender, int seq) { return (unsigned long)((seq * sender * 37) % MAX_BODY); }

/* 3000 messages of varying sizes from node 1 arrive at node 0 in order, intact. */
static int fifo_node(int id, int n, void *arg)
{
    deck_mbox_t mb;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, MAX_BODY + 8));
    if (id == 0) {
        CHECK_OK(deck_mbox_create(&mb, "fifo"));
        for (int i = 0; i < 3000; i++) {
            int seq;
            CHECK(util_retrv_numbered(&mb, &m, &seq) == 1);
            CHECK(seq == i);
            CHECK(m.len == 8 + body_of(1, i));
        }
    } else {
        CHECK_OK(deck_mbox_clone(&mb, "fifo"));
        CHECK(mb.node == 0 && mb.kind == DECK_MBOX_CLONED);
        for (int i = 0; i < 3000; i++) util_post_numbered(&mb, &m, 1, i, body_of(1, i));
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

/* Nodes 1 and 2 post into node 0's one mailbox at once: each sender's order is kept. */
static int senders_node(int id, int n, void *arg)
{
    enum { PER_SENDER = 1500 };
    deck_mbox_t mb;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, MAX_BODY + 8));
    if (id == 0) {
        CHECK_OK(deck_mbox_create(&mb, "sink"));
        util_expect_in_order(&mb, &m, (n - 1) * PER_SENDER, 1, n - 1, body_of);
    } else {
        CHECK_OK(deck_mbox_clone(&mb, "sink"));
        for (int i = 0; i < PER_SENDER; i++) util_post_numbered(&mb, &m, id, i, body_of(id, i));
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

/* 16 MiB posted into 63 mailboxes nobody is reading (far beyond the socket buffers) must not
 * hold up mailbox 0, which node 0 serves first; afterwards all the rest is there, in order. */
static int many_mailboxes_node(int id, int n, void *arg)
{
    enum { BOXES = 64, PER_BOX = 4, BIG = 64 * 1024 };
    deck_mbox_t mb[BOXES];
    deck_msg_t m;
    char name[32];
    CHECK_OK(deck_msg_create(&m, BIG + 8));
    for (int b = 0; b < BOXES; b++) {
        snprintf(name, sizeof name, "box-%d", b);
        CHECK_OK(id == 0 ? deck_mbox_create(&mb[b], name) : deck_mbox_clone(&mb[b], name));
    }
    if (id == 1) {
        for (int b = 1; b < BOXES; b++)
            for (int i = 0; i < PER_BOX; i++) util_post_numbered(&mb[b], &m, b, i, BIG);
        util_post_numbered(&mb[0], &m, 0, 0, 100);
    } else {
        int seq;
        CHECK(util_retrv_numbered(&mb[0], &m, &seq) == 0 && seq == 0);
        for (int b = BOXES - 1; b >= 1; b--)      /* the opposite order of posting */
            for (int i = 0; i < PER_BOX; i++) {
                CHECK(util_retrv_numbered(&mb[b], &m, &seq) == b);
                CHECK(seq == i);
            }
        CHECK_RC(deck_mbox_retrv_timed(&mb[7], &m, 0), DECK_ETIMEDOUT);
    }
    CHECK_OK(deck_barrier());
    for (int b = 0; b < BOXES; b++) CHECK_OK(deck_mbox_destroy(&mb[b]));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

/* clone waits for a mailbox created later; an absent name ends in ENOTFOUND after the bound. */
static int clone_node(int id, int n, void *arg)
{
    deck_mbox_t mb, none;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 64));
    if (id == 0) {
        util_sleep_ms(300);
        CHECK_OK(deck_mbox_create(&mb, "late"));
        CHECK_RC(deck_mbox_create(&none, "late"), DECK_EEXIST);
        int v;
        CHECK_OK(deck_mbox_retrv(&mb, &m));
        CHECK_OK(deck_msg_unpack(&m, DECK_INT, &v, 1));
        CHECK(v == 4242);
    } else {
        long t0 = util_now_ms();
        CHECK_OK(deck_mbox_clone(&mb, "late"));
        CHECK(util_now_ms() - t0 >= 200);
        int v = 4242;
        CHECK_OK(deck_msg_pack(&m, DECK_INT, &v, 1));
        CHECK_OK(deck_mbox_post(&mb, &m));
        setenv("DECK_CLONE_TIMEOUT_MS", "200", 1);
        t0 = util_now_ms();
        CHECK_RC(deck_mbox_clone(&none, "nobody-has-this"), DECK_ENOTFOUND);
        CHECK(util_now_ms() - t0 >= 200);
        CHECK(strstr(deck_last_error(), "nobody-has-this") != NULL);
        CHECK_RC(deck_mbox_retrv(&mb, &m), DECK_ESTATE);    /* a clone only sends */
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

/* A message larger than the receiving one: ETRUNC, and it stays queued for a larger one. */
static int trunc_and_timeout_node(int id, int n, void *arg)
{
    deck_mbox_t mb;
    deck_msg_t small, big;
    CHECK_OK(deck_msg_create(&small, 50));
    CHECK_OK(deck_msg_create(&big, 100));
    if (id == 0) {
        CHECK_OK(deck_mbox_create(&mb, "trunc"));
        long t0 = util_now_ms();
        CHECK_RC(deck_mbox_retrv_timed(&mb, &big, 0), DECK_ETIMEDOUT);
        CHECK_RC(deck_mbox_retrv_timed(&mb, &big, 150), DECK_ETIMEDOUT);
        CHECK(util_now_ms() - t0 >= 150);
        CHECK_OK(deck_barrier());                        /* node 1 may post now */
        CHECK_RC(deck_mbox_retrv(&mb, &small), DECK_ETRUNC);
        CHECK(strstr(deck_last_error(), "100 bytes") != NULL);
        CHECK_OK(deck_mbox_retrv_timed(&mb, &big, 5000));
        CHECK(big.len == 100);
        for (int k = 0; k < 100; k++) CHECK(big.buf[k] == (char)(k * 3));
        CHECK_OK(deck_mbox_retrv_timed(&mb, &small, -1));  /* the next one fits */
        CHECK(small.len == 1 && small.buf[0] == 'z');
    } else {
        CHECK_OK(deck_mbox_clone(&mb, "trunc"));
        CHECK_OK(deck_barrier());
        for (int k = 0; k < 100; k++) big.buf[k] = (char)(k * 3);
        CHECK_OK(deck_msg_setlength(&big, 100));
        CHECK_OK(deck_mbox_post(&mb, &big));
        CHECK_OK(deck_msg_clear(&small));
        CHECK_OK(deck_msg_pack(&small, DECK_CHAR, "z", 1));
        CHECK_OK(deck_mbox_post(&mb, &small));
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));
    CHECK_OK(deck_msg_destroy(&small));
    CHECK_OK(deck_msg_destroy(&big));
    return 0;
}

/* Node 1 dies abruptly: node 0 still gets what it posted, then DECK_EPEER on the watched
 * mailbox, and posting to the dead node fails instead of hanging or raising SIGPIPE. */
static int peer_death_node(int id, int n, void *arg)
{
    deck_mbox_t watched, other;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 64));
    if (id == 1) {
        CHECK_OK(deck_mbox_create(&other, "node1"));
        CHECK_OK(deck_mbox_clone(&watched, "watched"));
        for (int i = 0; i < 3; i++) util_post_numbered(&watched, &m, 1, i, 10);
        CHECK_OK(deck_mbox_retrv(&other, &m));          /* node 0 says "die now" */
        _exit(0);                                       /* no deck_done: an abrupt death */
    }
    CHECK_OK(deck_mbox_create(&watched, "watched"));
    CHECK_OK(deck_mbox_watch(&watched, 1));
    CHECK_OK(deck_mbox_clone(&other, "node1"));
    CHECK_OK(deck_mbox_post(&other, &m));
    for (int i = 0; i < 3; i++) {
        int seq;
        CHECK(util_retrv_numbered(&watched, &m, &seq) == 1 && seq == i);
    }
    CHECK_RC(deck_mbox_retrv(&watched, &m), DECK_EPEER);
    CHECK_RC(deck_mbox_retrv_timed(&watched, &m, 1000), DECK_EPEER);
    int rc = deck_mbox_post(&other, &m);
    CHECK(rc == DECK_EPEER || rc == DECK_EIO);
    CHECK(strstr(deck_last_error(), "node 1") != NULL);
    CHECK_OK(deck_mbox_destroy(&watched));
    CHECK_OK(deck_mbox_destroy(&other));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

/* The barrier holds everyone until the last process arrives, many rounds in a row. */
static int barrier_node(int id, int n, void *arg)
{
    for (int round = 0; round < 20; round++) {
        if (round == 5 && id == n - 1) util_sleep_ms(300);
        long t0 = util_now_ms();
        CHECK_OK(deck_barrier());
        if (round == 5 && id != n - 1) CHECK(util_now_ms() - t0 >= 250);
    }
    CHECK(deck_node() == id && deck_numnodes() == n);
    return 0;
}

/* A slot reused 32768 times wraps its generation: the index must never become 0 ("none"). */
static int reuse_node(int id, int n, void *arg)
{
    deck_mbox_t mb;
    deck_msg_t m;
    int last = 0;
    for (int round = 0; round < 0x8000 + 2; round++) {
        CHECK_OK(deck_mbox_create(&mb, "reused"));
        CHECK(mb.index != 0 && mb.index != last);
        last = mb.index;
        if (round < 0x8000 + 1) CHECK_OK(deck_mbox_destroy(&mb));
    }
    deck_mbox_t self;
    CHECK_OK(deck_mbox_clone(&self, "reused"));
    CHECK_OK(deck_msg_create(&m, 16));
    m.len = 5;
    memcpy(m.buf, "again", 5);
    CHECK_OK(deck_mbox_post(&self, &m));
    CHECK_OK(deck_msg_clear(&m));
    CHECK_OK(deck_mbox_retrv(&mb, &m));
    CHECK(m.len == 5 && memcmp(m.buf, "again", 5) == 0);
    CHECK_OK(deck_mbox_destroy(&self));
    CHECK_OK(deck_mbox_destroy(&mb));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

int main(void)
{
    int failed = 0;
    failed += util_run_test("fifo order, varying sizes", 2, fifo_node, NULL);
    failed += util_run_test("several senders keep their order", 3, senders_node, NULL);
    failed += util_run_test("unread mailboxes do not block others", 2, many_mailboxes_node, NULL);
    failed += util_run_test("clone waits, then times out", 2, clone_node, NULL);
    failed += util_run_test("ETRUNC keeps the message, retrv_timed", 2, trunc_and_timeout_node, NULL);
    /* Both nodes connect to each other at once there, so two connections may carry the pair's
     * frames: what node 1 posted on one must arrive before the end of the other says it left. */
    for (int round = 0; round < 10; round++) failed += util_run_test("peer death", 2, peer_death_node, NULL);
    failed += util_run_test("barrier", 3, barrier_node, NULL);
    failed += util_run_test("a slot's 32768th mailbox", 1, reuse_node, NULL);
    return failed ? 1 : 0;
}
