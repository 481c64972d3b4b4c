/*
 * The engine: what every queue pair of this process shares.
 *
 * The thesis gave each queue pair two DECK mailboxes and two daemon threads (one per
 * direction). That made a socket cost two threads, a mailbox (on sci a shared segment of
 * 1.8 MB) and a name-service lookup, and a mailbox nobody retrieved from held its sender. Here
 * the process has ONE mailbox, "mv-<deck id>", through which every queue pair receives: each
 * message names its queue pair (wire.c), and whoever retrieves dispatches it to that queue
 * pair's receive queue (qp_recv.c), whose window bounds what may wait there. So:
 *
 *  - a reader blocked in a poll of its receive CQ retrieves itself (cq.c, mv_engine_progress):
 *    its message goes from DECK to its thread without a hand-off, as before, and whatever it
 *    retrieves for other queue pairs it queues for them and wakes their readers;
 *  - "the turn" (busy) lets one thread at a time retrieve, so DECK's order per sender is kept;
 *  - the receive thread takes the turn when no reader is there and none was for a grace
 *    period (a reader's next poll comes within microseconds): data keeps flowing into the
 *    windows of applications that do not read, and window updates reach our writers. A reader
 *    that arrives while it is in the mailbox wakes it with a zero-length token;
 *  - the send thread posts what the windows held back (a writer never waits for the peer's
 *    reader below the window; beyond it, its requests wait here and its ring fills, so the
 *    writer blocks as on TCP) and the resets for messages to queue pairs that are no more;
 *  - the receive thread also looks every MV_LIVENESS_MS whether the peer processes of
 *    connected queue pairs still live (DECK: tcp connection ended, or the process is dead),
 *    and fails their queue pairs, so a reader or writer gets an error within that time;
 *  - a peer that lives but answers nothing (stopped, or its host cut off) is given up after
 *    the peer timeout (peer_timeout, DECK_POST_TIMEOUT_MS): every message from a peer counts
 *    as an answer, and a peer silent for a quarter of the timeout is pinged; a post that
 *    waits that long for it fails (DECK) and gives it up too;
 *  - every MV_RECLAIM_MS it removes the shared segments killed processes left (deck_reclaim),
 *    so nothing of a killed peer outlives a minute on the host.
 *
 * Security: the mailbox admits every process DECK admits (each proved itself on connecting,
 * tcp.h / security.md); a message is delivered only to the queue pair whose connection names
 * the process that DECK says sent it (deck_msg_t.src) and the sending queue pair. Anything else
 * is dropped before a byte of it is stored.
 *
 * Lock order: engine lock, then a queue pair's locks, then a CQ's lock.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "mv_internal.h"

/* How long readers may be away before the receive thread retrieves in their place. */
#define MV_RECV_GRACE_NS (2 * 1000000ull)
/* How often the receive thread looks at the peers' lives. */
#define MV_LIVENESS_MS 200
/* Control messages waiting to be sent; beyond this they are dropped (a reset is a courtesy, a
 * lost ping or pong is sent again a quarter timeout later). */
#define MV_CONTROLS_MAX 64
/* How often the receive thread removes killed processes' segments. */
#define MV_RECLAIM_MS 20000
#define MV_PEER_TIMEOUT_DEFAULT_MS 10000

struct mv_peer {
    struct mv_peer *next;
    uint32_t        id;
    deck_mbox_t     mb;
    uint32_t        refs;          /* connected queue pairs, plus users in a post */
    int             gone;          /* given up by the liveness check */
    int             failed;        /* a post to it failed: give it up at the next check */
    int             ping_sent;     /* a ping went since it was last heard */
    uint64_t        heard_ns;      /* its last message */
    char            why[96];       /* why it was given up */
};

