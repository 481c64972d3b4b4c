/*
 * The reading retriever (tcp.h). A message that a reader thread reads and queues reaches the
 * thread retrieving it through a second wake-up (the reader's, then the retriever's), where a
 * socket read has one: on a machine whose cross-core wake-ups are slow, and when the scheduler
 * would have put both processes on one core, that doubled the one-way time. So a retriever
 * about to block on an empty mailbox takes "the role" when nobody has it and waits in poll()
 * on the plain connections itself: it reads the frames that are wholly there and delivers
 * them (to any mailbox, as their reader would), then looks at its mailbox again.
 *
 *   retriever (role holder)              reader threads of the plain connections
 *   ------------------------             ---------------------------------------
 *   takes the role, polls the            park while the holder has their connection,
 *   connections no reader is in          and TCP_WAIT_GRACE_US after it is free; then each
 *   reads whole frames, delivers         reads (waiting in recv) under its read lock
 *   a frame not all there: hands    -->  its reader reads the rest (waiting for it) and
 *   that connection to its reader        delivers; its delivery wakes the holder
 *
 * A reader that went into recv before the role was taken keeps its connection until its next
 * frame (the holder skips a connection whose read lock is held): after a pause, the first
 * message takes the reader's way; the ones that follow within the grace, the holder's.
 *
 * Who reads a connection holds its read_lock, and reads and delivers whole frames under it,
 * so each connection's frames are delivered once and in order whoever reads them. The holder
 * never waits for a peer's bytes: it takes in what the socket holds, in one recv that does not
 * wait (tcp_inbuf_fill), handles the frames that are whole in the connection's buffer, where
 * they lie, and skips a connection whose reader holds the lock (the reader wakes it when done).
 * A frame whose bytes are still coming it leaves in the buffer and polls until the rest is in
 * the socket (SO_RCVLOWAT), so a 64 KiB message wakes it once (a longer one, as its parts
 * come: await_rest). (It asked FIONREAD first and then read each frame's header and payload:
 * three system calls a frame where one does, and a system call costs about 1 us on this
 * machine's virtual CPUs.) The mark is the holder's alone, set before each of its polls: a
 * reader puts it back to 1 before it reads (tcp_wait_lowat_clear). What
 * wakes the holder's poll besides its connections is wake_fd: a delivery to the mailbox it
 * waits for by another thread (a TLS connection's reader, a post to this process), its
 * destroy, its watched peer's end. A wait lasts at most DECK_TCP_WAIT_SLICE_MS (100), after
 * which the retriever looks at its mailbox, its deadline and its peer (tests make it long, so
 * that only the wake-ups can end a wait early).
 *
 * Before its poll sleeps, the holder polls without sleeping for DECK_SPIN_US (30 us, as sci's
 * waiters do): on this machine a sleeping thread's wake-up takes ~20 us more than the answer
 * itself, and the waker pays part of it in its send. Measured (Java ping-pong over loopback,
 * 40 000 round trips, both JVMs' CPU): 64 B one-way 23.5 -> 5.0 us pinned and free, CPU
 * 3.8 -> 2.8 s; 64 KiB 40.0 -> 14.6 us; one core for both, 9.4 -> 9.8 us (the yields); streams
 * of 64 KiB writes +10% pinned, 1 MiB writes unchanged. A thread whose polls mostly find
 * nothing stops polling but for a probe now and then (spin_wanted), so a credit waiter, a
 * daemon or an idle process pays nothing for it.
 *
 * A look (a retrieve with no time to wait) reads what the sockets hold without taking the
 * role. A retriever that finds the role taken waits on its mailbox, whose messages the holder
 * delivers; the holder's release then lets the readers in at once instead of after the grace.
 *
 * DECK_TCP_WAIT_READS=0 turns the role off: reader threads deliver everything, as before.
 * TLS connections always keep their reader (its library holds bytes poll cannot see).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "tcp.h"

#define WAIT_SLICE_MS 100        /* default of DECK_TCP_WAIT_SLICE_MS */
#define WAIT_CONNS    64          /* connections one wait reads; others stay their readers' */
#define WANTED_NS     (10 * 1000000ull) /* a release that recent a want follows lets readers in at once */
/* A reader whose connection the holder has looks again after KEPT_WAIT_MS at the latest. A
 * holder whose hold lasted the grace or more wakes the readers as it lets the role go; after a
 * shorter one that nobody follows, nothing does, and looks read the sockets themselves until
 * then (kept_until). Looking every grace instead woke each connection's reader a thousand
 * times a second in an idle JVM, whose engine thread holds the role in 100 ms waits. */
