/*
 * Listeners of the TCP transport and the handshakes of the connections they accept (tcp.h).
 *
 * One thread runs every handshake in a poll loop: a connection that has not proved itself costs
 * a descriptor and a small record, never a thread. Each handshake has a deadline
 * (DECK_AUTH_TIMEOUT_MS, default 5000) for the whole exchange; at most PENDING_MAX run at once
 * and PENDING_PER_ADDRESS from one address: a newcomer beyond a cap pushes out the oldest one
 * (a peer of the run proves itself in one round trip, so only the slow and the silent are
 * pushed out). A dynamic peer's handshake may arrive before the bootstrap that introduces it has
 * finished (deck_add_peer): it waits, within its deadline, for the key.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "tcp.h"

#define MAX_LISTENERS        8
#define PENDING_MAX          256
#define PENDING_PER_ADDRESS  32
#define ACCEPTS_PER_ROUND    16   /* then the handshakes already there get their turn */

enum step { READ_HELLO, AWAIT_KEY, READ_PROOF };

typedef struct pending {
    int                fd;
    tcp_sockaddr_t     from;
    struct timespec    deadline;
    uint64_t           arrival;            /* order of arrival: the oldest is pushed out first */
    enum step          step;
    unsigned char      buf[TCP_FRAME_BYTES + TCP_AUTH2_BYTES];
    size_t             got, need;
    tcp_auth_state_t   auth;
} pending_t;

static struct {
    deck_mutex_t       lock;               /* listeners and the thread's start */
    int                fds[MAX_LISTENERS];
    tcp_sockaddr_t     addrs[MAX_LISTENERS];
    int                listening[MAX_LISTENERS];   /* 0: bound only (tcp_listen_open without now) */
    int                n;
    int                wake;               /* eventfd: a new listener, a new key, stop */
    int                running;
    atomic_int         stopping;
    atomic_int         npending;
    deck_thread_t      thread;
    /* the loop thread's own */
    pending_t          pending[PENDING_MAX];
    int                count;
    uint64_t           arrivals;
} L = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = -1 };

static void poke(void)
{
    uint64_t one = 1;
    if (L.wake >= 0 && write(L.wake, &one, sizeof one) < 0) { /* full counter: already poked */ }
}

void tcp_listen_keys_changed(void)
{
    deck_mutex_lock(&L.lock);
    poke();
    deck_mutex_unlock(&L.lock);
}

int tcp_listen_pending(void) { return atomic_load(&L.npending); }

static void origin_of(const pending_t *p, char *buf, size_t len)
{
    tcp_addr_text(&p->from, buf, len);
}

/* Ends a handshake; `why` (NULL: a silent hang-up, not worth a line) is logged. */
static void drop(int i, const char *why)
{
    pending_t *p = &L.pending[i];
    if (why) {
        char from[TCP_ADDR_TEXT];
        origin_of(p, from, sizeof from);
        deck_log("tcp handshake from %s: %s; connection closed", from, why);
    }
    if (p->fd >= 0) close(p->fd);
    L.pending[i] = L.pending[--L.count];
    atomic_store(&L.npending, L.count);
}

/* The oldest handshake, from `from` or (NULL) from anywhere. */
static int oldest(const tcp_sockaddr_t *from, int *count)
{
    int best = -1;
    *count = 0;
    for (int i = 0; i < L.count; i++) {
        if (from && !tcp_addr_same(&L.pending[i].from, from, 0)) continue;
        (*count)++;
        if (best < 0 || L.pending[i].arrival < L.pending[best].arrival) best = i;
    }
    return best;
}

static void admit(int fd, const tcp_sockaddr_t *from)
{
    int same, i = oldest(from, &same);
    if (same >= PENDING_PER_ADDRESS) drop(i, "pushed out by newer connections from its address");
    if (L.count == PENDING_MAX && (i = oldest(NULL, &same)) >= 0) drop(i, "pushed out by newer connections");
    pending_t *p = &L.pending[L.count++];
    memset(p, 0, sizeof *p);
    p->fd = fd;
    p->from = *from;
    p->arrival = ++L.arrivals;
    p->step = READ_HELLO;
    p->need = TCP_FRAME_BYTES + TCP_AUTH1_BYTES;
    deck_deadline(&p->deadline, tcp_auth_timeout_ms());
    atomic_store(&L.npending, L.count);
}

static void accept_some(int lfd)
{
    for (int k = 0; k < ACCEPTS_PER_ROUND; k++) {
        tcp_sockaddr_t from;
        socklen_t len = sizeof from;
        int fd = accept4(lfd, &from.sa, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) return;              /* EAGAIN, or out of descriptors: the next round tries again */
        tcp_addr_unmap(&from);
        admit(fd, &from);
    }
}