struct mv_control {
    int      id;
    uint32_t kind, dest_qp, src_qp;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t  recv_cv;       /* the receive thread: the turn, readers, stopping */
    pthread_cond_t  send_cv;       /* the send thread: work, stopping */
    pthread_cond_t  unpinned;      /* a queue pair's pins fell to 0 */
    unsigned        users;         /* open HCAs */
    int             stopping;
    deck_mbox_t     mb, self;      /* ours, and a clone of it for tokens */
    int             mb_open, self_open;
    deck_msg_t      msg;           /* the turn holder's */
    deck_msg_t      token;
    /* the receive turn */
    int             busy, busy_daemon, kick_pending;
    int             daemon_long_sleep;   /* the receive thread sleeps until its liveness check */
    uint32_t        pollers;
    uint64_t        activity_ns;
    struct mv_cq  **waiting;       /* CQs of readers inside a blocking poll, in arrival order */
    uint32_t        nwaiting, cap_waiting;
    /* threads */
    pthread_t       recv_thread, send_thread;
    int             recv_running, send_running;
    /* queue pairs */
    struct mv_qp  **slots;         /* MV_QP_SLOTS, allocated with the engine */
    uint32_t        high;          /* slots below this may be used */
    uint32_t        next_free;     /* where the search for a free slot starts */
    struct mv_peer *peers;
    struct mv_qp   *send_head, *send_tail;
    struct mv_control controls[MV_CONTROLS_MAX];
    uint32_t        ncontrols;
    uint64_t        timeout_ns;    /* the peer timeout */
    pthread_key_t   scratch_key;
    int             key_made;
} eng = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- thread-local message buffers for posts --------------------------------------------- */

static void scratch_free(void *p)
{
    deck_msg_t *m = p;
    free(m->buf);
    free(m);
}

deck_msg_t *mv_engine_scratch(void)
{
    deck_msg_t *m = pthread_getspecific(eng.scratch_key);
    if (m)
        return m;
    /* Plain malloc'd memory (impl NULL: DECK frees nothing of it), sized for the largest mtu;
     * pages a small mtu never touches are never made resident. */
    uint32_t size = mv_wire_capacity(MV_MTU_MAX);
    if (!(m = calloc(1, sizeof *m)) || !(m->buf = malloc(size))) {
        free(m);
        return NULL;
    }
    m->size = size;
    m->src = -1;
    if (pthread_setspecific(eng.scratch_key, m)) {
        scratch_free(m);
        return NULL;
    }
    return m;
}

/* ---- the queue pair table ---------------------------------------------------------------- */

VAPI_ret_t mv_engine_add_qp(const char *fn, struct mv_qp *qp)
{
    uint32_t rnd;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (uint32_t)mv_now_ns() * 2654435761u;
    pthread_mutex_lock(&eng.lock);
    uint32_t slot = eng.next_free;
    for (uint32_t tries = 0; tries < MV_QP_SLOTS && eng.slots[slot]; tries++)
        slot = (slot + 1) % MV_QP_SLOTS;
    if (eng.slots[slot]) {
        pthread_mutex_unlock(&eng.lock);
        return mv_fail(VAPI_EAGAIN, fn, "this process has %u queue pairs, the most it can hold",
                       MV_QP_SLOTS);
    }
    qp->qp_num = slot | (rnd << MV_QP_SLOT_BITS);
    eng.slots[slot] = qp;
    eng.next_free = (slot + 1) % MV_QP_SLOTS;
    if (slot >= eng.high)
        eng.high = slot + 1;
    pthread_mutex_unlock(&eng.lock);
    return VAPI_OK;
}

/* Removes qp from the send list; engine lock held. */
static void unschedule_locked(struct mv_qp *qp)
{
    if (!qp->send_scheduled)
        return;
    struct mv_qp **p = &eng.send_head, *prev = NULL;
    while (*p != qp) {
        prev = *p;
        p = &(*p)->send_next;
    }
    *p = qp->send_next;
    if (eng.send_tail == qp)
        eng.send_tail = prev;
    qp->send_scheduled = 0;
    qp->pins--;
}