#define KEPT_WAIT_MS  10

/* The highest mark (SO_RCVLOWAT) the holder's poll waits for: a 64 KiB block and the heads of
 * its DECK and MicroVAPI messages. A frame lacking more is read as it comes (await_rest). */
#define MARK_MAX      (64 * 1024 + 1024)

/* A thread whose polls missed SPIN_MISSES times more than they found something polls on one
 * wait in SPIN_PROBE only, until hits bring the count down again (spin_wanted, spin_poll). */
#define SPIN_MISSES 4
#define SPIN_PROBE  16

enum ready { SKIPPED, NOTHING, HANDLED };

static deck_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static deck_cond_t  park_cv;             /* a parked reader looks at its turn again */
static int          park_ready;
static atomic_int   role;                /* 1 while a retriever holds it */
static _Atomic uint64_t role_free_at;    /* ns, CLOCK_MONOTONIC: readers read again from then */
static _Atomic uint64_t role_wanted_at;  /* ns: when a retriever last found the role taken */
static _Atomic uint64_t kept_until;      /* ns: readers parked behind the last hold may sleep
                                          * until then (KEPT_WAIT_MS; 0 once they were woken) */
static atomic_int   wake_fd = -1;        /* eventfd: ends the holder's poll */
static atomic_int   slice_ms = WAIT_SLICE_MS;
static _Atomic long long spin_us = 30;   /* DECK_SPIN_US */
static _Thread_local unsigned spin_misses, spin_waits;   /* this thread's recent polls */
static atomic_long  frames_held;         /* frames role holders read and delivered */
static atomic_long  fills;               /* their recvs (tcp_inbuf_fill) */
static atomic_long  spins, spin_hits;    /* waits that polled first; those whose polls found something */
static atomic_long  reader_wakes;        /* parked readers' looks at their turn again */
static _Thread_local int holding;       /* this thread holds the role: its deliveries need no wake */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void signal_fd(int fd)
{
    uint64_t one = 1;
    if (fd >= 0 && write(fd, &one, sizeof one) < 0) {}   /* a full counter is signalled already */
}

static void drain_fd(int fd)
{
    uint64_t value;
    if (fd >= 0 && read(fd, &value, sizeof value) < 0) {}  /* EAGAIN: nothing to drain */
}

int tcp_wait_init(void)
{
    deck_mutex_lock(&park_lock);
    if (!park_ready) {
        deck_cond_init(&park_cv);
        park_ready = 1;
    }
    deck_mutex_unlock(&park_lock);
    atomic_store(&role, 0);
    atomic_store(&role_free_at, 0);
    atomic_store(&kept_until, 0);
    int slice = deck_env_int("DECK_TCP_WAIT_SLICE_MS", WAIT_SLICE_MS);
    atomic_store(&slice_ms, slice > 0 ? slice : WAIT_SLICE_MS);
    long long spin;
    int rc = deck_spin_us(&spin);
    if (rc) return rc;
    atomic_store(&spin_us, spin);
    if (deck_env_int("DECK_TCP_WAIT_READS", 1) == 0) return DECK_OK;
    int w = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w < 0) return deck_fail_errno(DECK_EIO, errno, "deck tcp: eventfd for the reading retriever");
    atomic_store(&wake_fd, w);
    return DECK_OK;
}

void tcp_wait_done(void)
{
    int w = atomic_exchange(&wake_fd, -1);
    if (w >= 0) close(w);
}

int tcp_wait_role_held(void) { return atomic_load(&role); }

long tcp_wait_frames_held(void) { return atomic_load(&frames_held); }

long tcp_wait_fills(void) { return atomic_load(&fills); }

long tcp_wait_spins(long *hits)
{
    *hits = atomic_load(&spin_hits);
    return atomic_load(&spins);
}

