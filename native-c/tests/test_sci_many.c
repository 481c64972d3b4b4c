/*
 * The sci transport with more parties: three and four processes posting into one mailbox
 * (each sender's order kept across the three protocols), two threads of one process posting
 * to one mailbox, many mailboxes per process, and a mailbox destroyed and created again under
 * the same name while a peer holds a handle to the old one.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util_deck.h"
#include "util_numbered.h"

#define BIG 100000ul
static const unsigned long sizes[] = { 8, 20, 62, 63, 64, 1000, 8192, 8193, BIG };
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Message sizes across the protocol thresholds; the body is what follows the 8-byte number. */
static unsigned long body_of(int sender, int seq) { return sizes[(unsigned)(sender * 7 + seq * 13 + seq / 5) % NSIZES] - 8; }

static void post_numbered(deck_mbox_t *to, deck_msg_t *m, int sender, int seq)
{
    util_post_numbered(to, m, sender, seq, body_of(sender, seq));
}

enum { PER_SENDER = 300 };

/* Nodes 1..n-1 post into node 0's one mailbox at once. */
static int senders_node(int id, int n, void *arg)
{
    deck_mbox_t mb;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, BIG));
    if (id == 0) {
        CHECK_OK(deck_mbox_create(&mb, "sink"));
        util_expect_in_order(&mb, &m, (n - 1) * PER_SENDER, 1, n - 1, body_of);
    } else {
        CHECK_OK(deck_mbox_clone(&mb, "sink"));
        for (int i = 0; i < PER_SENDER; i++) post_numbered(&mb, &m, id, i);
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

typedef struct poster { deck_mbox_t *mb; int sender; } poster_t;

static void *post_thread(void *arg)
{
    poster_t *p = arg;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, BIG));
    for (int i = 0; i < PER_SENDER; i++) post_numbered(p->mb, &m, p->sender, i);
    CHECK_OK(deck_msg_destroy(&m));
    return NULL;
}

/* Two threads of node 1 (senders 1 and 2) share one cloned handle. */
static int threads_node(int id, int n, void *arg)
{
    deck_mbox_t mb;
    if (id == 0) {
        deck_msg_t m;
        CHECK_OK(deck_msg_create(&m, BIG));
        CHECK_OK(deck_mbox_create(&mb, "shared"));
        util_expect_in_order(&mb, &m, 2 * PER_SENDER, 1, 2, body_of);
        CHECK_OK(deck_msg_destroy(&m));
    } else {
        CHECK_OK(deck_mbox_clone(&mb, "shared"));
        poster_t a = { &mb, 1 }, b = { &mb, 2 };
        deck_thread_t ta, tb;
        CHECK_OK(deck_thread_create(&ta, post_thread, &a));
        CHECK_OK(deck_thread_create(&tb, post_thread, &b));
        CHECK_OK(deck_thread_join(ta, NULL));
        CHECK_OK(deck_thread_join(tb, NULL));
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));
    return 0;
}

enum { BOXES = 20 };