void mv_engine_remove_qp(struct mv_qp *qp)
{
    pthread_mutex_lock(&eng.lock);
    uint32_t slot = qp->qp_num & (MV_QP_SLOTS - 1);
    if (eng.slots[slot] == qp)
        eng.slots[slot] = NULL;
    unschedule_locked(qp);
    while (qp->pins > 0)
        pthread_cond_wait(&eng.unpinned, &eng.lock);
    pthread_mutex_unlock(&eng.lock);
}

static void unpin(struct mv_qp *qp)
{
    pthread_mutex_lock(&eng.lock);
    if (--qp->pins == 0)
        pthread_cond_broadcast(&eng.unpinned);
    pthread_mutex_unlock(&eng.lock);
}

/* The connected queue pair `dest_qp` whose peer is process `src` and its queue pair `src_qp`,
 * pinned; NULL if there is none. With `unconnected`, also a queue pair not connected yet (for
 * the window a peer announces when its connect comes first; kept until ours names that peer). */
static struct mv_qp *pin_for(uint32_t dest_qp, int src, uint32_t src_qp, int unconnected)
{
    pthread_mutex_lock(&eng.lock);
    struct mv_qp *qp = eng.slots[dest_qp & (MV_QP_SLOTS - 1)];
    if (!qp || qp->qp_num != dest_qp || src < 0
        || (qp->peer ? qp->dest_id != (uint32_t)src || qp->dest_qp != src_qp : !unconnected))
        qp = NULL;
    else
        qp->pins++;
    pthread_mutex_unlock(&eng.lock);
    return qp;
}

/* ---- peers ------------------------------------------------------------------------------- */

VAPI_ret_t mv_engine_peer(const char *fn, uint32_t id, struct mv_peer **out)
{
    pthread_mutex_lock(&eng.lock);
    struct mv_peer *p = eng.peers;
    while (p && p->id != id)
        p = p->next;
    if (p && p->gone && !deck_peer_gone((int)id)) {
        /* Given up for its silence (a stop, a long pause) but alive: a new connection may try
         * again, as TCP lets a new connection follow one that timed out. */
        p->gone = p->failed = 0;
    }
    if (p && !p->gone) {
        if (p->refs == 0) {   /* its silence while it had no connection does not count */
            p->heard_ns = mv_now_ns();
            p->ping_sent = 0;
        }
        p->refs++;
        pthread_mutex_unlock(&eng.lock);
        *out = p;
        return VAPI_OK;
    }
    pthread_mutex_unlock(&eng.lock);
    if (p)
        return mv_fail(VAPI_EGEN, fn, "DECK process %u has gone away", id);
    /* Looked up at that process alone (never by asking every process: a stopped or dead one
     * must not delay connections between the others). Outside the lock: it may wait. */
    struct mv_peer *np = calloc(1, sizeof *np);
    if (!np)
        return mv_fail(VAPI_ENOMEM, fn, "no memory for a peer");
    char name[DECK_MBOX_NAME_MAX];
    snprintf(name, sizeof name, "mv-%u", id);
    int rc = deck_mbox_clone_at(&np->mb, (int)id, name);
    if (rc != DECK_OK) {
        free(np);
        return mv_fail(VAPI_EGEN, fn, "cloning the mailbox %s of DECK process %u failed: %s: %s",
                       name, id, deck_strerror(rc), deck_last_error());
    }
    np->id = id;
    np->refs = 1;
    np->heard_ns = mv_now_ns();
    pthread_mutex_lock(&eng.lock);
    for (p = eng.peers; p && p->id != id; p = p->next)
        ;
    if (p) {   /* another thread added it meanwhile */
        p->refs++;
        deck_mbox_destroy(&np->mb);
        free(np);
        np = p;
    } else {
        np->next = eng.peers;
        eng.peers = np;
    }
    pthread_mutex_unlock(&eng.lock);
    *out = np;
    return VAPI_OK;
}

/* Peers stay in the list until the engine stops (one small entry per peer process). */
void mv_engine_peer_put(struct mv_peer *peer)
{
    pthread_mutex_lock(&eng.lock);
    peer->refs--;
    pthread_mutex_unlock(&eng.lock);
}