long tcp_wait_reader_wakes(void) { return atomic_load(&reader_wakes); }

void tcp_wait_readers_wake(void)
{
    deck_mutex_lock(&park_lock);
    if (park_ready) deck_cond_broadcast(&park_cv);
    deck_mutex_unlock(&park_lock);
}

void tcp_wake_reading(void)
{
    if (!holding) signal_fd(atomic_load(&wake_fd));
}

/* ---- the reader threads' side ---------------------------------------------------------------- */

int tcp_wait_reader_turn(tcp_conn_t *c)
{
    for (;;) {
        uint64_t now = now_ns(), free_at = atomic_load(&role_free_at);
        int held = atomic_load(&role);
        /* A connection the holder did not take (it came up after the holder looked, or past
         * WAIT_CONNS) is its reader's: kept out, its frames would wait for the holder's slice. */
        if (held ? !atomic_load(&c->holder_has) : now >= free_at) return !atomic_load(&c->closed);
        uint64_t until = held ? now + KEPT_WAIT_MS * 1000000ull : free_at;
        struct timespec ts = { .tv_sec = (time_t)(until / 1000000000ull), .tv_nsec = (long)(until % 1000000000ull) };
        deck_mutex_lock(&park_lock);
        /* Looked at under the lock their setters broadcast under once they are set: no wake-up is missed. */
        if (!atomic_load(&c->closed) && !atomic_load(&c->to_reader))
            deck_cond_wait_until(&park_cv, &park_lock, &ts);
        deck_mutex_unlock(&park_lock);
        atomic_fetch_add(&reader_wakes, 1);
        if (atomic_load(&c->closed)) return 0;
        if (atomic_load(&c->to_reader)) return 1;
    }
}

/* ---- the holder's side ---------------------------------------------------------------------- */

/* Hands c to its reader, which reads what the holder would have to wait for. */
static void hand_to_reader(tcp_conn_t *c)
{
    atomic_store(&c->to_reader, 1);
    tcp_wait_readers_wake();
}

static int set_lowat(tcp_conn_t *c, int bytes)
{
    if (setsockopt(c->io.fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes) < 0) return 0;
    c->lowat = bytes;
    return 1;
}

void tcp_wait_lowat_clear(tcp_conn_t *c)
{
    if (c->lowat > 1) set_lowat(c, 1);
}

/* A frame of c is not all there: the holder's poll waits until the `need` bytes it lacks are in
 * the socket (SO_RCVLOWAT), so that a 64 KiB message wakes it once; a frame longer than a
 * buffer holds (TCP_HELD_FRAME_MAX) goes to its reader. A frame that lacks more than
 * MARK_MAX is taken in as it comes (the mark back at 1): waiting for all of a 256 KiB frame
 * (a 1 MiB write goes in four) left the kernel's copy of it to the holder's wake-up, where
 * reading its parts as they arrive copies them while the rest is still being sent. Measured
 * (Java ping-pong of 1 MiB + 8 B writes over DECK tcp, 4 alternating pairs per placement):
 * one-way 432-538 -> 397-415 us pinned, 484-609 -> 377-540 us free; 64 KiB + 8 B unchanged
 * (23.2-23.7 against 22.5-24.1 us pinned). */
static void await_rest(tcp_conn_t *c, uint64_t total, uint64_t need)
{
    int mark = need > MARK_MAX ? 1 : (int)need;
    if (total > TCP_HELD_FRAME_MAX || (c->lowat != mark && !set_lowat(c, mark)))
        hand_to_reader(c);
}

/* Reads what c holds and handles the frames that are whole, each where it lies in c's buffer.
 * `waits`: the caller polls next, so a frame not all there is waited for (await_rest).
 * `takes`: it takes in what the socket holds (a recv); without, only what c's buffer holds is
 * handled, and the caller's poll says whether the socket has more. */