/* Every node has BOXES mailboxes; every node posts two messages into each mailbox of the others. */
static int many_boxes_node(int id, int n, void *arg)
{
    deck_mbox_t own[BOXES], to;
    deck_msg_t m;
    char name[64];
    CHECK_OK(deck_msg_create(&m, 4000));
    for (int b = 0; b < BOXES; b++) {
        snprintf(name, sizeof name, "box-%d-%d", id, b);
        CHECK_OK(deck_mbox_create(&own[b], name));
    }
    for (int peer = 0; peer < n; peer++) {
        if (peer == id) continue;
        for (int b = 0; b < BOXES; b++) {
            snprintf(name, sizeof name, "box-%d-%d", peer, b);
            CHECK_OK(deck_mbox_clone(&to, name));
            CHECK(to.node == peer);
            for (int k = 0; k < 2; k++) {
                unsigned long len = k ? 3000 : 40;
                int tag = id * 1000 + b * 10 + k;
                memset(m.buf, 0, len);
                memcpy(m.buf, &tag, 4);
                m.len = len;
                CHECK_OK(deck_mbox_post(&to, &m));
            }
            CHECK_OK(deck_mbox_destroy(&to));
        }
    }
    for (int b = 0; b < BOXES; b++) {
        int next_k[8] = { 0 };
        for (int i = 0; i < 2 * (n - 1); i++) {
            int tag;
            CHECK_OK(deck_mbox_retrv(&own[b], &m));
            memcpy(&tag, m.buf, 4);
            int from = tag / 1000, box = tag / 10 % 100, k = tag % 10;
            CHECK(from != id && from < n && box == b);
            CHECK(k == next_k[from]);
            CHECK(m.len == (k ? 3000ul : 40ul));
            next_k[from]++;
        }
    }
    CHECK_OK(deck_barrier());
    for (int b = 0; b < BOXES; b++) CHECK_OK(deck_mbox_destroy(&own[b]));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

/* A handle to a destroyed mailbox fails with ENOTFOUND; a new clone reaches the new one. */
static int recreate_node(int id, int n, void *arg)
{
    deck_mbox_t mb;
    deck_msg_t m;
    int v;
    CHECK_OK(deck_msg_create(&m, 16));
    if (id == 0) {
        for (int round = 0; round < 2; round++) {
            CHECK_OK(deck_mbox_create(&mb, "again"));
            CHECK_OK(deck_barrier());
            CHECK_OK(deck_mbox_retrv(&mb, &m));
            CHECK_OK(deck_msg_unpack(&m, DECK_INT, &v, 1));
            CHECK(v == round + 10);
            CHECK_OK(deck_mbox_destroy(&mb));
            CHECK_OK(deck_barrier());
        }
    } else {
        deck_mbox_t old;
        for (int round = 0; round < 2; round++) {
            CHECK_OK(deck_barrier());
            CHECK_OK(deck_mbox_clone(&mb, "again"));
            if (round == 1) {
                CHECK(mb.index != old.index);
                CHECK_OK(deck_msg_clear(&m));
                CHECK_OK(deck_msg_pack(&m, DECK_INT, &v, 1));
                CHECK_RC(deck_mbox_post(&old, &m), DECK_ENOTFOUND);
                CHECK_OK(deck_mbox_destroy(&old));
            }
            v = round + 10;
            CHECK_OK(deck_msg_clear(&m));
            CHECK_OK(deck_msg_pack(&m, DECK_INT, &v, 1));
            CHECK_OK(deck_mbox_post(&mb, &m));
            old = mb;
            CHECK_OK(deck_barrier());
        }
        CHECK_OK(deck_mbox_destroy(&mb));
    }
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

typedef struct blocked { deck_mbox_t *mb; int rc; } blocked_t;

static void *retrieve_until_destroyed(void *arg)
{
    blocked_t *b = arg;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 16));
    b->rc = deck_mbox_retrv(b->mb, &m);
    CHECK_OK(deck_msg_destroy(&m));
    return NULL;
}

/* A retriever blocked on the doorbell wakes with ECLOSED when its mailbox is destroyed. */
static int destroy_wakes_node(int id, int n, void *arg)
{
    deck_mbox_t mb;
    CHECK_OK(deck_mbox_create(&mb, "doomed"));
    blocked_t b = { &mb, 1 };
    deck_thread_t t;
    CHECK_OK(deck_thread_create(&t, retrieve_until_destroyed, &b));
    util_sleep_ms(100);                      /* long past the polling: it sleeps on the futex */
    deck_mbox_t copy = mb;                   /* the thread keeps reading mb while we destroy */
    CHECK_OK(deck_mbox_destroy(&copy));
    CHECK_OK(deck_thread_join(t, NULL));
    CHECK_RC(b.rc, DECK_ECLOSED);
    return 0;
}

int main(void)
{
    setenv("DECK_TRANSPORT", "sci", 1);
    int failed = 0;
    failed |= util_run_test("sci_three_senders_one_mailbox", 4, senders_node, NULL);
    failed |= util_run_test("sci_two_senders_one_mailbox", 3, senders_node, NULL);
    failed |= util_run_test("sci_two_threads_one_handle", 2, threads_node, NULL);
    failed |= util_run_test("sci_many_mailboxes", 3, many_boxes_node, NULL);
    failed |= util_run_test("sci_mailbox_recreated", 2, recreate_node, NULL);
    failed |= util_run_test("sci_destroy_wakes_retriever", 1, destroy_wakes_node, NULL);
    return failed;
}