int mv_engine_post(struct mv_peer *peer, deck_msg_t *msg)
{
    int rc = deck_mbox_post(&peer->mb, msg);
    if (rc == DECK_ETIMEDOUT || rc == DECK_EPEER || rc == DECK_EIO) {
        pthread_mutex_lock(&eng.lock);
        if (!peer->failed)
            snprintf(peer->why, sizeof peer->why, "%s", deck_last_error());
        peer->failed = 1;
        pthread_mutex_unlock(&eng.lock);
    }
    return rc;
}

/* Sets qp's peer under the engine lock, so that dispatch sees all of it or none. */
void mv_engine_connect_qp(struct mv_qp *qp, uint32_t dest_id, uint32_t dest_qp, struct mv_peer *peer)
{
    pthread_mutex_lock(&eng.lock);
    pthread_mutex_lock(&qp->sq.lock);
    qp->dest_id = dest_id;
    qp->dest_qp = dest_qp;
    __atomic_store_n(&qp->peer, peer, __ATOMIC_RELEASE);
    if (qp->early_set && qp->early_id == dest_id && qp->early_qp == dest_qp
        && (int32_t)(qp->early_edge - qp->send_edge) > 0)
        qp->send_edge = qp->early_edge;
    pthread_mutex_unlock(&qp->sq.lock);
    pthread_mutex_unlock(&eng.lock);
}

/* ---- the send thread's work -------------------------------------------------------------- */

void mv_engine_schedule_send(struct mv_qp *qp)
{
    pthread_mutex_lock(&eng.lock);
    uint32_t slot = qp->qp_num & (MV_QP_SLOTS - 1);
    if (!qp->send_scheduled && eng.slots[slot] == qp) {
        qp->send_scheduled = 1;
        qp->pins++;
        qp->send_next = NULL;
        if (eng.send_tail)
            eng.send_tail->send_next = qp;
        else
            eng.send_head = qp;
        eng.send_tail = qp;
        pthread_cond_signal(&eng.send_cv);
    }
    pthread_mutex_unlock(&eng.lock);
}

static void schedule_control_locked(int id, uint32_t kind, uint32_t dest_qp, uint32_t src_qp)
{
    if (eng.ncontrols < MV_CONTROLS_MAX) {
        eng.controls[eng.ncontrols++] = (struct mv_control){ id, kind, dest_qp, src_qp };
        pthread_cond_signal(&eng.send_cv);
    }
}

void mv_engine_schedule_control(int id, uint32_t kind, uint32_t dest_qp, uint32_t src_qp)
{
    pthread_mutex_lock(&eng.lock);
    schedule_control_locked(id, kind, dest_qp, src_qp);
    pthread_mutex_unlock(&eng.lock);
}

/* Sends a control message; only to a peer we already know (looking one up could wait on a
 * process that is not there). */
static void send_control(const struct mv_control *r)
{
    pthread_mutex_lock(&eng.lock);
    struct mv_peer *p = eng.peers;
    while (p && p->id != (uint32_t)r->id)
        p = p->next;
    if (p && !p->gone)
        p->refs++;
    else
        p = NULL;
    pthread_mutex_unlock(&eng.lock);
    deck_msg_t *m = p ? mv_engine_scratch() : NULL;
    if (m) {
        struct mv_wire_head h = { .dest_qp = r->dest_qp, .src_qp = r->src_qp, .kind = r->kind };
        mv_wire_start(m, &h);
        mv_engine_post(p, m);   /* best effort */
    }
    if (p)
        mv_engine_peer_put(p);
}