static enum ready read_ready(tcp_conn_t *c, int waits, int takes)
{
    if (pthread_mutex_trylock(&c->read_lock) != 0) return SKIPPED;   /* its reader is at it */
    enum ready done = NOTHING;
    while (atomic_load(&c->shared) && !atomic_load(&c->closed) && !atomic_load(&c->to_reader)) {
        uint64_t total;
        if (tcp_inbuf_frame_buffered(&c->in, &total)) {
            if (!tcp_conn_read_frame(c)) {
                tcp_conn_kill(c);        /* its reader ends it, as for a frame it read itself */
                break;
            }
            atomic_fetch_add(&frames_held, 1);
            done = HANDLED;
            continue;
        }
        if (total > TCP_HELD_FRAME_MAX) {
            hand_to_reader(c);
            break;
        }
        /* Handled some: its retriever goes back to its mailbox first. Reading on while a
         * stream flows handed the frames behind to a reader that was not there to take them
         * (MicroVAPI queued them all, copying each, instead of its posted receives). */
        if (done == HANDLED) break;
        ssize_t r = -EAGAIN;
        if (takes) {
            atomic_fetch_add(&fills, 1);
            r = tcp_inbuf_fill(&c->in, (size_t)total);
        }
        if (r > 0) continue;
        if (r == -EAGAIN) {
            if (waits) await_rest(c, total, total - tcp_inbuf_buffered(&c->in));
            break;
        }
        hand_to_reader(c);   /* the end of the stream, or a failure: its reader reads it and ends c */
        break;
    }
    deck_mutex_unlock(&c->read_lock);
    return done;
}

static int poll_ms(const struct timespec *deadline)
{
    int slice = atomic_load(&slice_ms);
    if (!deadline) return slice;
    long ms = deck_ms_until(deadline);
    return ms < slice ? (int)ms : slice;
}

/* Whether this wait polls before it sleeps: while this thread's polls find something (a
 * ping-pong's answer, a stream's next frame); once they mostly miss (a thread that waits for a
 * credit every millisecond) on one wait in SPIN_PROBE, to notice when they would find again. */
static int spin_wanted(long long us)
{
    if (us < 0) return 1;
    if (us == 0) return 0;
    return spin_misses < SPIN_MISSES || ++spin_waits % SPIN_PROBE == 0;
}

/* Polls p[0..n) without sleeping for DECK_SPIN_US (all of ms when it is -1), at most ms: what
 * poll returned (> 0: revents set), 0 when nothing came. It yields between polls: the thread
 * that would end the wait may be waiting for this CPU (the peer, when the scheduler put both
 * on one core; or a thread of this process, as a writer waiting for its send completion keeps
 * the send thread that makes it off the core); with nothing else to run a yield returns at
 * once, and a poll is a system call anyway. Yielding only when SO_INCOMING_CPU said the
 * peer's bytes came from this CPU cost 1 MiB streams 5-10% pinned: the thread in the way was
 * of this process. */
static int spin_poll(struct pollfd *p, int n, int ms, long long us)
{
    uint64_t window = us < 0 || (uint64_t)us * 1000 > (uint64_t)ms * 1000000
                      ? (uint64_t)ms * 1000000 : (uint64_t)us * 1000;
    uint64_t end = now_ns() + window, t;
    int r;
    for (;;) {
        r = poll(p, (nfds_t)n, 0);
        t = now_ns();
        if (r != 0 || t >= end) break;
        sched_yield();
    }
    /* Found after twice the window: a yield gave the CPU to a busy thread for a time slice
     * (milliseconds), and the bytes came meanwhile. That is a miss: counted a hit, it kept a
     * thread of a program beside a busy JVM yielding on every wait (its calls took 1 ms, not
     * 0.15). */
    int hit = r > 0 && t <= end + window;
    atomic_fetch_add(&spins, 1);
    if (hit) atomic_fetch_add(&spin_hits, 1);
    /* A hit takes one miss back: a thread whose polls find something less than half the time
     * (a 1 MiB stream's 256 KiB frames, longer to come than the window) ends up probing only. */
    if (us > 0 && hit && spin_misses > 0) spin_misses--;
    else if (us > 0 && !hit && spin_misses < 2 * SPIN_MISSES) spin_misses++;
    return r;
}

