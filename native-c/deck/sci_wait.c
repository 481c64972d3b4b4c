/*
 * How every side of the sci transport waits: poll its own memory for DECK_SPIN_US (default 30;
 * the latency of a peer that answers at once), then block on the doorbell of the segment it
 * polls until a writer rings it, in slices of at most SCI_CHECK_MS so that a dead peer and the
 * time bound are noticed. DECK_SPIN_US=-1 polls only (benchmarks on idle cores), still looking
 * at the bound and the peer now and then. Nothing here spins without end.
 *
 * Polling pays only while the writer runs on another CPU. When the doorbell says the last
 * writer ran on this waiter's own CPU (deck_bell_t.ringer_cpu), a waiter that spun would keep
 * it from running for the whole window, then sleep: 34 us one-way on one core, measured, where
 * yielding between polls gives the writer the CPU at once (2.3 us). Yielding every few polls
 * whatever the writer's CPU costs a system call each time (0.59 -> 0.97 us one-way across
 * cores, measured), hence the hint.
 */
#include <sched.h>
#include <time.h>
#include "cpu_relax.h"
#include "sci.h"

#define POLLS_PER_CLOCK 64         /* polls between two looks at the bound and the peer */
/* Polls between two looks at the clock for the end of the polling window. A look costs 20-40
 * ns in a virtual machine, as much as a poll of a mailbox: looking every poll made the loop,
 * and so the time to see a message, twice as long. 8 polls overshoot a 30 us window by < 1 us. */
#define POLLS_PER_SPIN_CLOCK 8

void sci_wait_start(sci_waiter_t *w, deck_bell_t *bell, int timeout_ms)
{
    w->bell = bell;
    w->armed = 0;
    w->polls = 0;
    int cpu = sched_getcpu();
    w->yielding = cpu >= 0 && __atomic_load_n(&bell->ringer_cpu, __ATOMIC_RELAXED) == (uint32_t)cpu + 1;
    w->deck_ids = 0;
    w->forever = timeout_ms < 0 && timeout_ms != DECK_POLL;
    w->once = timeout_ms == 0;
    struct timespec now;   /* one clock read serves every bound the wait starts with */
    clock_gettime(CLOCK_MONOTONIC, &now);
    w->deadline = deck_time_after(&now, (timeout_ms > 0 ? timeout_ms : 0) * 1000L);
    w->next_check = deck_time_after(&now, SCI_CHECK_MS * 1000L);
    /* Now plus DECK_SPIN_US (nothing when it is -1: those waits poll to their deadline). */
    w->spin_end = deck_time_after(&now, sci.cfg.spin_us < 0 ? 0 : sci.cfg.spin_us);
    w->spun = sci.cfg.spin_us == 0;
    /* DECK_POLL: the polling window is the whole wait (100 ms when polling has no end). */
    if (timeout_ms == DECK_POLL) {
        if (sci.cfg.spin_us < 0) w->deadline = w->next_check;
        else w->deadline = w->spin_end;
    }
}

/* The bound and the peer, at most every SCI_CHECK_MS for the peer. A retriever's watched peer
 * is a DECK id, reached through sci or (auto transport) tcp: the core asks the right one. */
static int check(sci_waiter_t *w, int peer)
{
    if (!w->forever && deck_deadline_passed(&w->deadline)) return DECK_ETIMEDOUT;
    if (peer >= 0 && deck_deadline_passed(&w->next_check)) {
        deck_deadline(&w->next_check, SCI_CHECK_MS);
        if (w->deck_ids ? deck_core_peer_gone(peer) : !sci_node_alive(peer)) return DECK_EPEER;
    }
    return DECK_OK;
}

int sci_wait_next(sci_waiter_t *w, int peer)
{
    if (w->once) return DECK_ETIMEDOUT;
    if (sci.cfg.spin_us < 0 || !w->spun) {
        if (w->yielding) sched_yield();
        else cpu_relax();
        ++w->polls;
        if (sci.cfg.spin_us >= 0 && w->polls % POLLS_PER_SPIN_CLOCK == 0)
            w->spun = deck_deadline_passed(&w->spin_end);
        if (w->polls % POLLS_PER_CLOCK) return DECK_OK;
        return check(w, peer);
    }
    if (!w->armed) {
        /* Arm, read the bell, and let the caller look once more: a ring after this read makes
         * the wait below return at once. */
        deck_bell_arm(w->bell);
        w->armed = 1;
        w->seen = deck_bell_read(w->bell);
        return check(w, peer);
    }
    long slice = SCI_CHECK_MS;
    if (!w->forever) {
        long left = deck_ms_until(&w->deadline);
        if (left < slice) slice = left;
    }
    if (slice > 0) deck_bell_wait(w->bell, w->seen, (int)slice);
    w->seen = deck_bell_read(w->bell);
    return check(w, peer);
}

void sci_wait_end(sci_waiter_t *w)
{
    if (w->armed) deck_bell_disarm(w->bell);
    w->armed = 0;
}

/* ---- keyed waits (deck_mbox_key_wait): for one key's rings, or plain for any message ---- */

int sci_mbox_key_wait(int index, int key, uint32_t seen, int timeout_ms)
{
    deck_bell_t *b = sci_mbox_bell_of(index);
    if (!b) return deck_fail(DECK_ESTATE, "deck_mbox_key_wait: mailbox %d has no doorbell", index);
    if (key < 0) {
        deck_bell_arm(b);
        if (deck_bell_read(b) == seen && timeout_ms > 0) deck_bell_wait(b, seen, timeout_ms);
        deck_bell_disarm(b);
        return DECK_OK;
    }
    unsigned k = (unsigned)key;
    /* Armed, then the bell looked at: a keyed ring after the arming wakes it, one before it
     * shows in the bell. The poller's mark may stay: sleepers are looked at first. */
    deck_bell_key_arm(b, k);
    if (deck_bell_read(b) == seen && timeout_ms > 0) deck_bell_key_wait(b, k, seen, timeout_ms);
    deck_bell_key_disarm(b, k);
    return DECK_OK;
}

int sci_mbox_key_poller(int index, int key)
{
    deck_bell_t *b = sci_mbox_bell_of(index);
    if (!b) return deck_fail(DECK_ESTATE, "deck_mbox_key_poller: mailbox %d has no doorbell", index);
    deck_bell_key_polling(b, key < 0 ? 0 : (uint32_t)key + 1);
    return DECK_OK;
}