static void *send_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&eng.lock);
    for (;;) {
        while (!eng.stopping && !eng.send_head && eng.ncontrols == 0)
            pthread_cond_wait(&eng.send_cv, &eng.lock);
        if (eng.stopping)
            break;
        if (eng.ncontrols > 0) {
            struct mv_control r = eng.controls[--eng.ncontrols];
            pthread_mutex_unlock(&eng.lock);
            send_control(&r);
            pthread_mutex_lock(&eng.lock);
            continue;
        }
        struct mv_qp *qp = eng.send_head;   /* pinned by the schedule */
        eng.send_head = qp->send_next;
        if (!eng.send_head)
            eng.send_tail = NULL;
        qp->send_scheduled = 0;
        pthread_mutex_unlock(&eng.lock);
        mv_send_queued(qp);
        pthread_mutex_lock(&eng.lock);
        if (--qp->pins == 0)
            pthread_cond_broadcast(&eng.unpinned);
    }
    pthread_mutex_unlock(&eng.lock);
    return NULL;
}

/* ---- receiving: dispatch, the turn, the receive thread ---------------------------------- */

/* A message came from process src: it answers. A ping gets a pong. */
static void heard(int src, int ping)
{
    pthread_mutex_lock(&eng.lock);
    struct mv_peer *p = eng.peers;
    while (p && p->id != (uint32_t)src)
        p = p->next;
    if (p) {
        p->heard_ns = mv_now_ns();
        p->ping_sent = 0;
    }
    if (ping && src >= 0)
        schedule_control_locked(src, MV_WIRE_PONG, 0, 0);
    pthread_mutex_unlock(&eng.lock);
}

/* Hands a retrieved message to its queue pair. Never posts (the caller holds the turn). */
static void dispatch(const deck_msg_t *msg)
{
    struct mv_wire_head h;
    if (msg->len == 0) {   /* a token: a reader wants the turn, or the engine stops */
        pthread_mutex_lock(&eng.lock);
        eng.kick_pending = 0;
        pthread_mutex_unlock(&eng.lock);
        return;
    }
    if (mv_wire_head(msg, &h))
        return;   /* not MicroVAPI's: DECK delivered it from a proved process, so drop it */
    heard(msg->src, h.kind == MV_WIRE_PING);
    if (h.kind == MV_WIRE_PING || h.kind == MV_WIRE_PONG)
        return;
    struct mv_qp *qp = pin_for(h.dest_qp, msg->src, h.src_qp, h.kind == MV_WIRE_CREDIT);
    if (!qp) {
        /* Data for a queue pair that is gone (closed, or never ours): tell the sender, as TCP
         * answers a segment for no connection with a reset. */
        if (h.kind == MV_WIRE_DATA && msg->src >= 0)
            mv_engine_schedule_control(msg->src, MV_WIRE_RESET, h.src_qp, h.dest_qp);
        return;
    }
    mv_qp_dispatch(qp, &h, msg);
    unpin(qp);
}

/* Ends the retrieve of the turn holder with a token; at most one is outstanding. Engine lock
 * held. If the token cannot be posted, the holder still returns with the next message or its
 * timeout (the receive thread's is bounded), so only latency is lost. */
static void kick_locked(void)
{
    if (eng.kick_pending || !eng.self_open)
        return;
    deck_msg_clear(&eng.token);
    if (deck_mbox_post(&eng.self, &eng.token) == DECK_OK)
        eng.kick_pending = 1;
}

/* The turn is free: the first reader waiting in a poll looks again (one, not all: only one
 * can take it). Engine lock held. */
static void pass_turn_locked(void)
{
    if (!eng.busy && eng.nwaiting > 0)
        mv_cq_notify(eng.waiting[0]);
}

static int retrieve_and_dispatch(int timeout_ms)
{
    deck_msg_clear(&eng.msg);
    int rc = deck_mbox_retrv_timed(&eng.mb, &eng.msg, timeout_ms);
    if (rc == DECK_OK)
        dispatch(&eng.msg);
    return rc;
}