/* One wait as the holder over conns[0..n): what their buffers hold already, else a poll and
 * then what the sockets hold. The sockets are read after the poll only: a wait usually starts
 * when the last frame was just taken (a ping-pong's answer is still coming), and a recv then
 * found nothing, a system call per message on each side (2 recvfrom a round trip where 1
 * does). Bytes that are there already end the poll at once. A wait with no time left reads
 * the sockets at once, as a look does. */
static void hold_once(tcp_conn_t **conns, int n, int wake, const struct timespec *deadline)
{
    struct pollfd p[WAIT_CONNS + 1];
    int polled = 0, handled = 0;
    tcp_conn_t *watched[WAIT_CONNS];
    int ms = poll_ms(deadline);
    for (int i = 0; i < n; i++) {
        enum ready r = read_ready(conns[i], 1, ms == 0);
        handled |= r == HANDLED;
        if (r != SKIPPED && !atomic_load(&conns[i]->to_reader)) {
            watched[polled] = conns[i];
            p[polled++] = (struct pollfd){ .fd = conns[i]->io.fd, .events = POLLIN };
        }
    }
    if (handled || ms == 0) return;  /* the caller looks at its mailbox first; a look ends here */
    p[polled] = (struct pollfd){ .fd = wake, .events = POLLIN };
    long long us = atomic_load(&spin_us);
    int spun = spin_wanted(us), r = spun ? spin_poll(p, polled + 1, ms, us) : 0;
    if (r == 0 && !(spun && us < 0)) r = poll(p, (nfds_t)polled + 1, ms);   /* -1: polled all of ms */
    if (r <= 0) return;
    for (int i = 0; i < polled; i++)
        if (p[i].revents) read_ready(watched[i], 1, 1);
    if (p[polled].revents) drain_fd(wake);
}

/* A look (no time to wait): what the sockets hold, read under each connection's read lock
 * without the role, so that it never keeps a retriever that waits from taking it. Only while
 * the readers keep out or may still be parked behind the last hold (kept_until): otherwise they
 * deliver at once, as they always did, and a look that read too would add system calls to
 * every non-blocking retrieve for nothing. */
static int look(void)
{
    uint64_t now = now_ns();
    if (!atomic_load(&role) && now >= atomic_load(&role_free_at) && now >= atomic_load(&kept_until)) return 0;
    tcp_conn_t *conns[WAIT_CONNS];
    int n = tcp_conns_shared(conns, WAIT_CONNS), handled = 0;
    for (int i = 0; i < n; i++) handled |= read_ready(conns[i], 0, 1) == HANDLED;
    for (int i = 0; i < n; i++) tcp_conn_unref(conns[i]);
    return handled;
}

int tcp_read_waiting(const struct timespec *deadline)
{
    int wake = atomic_load(&wake_fd), free_role = 0;
    if (wake < 0) return 0;
    if (deadline && poll_ms(deadline) == 0) return look();
    if (!atomic_compare_exchange_strong(&role, &free_role, 1)) {
        /* It waits on its mailbox meanwhile: the holder's release must not keep the readers
         * out for the grace, or what comes for this retriever would wait that long. */
        atomic_store(&role_wanted_at, now_ns());
        return 0;
    }
    uint64_t took = now_ns();
    tcp_conn_t *conns[WAIT_CONNS];
    int n = tcp_conns_shared(conns, WAIT_CONNS);
    for (int i = 0; i < n; i++) atomic_store(&conns[i]->holder_has, 1);
    if (n > 0) {
        holding = 1;
        hold_once(conns, n, wake, deadline);
        holding = 0;
    }
    for (int i = 0; i < n; i++) atomic_store(&conns[i]->holder_has, 0);
    uint64_t now = now_ns();
    int wanted = now - atomic_load(&role_wanted_at) < WANTED_NS;
    atomic_store(&role_free_at, n > 0 && !wanted ? now + TCP_WAIT_GRACE_US * 1000ull : 0);
    int wake_readers = wanted || now - took >= TCP_WAIT_GRACE_US * 1000ull;
    atomic_store(&kept_until, wake_readers || n == 0 ? 0 : now + KEPT_WAIT_MS * 1000000ull);
    atomic_store(&role, 0);
    if (wake_readers) tcp_wait_readers_wake();
    for (int i = 0; i < n; i++) tcp_conn_unref(conns[i]);
    return n > 0;
}
