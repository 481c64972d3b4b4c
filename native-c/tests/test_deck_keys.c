/*
 * Keyed wake-ups (deck.h, deck_mbox_post_keyed / deck_mbox_key_*): a keyed post wakes the
 * thread waiting for its key and not the plain waiter; a keyed post whose key nobody waits for
 * wakes the plain waiter; a plain post wakes everybody; a local ring wakes its key only; a message
 * queued without a key (to oneself) wakes the plain waiter only; a keyed post for the key the
 * poller looks for wakes nobody, and DECK_POLL polls without sleeping; a quiet post wakes its
 * key's sleeper and nobody else, waits in the mailbox for the next retrieve, and never holds up
 * its sender: one that must wait for room rings the receiver first; tcp has no
 * doorbell, so the calls say so and a keyed post (quiet too) is a plain one. "Woken" is told from "timed
 * out" by the wait's length against its bound (woken: well under it; not woken: the whole
 * bound); the bounds are seconds apart, so load cannot blur them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util_deck.h"
#include "../deck/sci.h"

#define LONG_MS   8000        /* a wait that must be ended by a ring */
#define SHORT_MS  1500        /* a wait that must run out: nothing of its key comes */

typedef struct waiter {
    deck_mbox_t *mb;
    int          key;         /* DECK_KEY_ANY: the plain waiter */
    uint32_t     seen;
    int          timeout_ms;
    long         took_ms;
    pthread_t    thread;
} waiter_t;

static void *wait_thread(void *arg)
{
    waiter_t *w = arg;
    long t0 = util_now_ms();
    CHECK_OK(deck_mbox_key_wait(w->mb, w->key, w->seen, w->timeout_ms));
    w->took_ms = util_now_ms() - t0;
    return NULL;
}

/* Starts a waiter and returns once it sleeps on the doorbell (its count shows there). */
static void start_waiter(waiter_t *w, deck_mbox_t *mb, int key, int timeout_ms)
{
    deck_bell_t *b = sci_mbox_bell_of(mb->index);
    CHECK(b != NULL);
    uint32_t before = key == DECK_KEY_ANY ? __atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST)
                                          : __atomic_load_n(&b->key_sleepers[key], __ATOMIC_SEQ_CST);
    *w = (waiter_t){ .mb = mb, .key = key, .timeout_ms = timeout_ms };
    CHECK_OK(deck_mbox_key_seen(mb, &w->seen));
    CHECK(pthread_create(&w->thread, NULL, wait_thread, w) == 0);
    for (int i = 0; i < 5000; i++) {
        uint32_t now = key == DECK_KEY_ANY ? __atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST)
                                           : __atomic_load_n(&b->key_sleepers[key], __ATOMIC_SEQ_CST);
        if (now > before) {
            util_sleep_ms(20);   /* from armed to inside the futex wait */
            return;
        }
        util_sleep_ms(1);
    }
    CHECK(!"the waiter never armed");
}

static void join(waiter_t *w) { CHECK(pthread_join(w->thread, NULL) == 0); }

static void post(deck_mbox_t *mb, int key, unsigned char tag)
{
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 16));
    memset(m.buf, tag, 16);
    m.len = 16;
    CHECK_OK(deck_mbox_post_keyed(mb, &m, key));
    CHECK_OK(deck_msg_destroy(&m));
}

static void post_quiet(deck_mbox_t *mb, int key, unsigned char tag)
{
    unsigned char buf[16];
    memset(buf, tag, sizeof buf);
    struct iovec piece = { .iov_base = buf, .iov_len = sizeof buf };
    CHECK_OK(deck_mbox_postv_quiet(mb, &piece, 1, key));
}

/* A plain waiter that takes messages as it is woken, until it has `want` of them. */
typedef struct drainer {
    deck_mbox_t *mb;
    int          want, got;
    pthread_t    thread;
} drainer_t;

static void *drain_thread(void *arg)
{
    drainer_t *d = arg;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 16));
    long t0 = util_now_ms();
    while (d->got < d->want && util_now_ms() - t0 < 2 * LONG_MS) {
        uint32_t seen;
        CHECK_OK(deck_mbox_key_seen(d->mb, &seen));   /* before the look: no ring is lost */
        while (d->got < d->want && deck_mbox_retrv_timed(d->mb, &m, 0) == DECK_OK) {
            CHECK(m.len == 16);
            d->got++;
            CHECK_OK(deck_msg_clear(&m));
        }
        if (d->got < d->want)
            CHECK_OK(deck_mbox_key_wait(d->mb, DECK_KEY_ANY, seen, LONG_MS));
    }
    CHECK_OK(deck_msg_destroy(&m));
    return NULL;
}