enum mv_progress mv_engine_progress(int timeout_ms)
{
    pthread_mutex_lock(&eng.lock);
    eng.activity_ns = mv_now_ns();
    if (eng.busy || eng.stopping) {
        if (eng.busy && eng.busy_daemon)
            kick_locked();
        pthread_mutex_unlock(&eng.lock);
        return MV_BUSY;
    }
    eng.busy = 1;
    eng.busy_daemon = 0;
    pthread_mutex_unlock(&eng.lock);
    int rc = retrieve_and_dispatch(timeout_ms);
    pthread_mutex_lock(&eng.lock);
    eng.busy = 0;
    eng.activity_ns = mv_now_ns();
    pthread_mutex_unlock(&eng.lock);
    /* A retrieve that failed otherwise (the mailbox is closing) counts as progress: the caller
     * looks at its CQ and its queue pair's state again. */
    return rc == DECK_ETIMEDOUT ? MV_TIMEOUT : MV_PROGRESSED;
}

void mv_engine_poller_enter(struct mv_cq *cq)
{
    pthread_mutex_lock(&eng.lock);
    if (eng.nwaiting == eng.cap_waiting) {
        uint32_t ncap = eng.cap_waiting ? 2 * eng.cap_waiting : 16;
        struct mv_cq **w = realloc(eng.waiting, ncap * sizeof *w);
        if (w) {
            eng.waiting = w;
            eng.cap_waiting = ncap;
        }
    }
    if (eng.nwaiting < eng.cap_waiting)   /* else it is not told when the turn frees: its wait
                                           * is bounded (cq.c), so it only looks later */
        eng.waiting[eng.nwaiting++] = cq;
    eng.pollers++;
    eng.activity_ns = mv_now_ns();
    if (eng.busy && eng.busy_daemon)
        kick_locked();
    pthread_mutex_unlock(&eng.lock);
}

void mv_engine_poller_leave(struct mv_cq *cq)
{
    pthread_mutex_lock(&eng.lock);
    for (uint32_t i = 0; i < eng.nwaiting; i++) {
        if (eng.waiting[i] == cq) {
            memmove(&eng.waiting[i], &eng.waiting[i + 1], (eng.nwaiting - i - 1) * sizeof *eng.waiting);
            eng.nwaiting--;
            break;
        }
    }
    eng.pollers--;
    eng.activity_ns = mv_now_ns();
    pass_turn_locked();
    /* The last reader left: the receive thread's grace starts now. Only a receive thread that
     * sleeps until its next liveness check must be told; one in a grace sleep wakes by itself.
     * (A signal on every poll would wake a thread per message, on 2 cores a costly one.) */
    if (eng.pollers == 0 && eng.daemon_long_sleep)
        pthread_cond_signal(&eng.recv_cv);
    pthread_mutex_unlock(&eng.lock);
}

void mv_engine_kick(void)
{
    pthread_mutex_lock(&eng.lock);
    if (eng.busy && !eng.busy_daemon)
        kick_locked();
    pthread_mutex_unlock(&eng.lock);
}

void mv_engine_activity(void)
{
    pthread_mutex_lock(&eng.lock);
    eng.activity_ns = mv_now_ns();
    pthread_mutex_unlock(&eng.lock);
}

/* Whether peer p is to be given up now (engine lock held): dead, a post to it failed, or
 * silent for the peer timeout; pings it when silent for a quarter of that. */
static int give_up_locked(struct mv_peer *p, uint64_t now)
{
    if (p->failed)
        return 1;
    if (deck_peer_gone((int)p->id)) {
        snprintf(p->why, sizeof p->why, "has gone away");
        return 1;
    }
    uint64_t silent = now - p->heard_ns;
    if (silent > eng.timeout_ns) {
        snprintf(p->why, sizeof p->why, "has answered nothing for %llu ms (peer_timeout)",
                 (unsigned long long)(silent / 1000000));
        return 1;
    }
    if (silent > eng.timeout_ns / 4 && !p->ping_sent) {
        p->ping_sent = 1;
        schedule_control_locked((int)p->id, MV_WIRE_PING, 0, 0);
    }
    return 0;
}