/* The key arrived (or was there): answer with our proof. 1 when the handshake goes on. */
static int answer(int i, const uint8_t key[DECK_KEY_BYTES])
{
    pending_t *p = &L.pending[i];
    unsigned char out[TCP_FRAME_BYTES + TCP_AUTH2_BYTES];
    if (tcp_auth_answer(&p->auth, key, out) != DECK_OK) { drop(i, deck_last_error()); return 0; }
    /* A fresh connection's send buffer takes 80 bytes at once; one that does not is dropped. */
    if (send(p->fd, out, sizeof out, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof out) { drop(i, NULL); return 0; }
    p->step = READ_PROOF;
    p->got = 0;
    p->need = TCP_FRAME_BYTES + TCP_AUTH3_BYTES;
    return 1;
}

static void try_key(int i)
{
    uint8_t key[DECK_KEY_BYTES];
    if (tcp_peer_key(L.pending[i].auth.claimed, key) == DECK_OK) answer(i, key);
    else L.pending[i].step = AWAIT_KEY;
    memset(key, 0, sizeof key);
}

/* The connection proved itself: it leaves the loop for a reader thread of its own. */
static void proved(int i)
{
    pending_t *p = &L.pending[i];
    tcp_peer_t *peer = tcp_peer_find(p->auth.claimed);
    char from[TCP_ADDR_TEXT], origin[TCP_ORIGIN_TEXT];
    origin_of(p, from, sizeof from);
    snprintf(origin, sizeof origin, "node %d at %s", p->auth.claimed, from);
    if (!peer) { drop(i, "proved itself for a peer that is not there any more"); return; }
    int fd = p->fd;
    tcp_auth_state_t auth = p->auth;
    p->fd = -1;
    drop(i, NULL);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    tcp_io_t io = tcp_io_plain(fd);
    if (tcp_conn_start(io, peer, origin, tcp_tls_wanted() ? &auth : NULL) != DECK_OK) deck_log("%s", deck_last_error());
    memset(&auth, 0, sizeof auth);
}

/* Reads what the handshake needs next; acts once it is all there. */
static void advance(int i)
{
    pending_t *p = &L.pending[i];
    ssize_t r = recv(p->fd, p->buf + p->got, p->need - p->got, MSG_DONTWAIT);
    if (r == 0) { drop(i, p->got ? "hung up in the middle of its handshake" : NULL); return; }
    if (r < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) drop(i, NULL);
        return;
    }
    size_t before = p->got;
    p->got += (size_t)r;
    tcp_frame_t f;
    if (before < TCP_FRAME_BYTES && p->got >= TCP_FRAME_BYTES) {
        /* The header alone tells garbage (an HTTP request, a port scanner's probe) at once. */
        tcp_frame_decode(p->buf, &f);
        uint32_t want = p->step == READ_HELLO ? FRAME_AUTH1 : FRAME_AUTH3;
        uint64_t len = p->step == READ_HELLO ? TCP_AUTH1_BYTES : TCP_AUTH3_BYTES;
        if (f.type != want || f.len != len) {
            char why[128];
            snprintf(why, sizeof why, "sent frame type %u of %llu bytes instead of a DECK handshake", f.type,
                     (unsigned long long)f.len);
            drop(i, why);
            return;
        }
    }
    if (p->got < p->need) return;
    tcp_frame_decode(p->buf, &f);
    if (p->step == READ_HELLO) {
        if (tcp_auth_check1(&f, p->buf + TCP_FRAME_BYTES, &p->auth) != DECK_OK) { drop(i, deck_last_error()); return; }
        try_key(i);
    } else if (p->step == READ_PROOF) {
        if (tcp_auth_check3(&p->auth, &f, p->buf + TCP_FRAME_BYTES) != DECK_OK) { drop(i, deck_last_error()); return; }
        proved(i);
    }
}

static void *loop_main(void *arg)
{
    pthread_setname_np(pthread_self(), "deck-tcp-accept");
    struct pollfd fds[1 + MAX_LISTENERS + PENDING_MAX];
    uint64_t order[PENDING_MAX];                   /* arrival of the handshake each pollfd stands for */
    while (!atomic_load(&L.stopping)) {
        int nl, timeout = 60000, n = 0;
        fds[n++] = (struct pollfd){ L.wake, POLLIN, 0 };
        deck_mutex_lock(&L.lock);
        for (int k = 0; k < L.n; k++)
            if (L.listening[k]) fds[n++] = (struct pollfd){ L.fds[k], POLLIN, 0 };
        nl = n - 1;
        deck_mutex_unlock(&L.lock);
        for (int i = 0; i < L.count; i++) {
            /* A handshake waiting for its key reads nothing meanwhile: its deadline still runs. */
            fds[n] = (struct pollfd){ L.pending[i].fd, L.pending[i].step == AWAIT_KEY ? 0 : POLLIN, 0 };
            order[n - 1 - nl] = L.pending[i].arrival;
            n++;
            long left = deck_ms_until(&L.pending[i].deadline);
            if (left < timeout) timeout = (int)left;
        }
        if (poll(fds, (nfds_t)n, timeout) < 0 && errno != EINTR) break;
        int rekey = 0;
        if (fds[0].revents & POLLIN) {
            uint64_t v;
            rekey = read(L.wake, &v, sizeof v) > 0;
        }
        /* Handshakes first (by arrival: drop() moves records), then new connections. */
        for (int k = 1 + nl; k < n; k++) {
            if (!fds[k].revents) continue;
            for (int i = 0; i < L.count; i++)
                if (L.pending[i].arrival == order[k - 1 - nl]) {
                    if (L.pending[i].step == AWAIT_KEY) drop(i, NULL);   /* it hung up while waiting */
                    else advance(i);
                    break;
                }
        }
        for (int i = 0; rekey && i < L.count; i++)
            if (L.pending[i].step == AWAIT_KEY) {
                uint64_t before = L.pending[i].arrival;
                try_key(i);
                if (i < L.count && L.pending[i].arrival != before) i--;   /* dropped: look at the one moved here */
            }
        for (int i = 0; i < L.count;) {
            if (!deck_deadline_passed(&L.pending[i].deadline)) { i++; continue; }
            char why[96];
            snprintf(why, sizeof why, "did not prove itself within %d ms (DECK_AUTH_TIMEOUT_MS)", tcp_auth_timeout_ms());
            drop(i, L.pending[i].got || L.pending[i].step != READ_HELLO ? why : NULL);
        }
        for (int k = 1; k <= nl; k++)
            if (fds[k].revents & POLLIN) accept_some(fds[k].fd);
        tcp_conns_reap();
    }
    return NULL;
}