#define QUIET_FLOOD (2 * SCI_P1_SLOTS)   /* quiet posts that overfill the protocol-1 ring twice */

static void take(deck_mbox_t *mb, unsigned char tag)
{
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 16));
    CHECK_OK(deck_mbox_retrv_timed(mb, &m, 0));
    CHECK(m.len == 16 && m.buf[0] == tag && m.buf[15] == tag);
    CHECK_OK(deck_msg_destroy(&m));
}

/* Node 0 waits in threads, node 1 posts between barriers. */
static int sci_node(int id, int n, void *arg)
{
    deck_mbox_t mb;
    waiter_t key5, any;
    if (id == 0) {
        CHECK_OK(deck_mbox_create(&mb, "keys"));
        CHECK_OK(deck_barrier());                                   /* created */

        /* 1: a keyed post wakes its key's sleeper and leaves the plain waiter asleep */
        start_waiter(&key5, &mb, 5, LONG_MS);
        start_waiter(&any, &mb, DECK_KEY_ANY, SHORT_MS);
        CHECK_OK(deck_barrier());                                   /* node 1 posts with key 5 */
        join(&key5);
        join(&any);
        CHECK(key5.took_ms < LONG_MS / 2);
        CHECK(any.took_ms >= SHORT_MS - 100);
        take(&mb, 1);

        /* 2: a keyed post nobody waits for wakes the plain waiter */
        start_waiter(&any, &mb, DECK_KEY_ANY, LONG_MS);
        CHECK_OK(deck_barrier());                                   /* node 1 posts with key 7 */
        join(&any);
        CHECK(any.took_ms < LONG_MS / 2);
        take(&mb, 2);

        /* 3: a plain post wakes a key's sleeper; a key is taken modulo DECK_MBOX_KEYS */
        start_waiter(&key5, &mb, 3, LONG_MS);
        CHECK_OK(deck_barrier());                                   /* node 1 posts plainly */
        join(&key5);
        CHECK(key5.took_ms < LONG_MS / 2);
        take(&mb, 3);

        /* 4: a local ring wakes its key, and nobody when its key has no sleeper (a hand-on is
         * taken already); bad keys and handles are refused */
        start_waiter(&key5, &mb, 9, LONG_MS);
        CHECK_OK(deck_mbox_key_ring(&mb, 9 + DECK_MBOX_KEYS));
        join(&key5);
        CHECK(key5.took_ms < LONG_MS / 2);
        start_waiter(&any, &mb, DECK_KEY_ANY, SHORT_MS);
        CHECK_OK(deck_mbox_key_ring(&mb, 12));
        join(&any);
        CHECK(any.took_ms >= SHORT_MS - 100);
        CHECK_RC(deck_mbox_key_ring(&mb, -2), DECK_EINVAL);
        CHECK_RC(deck_mbox_key_wait(&mb, -2, 0, 0), DECK_EINVAL);

        /* 5: a message queued without a key (a post to oneself, tcp's deliveries) wakes the
         * plain waiter only, who hands it on */
        deck_mbox_t self;
        CHECK_OK(deck_mbox_clone(&self, "keys"));
        start_waiter(&key5, &mb, 4, SHORT_MS);
        start_waiter(&any, &mb, DECK_KEY_ANY, LONG_MS);
        post(&self, 4, 5);
        join(&any);
        join(&key5);
        CHECK(any.took_ms < LONG_MS / 2);
        CHECK(key5.took_ms >= SHORT_MS - 100);
        take(&mb, 5);
        CHECK_OK(deck_mbox_destroy(&self));

        /* 6: while the poller says it looks for key 6, a keyed post of 6 wakes nobody, not
         * even the plain waiter; the poller takes it with DECK_POLL, which polls and never
         * sleeps */
        deck_msg_t m;
        CHECK_OK(deck_msg_create(&m, 16));
        long t0 = util_now_ms();
        CHECK_RC(deck_mbox_retrv_timed(&mb, &m, DECK_POLL), DECK_ETIMEDOUT);   /* the window, not a wait */
        CHECK(util_now_ms() - t0 < SHORT_MS);
        CHECK_OK(deck_mbox_key_poller(&mb, 6));
        start_waiter(&any, &mb, DECK_KEY_ANY, SHORT_MS);
        CHECK_OK(deck_barrier());                                   /* node 1 posts with key 6 */
        join(&any);
        CHECK(any.took_ms >= SHORT_MS - 100);
        CHECK_OK(deck_mbox_retrv_timed(&mb, &m, DECK_POLL));
        CHECK(m.len == 16 && m.buf[0] == 6);
        CHECK_OK(deck_mbox_key_poller(&mb, DECK_KEY_ANY));
        CHECK_RC(deck_mbox_key_poller(&mb, -3), DECK_EINVAL);
        CHECK_OK(deck_msg_destroy(&m));

        /* 7: a quiet post whose key nobody waits for wakes nobody, not even the plain waiter,
         * and the next retrieve takes it */
        start_waiter(&any, &mb, DECK_KEY_ANY, SHORT_MS);
        CHECK_OK(deck_barrier());                                   /* node 1 posts quietly, key 8 */
        join(&any);
        CHECK(any.took_ms >= SHORT_MS - 100);
        take(&mb, 7);

        /* 8: a quiet post wakes its key's sleeper */
        start_waiter(&key5, &mb, 8, LONG_MS);
        CHECK_OK(deck_barrier());                                   /* node 1 posts quietly, key 8 */
        join(&key5);
        CHECK(key5.took_ms < LONG_MS / 2);
        take(&mb, 8);

        /* 9: quiet posts that fill the ring ring the receiver before they wait for room, so a
         * plain waiter empties it and the sender goes on; a plain post ends the flood */
        drainer_t d = { .mb = &mb, .want = QUIET_FLOOD + 1 };
        deck_bell_t *bell = sci_mbox_bell_of(mb.index);
        uint32_t plain = __atomic_load_n(&bell->waiters, __ATOMIC_SEQ_CST);
        CHECK(pthread_create(&d.thread, NULL, drain_thread, &d) == 0);
        for (int i = 0; i < 5000 && __atomic_load_n(&bell->waiters, __ATOMIC_SEQ_CST) == plain; i++)
            util_sleep_ms(1);
        util_sleep_ms(20);                                          /* asleep: only a ring wakes it */
        long flood = util_now_ms();
        CHECK_OK(deck_barrier());                                   /* node 1 floods */
        CHECK(pthread_join(d.thread, NULL) == 0);
        CHECK(d.got == QUIET_FLOOD + 1);
        CHECK(util_now_ms() - flood < LONG_MS / 2);                 /* it was rung, not timed out */
        CHECK_RC(deck_mbox_postv_quiet(&mb, NULL, 0, -1), DECK_EINVAL);   /* a quiet post needs a key */
    } else {
        CHECK_OK(deck_barrier());
        CHECK_OK(deck_mbox_clone(&mb, "keys"));
        uint32_t seen;
        CHECK_RC(deck_mbox_key_seen(&mb, &seen), DECK_ESTATE);      /* not a created mailbox */
        CHECK_OK(deck_barrier());
        post(&mb, 5, 1);
        CHECK_OK(deck_barrier());
        post(&mb, 7, 2);
        CHECK_OK(deck_barrier());
        post(&mb, -1, 3);
        CHECK_OK(deck_barrier());
        post(&mb, 6, 6);
        CHECK_OK(deck_barrier());
        post_quiet(&mb, 8, 7);
        CHECK_OK(deck_barrier());
        post_quiet(&mb, 8, 8);
        CHECK_OK(deck_barrier());
        long t0 = util_now_ms();
        for (int i = 0; i < QUIET_FLOOD; i++)
            post_quiet(&mb, 10, 9);
        CHECK(util_now_ms() - t0 < LONG_MS / 2);   /* without the ring: the drainer's whole wait */
        post(&mb, -1, 10);
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));
    return 0;
}