/* Fails the connected queue pairs of peers given up; the receive thread, no lock held. */
static void check_peers(void)
{
    pthread_mutex_lock(&eng.lock);
    int found = 0;
    uint64_t now = mv_now_ns();
    for (struct mv_peer *p = eng.peers; p; p = p->next) {
        if (!p->gone && p->refs > 0 && p->id != (uint32_t)deck_node() && give_up_locked(p, now)) {
            p->gone = 1;
            found = 1;
        }
    }
    for (uint32_t s = 0; found && s < eng.high; s++) {
        struct mv_qp *qp = eng.slots[s];
        if (!qp || !qp->peer || !qp->peer->gone)
            continue;
        char why[sizeof qp->peer->why];
        memcpy(why, qp->peer->why, sizeof why);
        qp->pins++;
        pthread_mutex_unlock(&eng.lock);
        mv_qp_fail(qp, VAPI_REM_ABORT_ERR, "the peer (DECK process %u) %s", qp->dest_id, why);
        pthread_mutex_lock(&eng.lock);
        if (--qp->pins == 0)
            pthread_cond_broadcast(&eng.unpinned);
    }
    /* A reader inside a retrieve for a failed queue pair must see its completion now. */
    if (found && eng.busy && !eng.busy_daemon)
        kick_locked();
    pthread_mutex_unlock(&eng.lock);
}

static void *recv_thread(void *arg)
{
    (void)arg;
    uint64_t next_check = mv_now_ns() + MV_LIVENESS_MS * 1000000ull;
    uint64_t next_reclaim = mv_now_ns() + MV_RECLAIM_MS * 1000000ull;
    pthread_mutex_lock(&eng.lock);
    while (!eng.stopping) {
        uint64_t now = mv_now_ns();
        if (now >= next_check) {
            pthread_mutex_unlock(&eng.lock);
            check_peers();
            if (now >= next_reclaim) {
                deck_reclaim();
                next_reclaim = now + MV_RECLAIM_MS * 1000000ull;
            }
            pthread_mutex_lock(&eng.lock);
            next_check = now + MV_LIVENESS_MS * 1000000ull;
            continue;
        }
        if (!eng.busy && eng.pollers == 0 && now >= eng.activity_ns + MV_RECV_GRACE_NS) {
            eng.busy = eng.busy_daemon = 1;
            pthread_mutex_unlock(&eng.lock);
            int ms = (int)((next_check - now + 999999) / 1000000);
            retrieve_and_dispatch(ms);
            pthread_mutex_lock(&eng.lock);
            eng.busy = eng.busy_daemon = 0;
            pass_turn_locked();
            continue;
        }
        uint64_t until = next_check;
        if (!eng.busy && eng.pollers == 0 && eng.activity_ns + MV_RECV_GRACE_NS < until)
            until = eng.activity_ns + MV_RECV_GRACE_NS;
        struct timespec ts = { .tv_sec = (time_t)(until / 1000000000ull),
                               .tv_nsec = (long)(until % 1000000000ull) };
        eng.daemon_long_sleep = until == next_check;
        pthread_cond_timedwait(&eng.recv_cv, &eng.lock, &ts);
        eng.daemon_long_sleep = 0;
    }
    pthread_mutex_unlock(&eng.lock);
    return NULL;
}

/* ---- start and stop ---------------------------------------------------------------------- */

static void engine_stop(void)
{
    pthread_mutex_lock(&eng.lock);
    eng.stopping = 1;
    pthread_cond_broadcast(&eng.recv_cv);
    pthread_cond_broadcast(&eng.send_cv);
    if (eng.busy)
        kick_locked();
    pthread_mutex_unlock(&eng.lock);
    if (eng.recv_running)
        pthread_join(eng.recv_thread, NULL);
    if (eng.send_running)
        pthread_join(eng.send_thread, NULL);
    eng.recv_running = eng.send_running = 0;
    if (eng.self_open)
        deck_mbox_destroy(&eng.self);
    if (eng.mb_open)
        deck_mbox_destroy(&eng.mb);
    eng.self_open = eng.mb_open = 0;
    while (eng.peers) {
        struct mv_peer *p = eng.peers;
        eng.peers = p->next;
        deck_mbox_destroy(&p->mb);
        free(p);
    }
    if (eng.msg.buf)
        deck_msg_destroy(&eng.msg);
    if (eng.token.buf)
        deck_msg_destroy(&eng.token);
    free(eng.slots);
    free(eng.waiting);
    eng.slots = NULL;
    eng.waiting = NULL;
    eng.nwaiting = eng.cap_waiting = 0;
    eng.high = eng.next_free = 0;
    eng.ncontrols = 0;
    eng.busy = eng.busy_daemon = eng.kick_pending = 0;
    eng.pollers = 0;
    pthread_cond_destroy(&eng.recv_cv);
    pthread_cond_destroy(&eng.send_cv);
    pthread_cond_destroy(&eng.unpinned);
}