/* listen() on bound listener k, starting the handshake loop with the first one. L.lock held. */
static int start_locked(int k, const char *what)
{
    if (L.listening[k]) return DECK_OK;
    if (listen(L.fds[k], 128) != 0) {
        char where[TCP_ADDR_TEXT];
        tcp_addr_text(&L.addrs[k], where, sizeof where);
        return deck_fail_errno(DECK_EIO, errno, "%s: listening on %s", what, where);
    }
    if (!L.running) {
        atomic_store(&L.stopping, 0);
        int rc = deck_thread_create(&L.thread, loop_main, NULL);
        if (rc) return rc;
        L.running = 1;
    }
    L.listening[k] = 1;
    poke();                                  /* the loop polls the new listener from now on */
    return DECK_OK;
}

int tcp_listen_open(const tcp_sockaddr_t *addr, int *bound_port, int now, const char *what)
{
    deck_mutex_lock(&L.lock);
    int rc = DECK_OK, fd = -1, k;
    for (k = 0; k < L.n; k++)
        if (tcp_addr_same(&L.addrs[k], addr, tcp_addr_port(addr) != 0)) break;
    if (k == L.n) {
        if (L.n == MAX_LISTENERS) {
            rc = deck_fail(DECK_ENOMEM, "%s: this process listens on %d addresses already", what, MAX_LISTENERS);
            goto out;
        }
        if (L.wake < 0 && (L.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
            rc = deck_fail_errno(DECK_EIO, errno, "%s: eventfd", what);
            goto out;
        }
        fd = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) { rc = deck_fail_errno(DECK_EIO, errno, "%s: socket", what); goto out; }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        /* The IPv6 wildcard serves both families, whatever the system default (bindv6only);
         * an IPv6 address serves its own family only, as an IPv4 one does. */
        int v6only = !tcp_addr_is_any(addr);
        if (addr->sa.sa_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
        tcp_sockaddr_t a = *addr;
        socklen_t alen = sizeof a;
        if (bind(fd, &a.sa, tcp_addr_len(&a)) != 0 || getsockname(fd, &a.sa, &alen) != 0) {
            char where[TCP_ADDR_TEXT];
            tcp_addr_text(addr, where, sizeof where);
            rc = deck_fail_errno(DECK_EIO, errno, "%s: binding %s", what, where);
            close(fd);
            goto out;
        }
        L.fds[k] = fd;
        L.addrs[k] = a;
        L.listening[k] = 0;
        L.n++;
    }
    if (now && (rc = start_locked(k, what))) {
        if (k == L.n - 1 && !L.listening[k]) close(L.fds[--L.n]);   /* made here and of no use: gone */
        goto out;
    }
    *bound_port = tcp_addr_port(&L.addrs[k]);
out:
    deck_mutex_unlock(&L.lock);
    return rc;
}

int tcp_listen_start(void)
{
    deck_mutex_lock(&L.lock);
    int rc = DECK_OK;
    for (int k = 0; k < L.n && !rc; k++) rc = start_locked(k, "deck_add_peer");
    deck_mutex_unlock(&L.lock);
    return rc;
}

void tcp_listen_stop(void)
{
    deck_mutex_lock(&L.lock);
    int running = L.running;
    atomic_store(&L.stopping, 1);
    poke();
    deck_mutex_unlock(&L.lock);
    if (running) deck_thread_join(L.thread, NULL);
    for (int k = 0; k < L.n; k++) close(L.fds[k]);
    while (L.count > 0) drop(0, NULL);
    if (L.wake >= 0) close(L.wake);
    L.wake = -1;
    L.n = 0;
    L.running = 0;
    L.arrivals = 0;
}
