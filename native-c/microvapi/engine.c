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
 *  - keyed wake-ups, where the mailbox has a doorbell (DECK sci, auto with shared memory; not
 *    tcp, nor with MV_KEYED_WAKE=0 in the environment): a reader that finds nothing does not
 *    wait inside a retrieve holding the turn, which made a message for another reader cost two
 *    wake-ups (the holder's, then that reader's; measured: 4 connections at once ran 2-4x slower
 *    than the JDK's sockets). Every message is posted with its queue pair's key (mv_key_of), a
 *    reader sleeps on its own key, so the sending process wakes the thread the message is for;
 *    woken, it drains the mailbox with looks under the turn, and what it dispatches to others
 *    rings their keys. The receive thread is the plain waiter: it is woken by the messages whose
 *    key nobody waits for (a credit, data for a reader at work) and by tcp's deliveries, and
 *    drains them. A reader that waits alone (the poller) first polls the mailbox itself holding
 *    the turn, for DECK's polling window (DECK_POLL: DECK_SPIN_US), as a reader inside a
 *    retrieve did; the doorbell says which key it looks for, so that its messages wake nobody,
 *    until a thread blocks otherwise (a writer); others sleep at once. Every reader reads the
 *    bell before it looks, so a ring after that read ends its wait at once and nothing is
 *    missed;
 *  - without keyed wake-ups, the receive thread takes the turn when no reader is there and
 *    none was for a grace period (a reader's next poll comes within microseconds): data keeps
 *    flowing into the windows of applications that do not read, and window updates reach our
 *    writers. A reader that arrives while it is in the mailbox wakes it with a zero-length token;
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct mv_engine eng = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- receiving: dispatch, the turn, the receive thread ---------------------------------- */

/* Hands a retrieved message to its queue pair. Never posts (the caller holds the turn). The
 * message may lie in memory its sender can still write (deck_mbox_retrv_apply): what is read
 * from it is read once where it is used (the head is copied; qp_recv.c checks the records). */
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
    if (h.kind == MV_WIRE_PING || h.kind == MV_WIRE_PONG) {
        mv_eng_heard(msg->src, h.kind == MV_WIRE_PING);
        return;
    }
    int heard = 0;
    struct mv_qp *qp = mv_eng_pin_for(h.dest_qp, msg->src, h.src_qp, h.kind == MV_WIRE_CREDIT, &heard);
    if (!heard)
        mv_eng_heard(msg->src, 0);
    if (!qp) {
        /* Data for a queue pair that is gone (closed, or never ours): tell the sender, as TCP
         * answers a segment for no connection with a reset. Not an end of stream alone (records
         * without bytes): TCP acknowledges a FIN that finds its connection closed. When both
         * ends close at once their ends of stream cross, and answering each with a reset made
         * every such connection cost each process a reset to post and one to take, wake-ups of
         * the engine's threads for nothing (scripts/connectrate.sh, pinned: 22.5 context
         * switches per connection with them, 17.6 without). */
        if (h.kind == MV_WIRE_DATA && msg->src >= 0
            && mv_wire_payload(msg->buf + MV_WIRE_HEAD, (uint32_t)msg->len - MV_WIRE_HEAD) != 0)
            mv_engine_schedule_control(msg->src, MV_WIRE_RESET, h.src_qp, h.dest_qp);
        return;
    }
    mv_qp_dispatch(qp, &h, msg);
    /* The pin goes when the turn does, under the engine lock taken then anyway (end_turn_locked):
     * a lock pair fewer per message. A retrieve dispatches one message; should one dispatch
     * more, the earlier pin goes now. */
    if (eng.dispatched)
        mv_eng_unpin(eng.dispatched);
    eng.dispatched = qp;
}

/* Ends the retrieve of the turn holder with a token; at most one is outstanding. Engine lock
 * held. If the token cannot be posted, the holder still returns with the next message or its
 * timeout (the receive thread's is bounded), so only latency is lost. */
void mv_eng_kick_locked(void)
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

/* The turn holder gives the turn back, and the queue pair its dispatch pinned; engine lock held. */
static void end_turn_locked(void)
{
    eng.busy = eng.busy_daemon = 0;
    if (eng.dispatched) {
        struct mv_qp *qp = eng.dispatched;
        eng.dispatched = NULL;
        if (--qp->pins == 0)
            pthread_cond_broadcast(&eng.unpinned);
    }
}

static void dispatch_fn(const deck_msg_t *msg, void *arg)
{
    (void)arg;
    dispatch(msg);
}

/* The message is dispatched where DECK holds it (in the peer's part of a shared segment, for
 * shared memory): one copy fewer on the way from the writer's ring to the reader's buffer. */
static int retrieve_and_dispatch(int timeout_ms)
{
    deck_msg_clear(&eng.msg);
    return deck_mbox_retrv_apply(&eng.mb, &eng.msg, timeout_ms, dispatch_fn, NULL);
}

/* When a reader was last here, for the receive thread's grace; keyed wake-ups have none. */
static void note_activity_locked(void)
{
    if (!eng.keyed)
        eng.activity_ns = vapi_now_ns();
}

enum mv_progress mv_engine_progress(int timeout_ms, int pass_turn)
{
    pthread_mutex_lock(&eng.lock);
    note_activity_locked();
    if (eng.busy || eng.stopping) {
        if (eng.busy && eng.busy_daemon)
            mv_eng_kick_locked();
        pthread_mutex_unlock(&eng.lock);
        return MV_BUSY;
    }
    eng.busy = 1;
    eng.busy_daemon = 0;
    pthread_mutex_unlock(&eng.lock);
    int rc = retrieve_and_dispatch(timeout_ms);
    pthread_mutex_lock(&eng.lock);
    end_turn_locked();
    note_activity_locked();
    if (pass_turn)
        pass_turn_locked();
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
    eng.activity_ns = vapi_now_ns();
    if (eng.busy && eng.busy_daemon)
        mv_eng_kick_locked();
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
    eng.activity_ns = vapi_now_ns();
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
    if (eng.keyed)
        return;   /* nobody waits inside a retrieve; completions ring their keys */
    pthread_mutex_lock(&eng.lock);
    if (eng.busy && !eng.busy_daemon)
        mv_eng_kick_locked();
    pthread_mutex_unlock(&eng.lock);
}

void mv_engine_activity(void)
{
    if (eng.keyed)
        return;   /* no grace to restart */
    pthread_mutex_lock(&eng.lock);
    eng.activity_ns = vapi_now_ns();
    pthread_mutex_unlock(&eng.lock);
}

/* ---- keyed wake-ups ------------------------------------------------------------------------- */

int mv_engine_keyed(void) { return eng.keyed; }

uint32_t mv_engine_seen(void)
{
    uint32_t seen = 0;
    deck_mbox_key_seen(&eng.mb, &seen);
    return seen;
}

void mv_engine_wait_key(unsigned key, uint32_t seen, int timeout_ms)
{
    deck_mbox_key_wait(&eng.mb, (int)key, seen, timeout_ms);
}

void mv_engine_ring_key(unsigned key) { deck_mbox_key_ring(&eng.mb, (int)key); }

void mv_engine_drain(void)
{
    for (int i = 0; i < MV_DRAIN_MAX; i++)
        if (mv_engine_progress(0, 0) != MV_PROGRESSED)
            return;
    /* More keeps coming: the receive thread goes on, this reader looks at its CQ. */
    deck_mbox_key_ring(&eng.mb, DECK_KEY_ANY);
}

void mv_engine_reader_enter(void) { __atomic_fetch_add(&eng.keyed_readers, 1, __ATOMIC_RELAXED); }
void mv_engine_reader_leave(void) { __atomic_fetch_sub(&eng.keyed_readers, 1, __ATOMIC_RELAXED); }

/* The doorbell says the poller looks for key, while nobody else blocks: a message for it wakes
 * nobody. A thread that blocks otherwise takes the mark away first (mv_engine_unmark). The mark
 * is stored only when it changes, and this process alone stores it, so mark_shown tells
 * without a look at the doorbell's line, which a sender's ring has just taken to its CPU: the
 * reader that looked there after each message paid for a line crossing (and so did the next
 * ring). mark_shown is stored before the doorbell here and after it in clear_mark, so that
 * when the two race it may say "not shown" of a mark that is, never the other way round. */
static void mark_poller(unsigned key)
{
    if (__atomic_load_n(&eng.other_waiters, __ATOMIC_SEQ_CST) == 0) {
        __atomic_store_n(&eng.marked, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&eng.mark_shown, __ATOMIC_RELAXED) != key + 1) {
            __atomic_store_n(&eng.mark_shown, key + 1, __ATOMIC_SEQ_CST);
            deck_mbox_key_poller(&eng.mb, (int)key);
        }
        if (__atomic_load_n(&eng.other_waiters, __ATOMIC_SEQ_CST) > 0)
            mv_engine_unmark();   /* a writer came meanwhile and may have missed the mark */
    }
}