/* tcp: no doorbell, so no keyed waits; a keyed post, quiet too, arrives as a plain one. */
static int tcp_node(int id, int n, void *arg)
{
    deck_mbox_t mb;
    uint32_t seen;
    if (id == 0) {
        CHECK_OK(deck_mbox_create(&mb, "keys"));
        CHECK_RC(deck_mbox_key_seen(&mb, &seen), DECK_ESTATE);
        CHECK_RC(deck_mbox_key_wait(&mb, 1, 0, 10), DECK_ESTATE);
        CHECK_OK(deck_barrier());
        deck_msg_t m;
        CHECK_OK(deck_msg_create(&m, 16));
        CHECK_OK(deck_mbox_retrv_timed(&mb, &m, LONG_MS));
        CHECK(m.len == 16 && m.buf[0] == 4);
        CHECK_OK(deck_msg_destroy(&m));
    } else {
        CHECK_OK(deck_barrier());
        CHECK_OK(deck_mbox_clone(&mb, "keys"));
        post_quiet(&mb, 11, 4);
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&mb));
    return 0;
}

int main(void)
{
    int failed = 0;
    failed |= util_run_test_on("sci", "keyed_wakeups_sci", 2, sci_node, NULL);
    failed |= util_run_test_on("tcp", "keyed_post_is_plain_on_tcp", 2, tcp_node, NULL);
    return failed;
}
