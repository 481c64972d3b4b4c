/*
 * Barrier of a static run: every process sends ARRIVE to node 0; node 0, once it has counted
 * N-1 arrivals for this round, sends RELEASE to each. Counters only grow, so an ARRIVE for the
 * next round that reaches node 0 before node 0 left this round is counted, not lost. A peer
 * that leaves while someone waits fails the barrier with DECK_EPEER instead of hanging it.
 */
#include "tcp.h"

static deck_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static deck_cond_t  cond;
static long arrivals, releases, rounds;
static int  self, nnodes;

void tcp_barrier_init(int me, int n)
{
    deck_cond_init(&cond);
    arrivals = releases = rounds = 0;
    self = me;
    nnodes = n;
}

void tcp_barrier_done(void)
{
    deck_cond_destroy(&cond);
}

void tcp_barrier_on_frame(const tcp_frame_t *f)
{
    deck_mutex_lock(&lock);
    if (f->type == FRAME_BARRIER_ARRIVE) arrivals++; else releases++;
    deck_cond_broadcast(&cond);
    deck_mutex_unlock(&lock);
}

void tcp_barrier_wake(void)
{
    deck_mutex_lock(&lock);
    deck_cond_broadcast(&cond);
    deck_mutex_unlock(&lock);
}

/* Called with lock held: the first peer (0 only, or any for node 0) that has left, or -1. */
static int gone_peer(void)
{
    for (int p = 0; p < nnodes; p++) {
        if (p == self || (self != 0 && p != 0)) continue;
        if (tcp_peer_is_gone(p)) return p;
    }
    return -1;
}

/* Waits until *counter reaches target; DECK_EPEER if a peer it depends on leaves first. */
static int wait_for(const long *counter, long target)
{
    int rc = DECK_OK, gone;
    deck_mutex_lock(&lock);
    while (*counter < target) {
        if ((gone = gone_peer()) >= 0) {
            rc = deck_fail(DECK_EPEER, "deck_barrier: node %d has gone away", gone);
            break;
        }
        deck_cond_wait(&cond, &lock);
    }
    deck_mutex_unlock(&lock);
    return rc;
}

int tcp_barrier(void)
{
    if (nnodes == 1) return DECK_OK;
    /* Reaching node 0 may take until it has started: as long as a clone may wait. */
    int wait_ms = deck_env_int("DECK_CLONE_TIMEOUT_MS", 10000);
    long round = ++rounds;
    if (self != 0) {
        tcp_frame_t f = { .type = FRAME_BARRIER_ARRIVE, .src = self, .index = 0, .len = 0 };
        int rc = tcp_peer_send(0, &f, NULL, 0, wait_ms, "deck_barrier");
        return rc ? rc : wait_for(&releases, round);
    }
    int rc = wait_for(&arrivals, round * (nnodes - 1));
    tcp_frame_t f = { .type = FRAME_BARRIER_RELEASE, .src = 0, .index = 0, .len = 0 };
    for (int p = 1; p < nnodes && rc == DECK_OK; p++)
        rc = tcp_peer_send(p, &f, NULL, 0, wait_ms, "deck_barrier");
    return rc;
}