int mv_engine_polling_take(unsigned key)
{
    /* Only a reader alone polls. With several waiting, the poller holds the turn while the
     * others' threads need the CPU; preempted, it held their messages too (4 connections, free
     * placement: 62-77 us per call without polling, 117-143 with 5 us of it). */
    if (__atomic_load_n(&eng.keyed_readers, __ATOMIC_RELAXED) > 1)
        return 0;
    int free = 0;
    if (!__atomic_compare_exchange_n(&eng.polling, &free, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return 0;
    /* While it polls, its messages need nobody else either: unmarked (a new connection's key),
     * the answer to a request it just sent woke the receive thread, which then only found the
     * message taken, a wake-up of the other CPU per request. */
    mark_poller(key);
    return 1;
}

void mv_engine_polling_release(unsigned key)
{
    /* The mark stays after the poller returns: its next read comes within microseconds, and a
     * message that comes before it must not cost its sender a wake-up of the receive thread,
     * which takes the CPU the reader needs (pinned, the 64 KiB stream ran at half speed). */
    mark_poller(key);
    __atomic_store_n(&eng.polling, 0, __ATOMIC_RELEASE);
}

/* Takes the poller's mark off the doorbell; 1 if there was one, and so maybe messages that came
 * under it and woke nobody. */
static int clear_mark(void)
{
    if (!__atomic_exchange_n(&eng.marked, 0, __ATOMIC_SEQ_CST))
        return 0;
    deck_mbox_key_poller(&eng.mb, DECK_KEY_ANY);
    __atomic_store_n(&eng.mark_shown, 0, __ATOMIC_SEQ_CST);
    return 1;
}

void mv_engine_unmark(void)
{
    /* What came under the mark: the receive thread dispatches it (not this thread, which may
     * hold a queue pair's locks). */
    if (clear_mark())
        deck_mbox_key_ring(&eng.mb, DECK_KEY_ANY);
}

void mv_engine_unmark_here(void)
{
    /* The peer's end of stream, typically, which came after the last read: waking the receive
     * thread for it cost more than the rest of a short connection's close. */
    if (clear_mark())
        mv_engine_drain();
}

void mv_engine_other_wait(int enter)
{
    if (enter) {
        __atomic_fetch_add(&eng.other_waiters, 1, __ATOMIC_SEQ_CST);
        mv_engine_unmark();
    } else {
        __atomic_fetch_sub(&eng.other_waiters, 1, __ATOMIC_SEQ_CST);
    }
}

/* The receive thread with keyed wake-ups: it waits as the plain waiter, woken by the messages
 * whose key nobody waits for (and by tcp's deliveries), and drains; the bell is read before
 * each drain, so a message that comes during one makes the wait return at once. Engine lock
 * held on entry and exit; the bell is read under it, so engine_stop's ring (under it too)
 * comes after the read and ends the wait. */
static void recv_keyed_step(uint64_t next_check)
{
    uint64_t now = vapi_now_ns();
    uint32_t seen = mv_engine_seen();
    pthread_mutex_unlock(&eng.lock);
    mv_engine_drain();
    int ms = (int)((next_check - now + 999999) / 1000000);
    deck_mbox_key_wait(&eng.mb, DECK_KEY_ANY, seen, ms > 0 ? ms : 1);
    pthread_mutex_lock(&eng.lock);
}

static void *recv_thread(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "mv-receive");   /* for top -H, perf, gdb */
    uint64_t next_check = vapi_now_ns() + MV_LIVENESS_MS * 1000000ull;
    uint64_t next_reclaim = vapi_now_ns() + MV_RECLAIM_MS * 1000000ull;
    pthread_mutex_lock(&eng.lock);
    while (!eng.stopping) {
        uint64_t now = vapi_now_ns();
        if (now >= next_check) {
            pthread_mutex_unlock(&eng.lock);
            mv_eng_check_peers();
            if (now >= next_reclaim) {
                deck_reclaim();
                next_reclaim = now + MV_RECLAIM_MS * 1000000ull;
            }
            pthread_mutex_lock(&eng.lock);
            next_check = now + MV_LIVENESS_MS * 1000000ull;
            continue;
        }
        if (eng.keyed) {
            recv_keyed_step(next_check);
            continue;
        }
        if (!eng.busy && eng.pollers == 0 && now >= eng.activity_ns + MV_RECV_GRACE_NS) {
            eng.busy = eng.busy_daemon = 1;
            pthread_mutex_unlock(&eng.lock);
            int ms = (int)((next_check - now + 999999) / 1000000);
            retrieve_and_dispatch(ms);
            pthread_mutex_lock(&eng.lock);
            end_turn_locked();
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
    if (eng.keyed)
        deck_mbox_key_ring(&eng.mb, DECK_KEY_ANY);
    else if (eng.busy)
        mv_eng_kick_locked();
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
    mv_eng_peers_free();
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
    eng.ncontrols = eng.control_head = 0;
    eng.busy = eng.busy_daemon = eng.kick_pending = 0;
    eng.keyed = eng.polling = eng.keyed_readers = eng.marked = eng.other_waiters = 0;
    eng.mark_shown = 0;
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
    if (!(eng.slots = calloc(MV_QP_SLOTS, sizeof *eng.slots)))
        return vapi_fail(VAPI_ENOMEM, fn, "no memory for the queue pair table");
    char name[DECK_MBOX_NAME_MAX];
    snprintf(name, sizeof name, "mv-%d", deck_node());
    int rc = deck_mbox_create(&eng.mb, name);
    if (rc != DECK_OK)
        return vapi_fail(VAPI_EGEN, fn, "creating the mailbox %s failed: %s: %s", name,
                       deck_strerror(rc), deck_last_error());
    eng.mb_open = 1;
    /* Every process DECK admits may post to it (queue pairs check the sender); nothing longer
     * than the largest message a peer sends is admitted. */
    if ((rc = deck_mbox_limit(&eng.mb, mv_wire_capacity(MV_MTU_MAX))) != DECK_OK
        || (rc = deck_mbox_clone_at(&eng.self, deck_node(), name)) != DECK_OK)
        return vapi_fail(VAPI_EGEN, fn, "setting up the mailbox %s failed: %s: %s", name,
                       deck_strerror(rc), deck_last_error());
    eng.self_open = 1;
    uint32_t seen;
    const char *keyed = getenv("MV_KEYED_WAKE");   /* "0": the turn holder waits inside retrieves */
    eng.keyed = deck_mbox_key_seen(&eng.mb, &seen) == DECK_OK && !(keyed && strcmp(keyed, "0") == 0);
    if ((rc = deck_msg_create(&eng.msg, mv_wire_capacity(MV_MTU_MAX))) != DECK_OK
        || (rc = deck_msg_create(&eng.token, 0)) != DECK_OK)
        return vapi_fail(VAPI_ENOMEM, fn, "no memory for the engine's messages");
    eng.activity_ns = 0;
    if (pthread_create(&eng.recv_thread, NULL, recv_thread, NULL))
        return vapi_fail(VAPI_EGEN, fn, "cannot start the receive thread");
    eng.recv_running = 1;
    if (pthread_create(&eng.send_thread, NULL, mv_eng_send_thread, NULL))
        return vapi_fail(VAPI_EGEN, fn, "cannot start the send thread");
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