static VAPI_ret_t engine_start(const char *fn)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&eng.recv_cv, &attr);
    pthread_condattr_destroy(&attr);
    pthread_cond_init(&eng.send_cv, NULL);
    pthread_cond_init(&eng.unpinned, NULL);
    eng.stopping = 0;
    const char *t = getenv("DECK_POST_TIMEOUT_MS");
    long ms = t ? strtol(t, NULL, 10) : 0;
    eng.timeout_ns = (uint64_t)(ms > 0 ? ms : MV_PEER_TIMEOUT_DEFAULT_MS) * 1000000ull;
    if (!eng.key_made) {
        if (pthread_key_create(&eng.scratch_key, scratch_free))
            return mv_fail(VAPI_EGEN, fn, "cannot create a thread-local key");
        eng.key_made = 1;
    }
    if (!(eng.slots = calloc(MV_QP_SLOTS, sizeof *eng.slots)))
        return mv_fail(VAPI_ENOMEM, fn, "no memory for the queue pair table");
    char name[DECK_MBOX_NAME_MAX];
    snprintf(name, sizeof name, "mv-%d", deck_node());
    int rc = deck_mbox_create(&eng.mb, name);
    if (rc != DECK_OK)
        return mv_fail(VAPI_EGEN, fn, "creating the mailbox %s failed: %s: %s", name,
                       deck_strerror(rc), deck_last_error());
    eng.mb_open = 1;
    /* Every process DECK admits may post to it (queue pairs check the sender); nothing longer
     * than the largest message a peer sends is admitted. */
    if ((rc = deck_mbox_limit(&eng.mb, mv_wire_capacity(MV_MTU_MAX))) != DECK_OK
        || (rc = deck_mbox_clone_at(&eng.self, deck_node(), name)) != DECK_OK)
        return mv_fail(VAPI_EGEN, fn, "setting up the mailbox %s failed: %s: %s", name,
                       deck_strerror(rc), deck_last_error());
    eng.self_open = 1;
    if ((rc = deck_msg_create(&eng.msg, mv_wire_capacity(MV_MTU_MAX))) != DECK_OK
        || (rc = deck_msg_create(&eng.token, 0)) != DECK_OK)
        return mv_fail(VAPI_ENOMEM, fn, "no memory for the engine's messages");
    eng.activity_ns = 0;
    if (pthread_create(&eng.recv_thread, NULL, recv_thread, NULL))
        return mv_fail(VAPI_EGEN, fn, "cannot start the receive thread");
    eng.recv_running = 1;
    if (pthread_create(&eng.send_thread, NULL, send_thread, NULL))
        return mv_fail(VAPI_EGEN, fn, "cannot start the send thread");
    eng.send_running = 1;
    return VAPI_OK;
}

/* The HCA lock (hca.c) serialises opens and closes, so users needs no more. */
VAPI_ret_t mv_engine_open(const char *fn)
{
    if (eng.users++ > 0)
        return VAPI_OK;
    VAPI_ret_t ret = engine_start(fn);
    if (ret != VAPI_OK) {
        engine_stop();
        eng.users = 0;
    }
    return ret;
}

void mv_engine_close(void)
{
    if (eng.users > 0 && --eng.users == 0)
        engine_stop();
}
