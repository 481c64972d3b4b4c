/*
 * The peers of the TCP transport: where each one listens (if it does), the key it proves itself
 * with, and the connection frames to it go on.
 *
 * Static run: peers[id] for every node but this one, all keyed with the run key. Dynamic run: a
 * growing array, searched by id, of the peers deck_add_peer introduced with the key their
 * bootstrap agreed; a peer that never listens (a process that only connected to us) is reached
 * over the connection it opens. Peer records are freed only by tcp_peers_done, after every
 * thread is joined, so a pointer from tcp_peer_find stays valid for the whole run.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "tcp.h"

#define CONNECT_RETRY_MS 20

static deck_mutex_t  peers_lock = PTHREAD_MUTEX_INITIALIZER;
static tcp_peer_t  **peers;
static int           npeers, cap, self, is_static, nnodes;

void tcp_peers_lock(void)   { deck_mutex_lock(&peers_lock); }
void tcp_peers_unlock(void) { deck_mutex_unlock(&peers_lock); }
int  tcp_peers_self(void)   { return self; }
int  tcp_peers_static(void) { return is_static; }
int  tcp_peers_nodes(void)  { return nnodes; }

static tcp_peer_t *new_peer(int id)
{
    tcp_peer_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->id = id;
    deck_cond_init(&p->changed);
    deck_mutex_init(&p->lookup_lock);
    return p;
}

int tcp_peers_init(int me, int n, const deck_node_addr_t *nodes)
{
    self = me;
    is_static = nodes != NULL;
    nnodes = is_static ? n : 0;
    npeers = cap = nnodes;
    peers = is_static ? calloc((size_t)n, sizeof *peers) : NULL;
    if (is_static && !peers) return deck_fail(DECK_ENOMEM, "deck_init: out of memory");
    const uint8_t *run_key = deck_auth_run_key();
    if (is_static && !run_key) return deck_fail(DECK_ESTATE, "deck_init: the run secret was not loaded");
    for (int i = 0; is_static && i < n; i++) {
        if (i == me) continue;
        char what[64];
        snprintf(what, sizeof what, "deck_init: node %d", i);
        if (!(peers[i] = new_peer(i))) { tcp_peers_done(); return deck_fail(DECK_ENOMEM, "deck_init: out of memory"); }
        int rc = tcp_resolve(nodes[i].host, nodes[i].port, 0, &peers[i]->addr, what);
        if (rc) { tcp_peers_done(); return rc; }
        peers[i]->has_addr = 1;
        memcpy(peers[i]->key, run_key, DECK_KEY_BYTES);
        peers[i]->has_key = 1;
    }
    return DECK_OK;
}

void tcp_peers_done(void)
{
    for (int i = 0; i < npeers; i++) {
        tcp_peer_t *p = peers[i];
        if (!p) continue;
        deck_cond_destroy(&p->changed);
        deck_mutex_destroy(&p->lookup_lock);
        memset(p->key, 0, sizeof p->key);
        free(p);
    }
    free(peers);
    peers = NULL;
    npeers = cap = nnodes = 0;
}

/* Called with peers_lock held. */
static tcp_peer_t *find_locked(int id)
{
    if (is_static) return id >= 0 && id < npeers ? peers[id] : NULL;
    for (int i = 0; i < npeers; i++)
        if (peers[i]->id == id) return peers[i];
    return NULL;
}

tcp_peer_t *tcp_peer_find(int id)
{
    deck_mutex_lock(&peers_lock);
    tcp_peer_t *p = find_locked(id);
    deck_mutex_unlock(&peers_lock);
    return p;
}

int tcp_peer_key(int id, uint8_t key[DECK_KEY_BYTES])
{
    deck_mutex_lock(&peers_lock);
    tcp_peer_t *p = find_locked(id);
    int rc = p && p->has_key ? DECK_OK : DECK_ENOTFOUND;
    if (rc == DECK_OK) memcpy(key, p->key, DECK_KEY_BYTES);
    deck_mutex_unlock(&peers_lock);
    return rc;
}

/* Called with peers_lock held, dynamic runs only. */
static tcp_peer_t *append_locked(int id)
{
    if (npeers == cap) {
        int n = cap ? cap * 2 : 8;
        tcp_peer_t **g = realloc(peers, (size_t)n * sizeof *g);
        if (!g) return NULL;
        peers = g;
        cap = n;
    }
    tcp_peer_t *p = new_peer(id);
    if (p) peers[npeers++] = p;
    return p;
}

int tcp_peer_add(int id, const tcp_sockaddr_t *addr, const char *host, const uint8_t key[DECK_KEY_BYTES])
{
    int rc = DECK_OK;
    deck_mutex_lock(&peers_lock);
    tcp_peer_t *p = find_locked(id);
    if (!p && !(p = append_locked(id))) {
        rc = deck_fail(DECK_ENOMEM, "deck_add_peer: out of memory");
    } else if (p->has_key && memcmp(p->key, key, DECK_KEY_BYTES) != 0) {
        /* One key per pair for the life of the run: a second process claiming the id is another
         * process, and must not reach this one's mailboxes. */
        rc = deck_fail(DECK_EEXIST, "deck_add_peer: node %d is already known under another key (now from %s): "
                       "another process claims its id", id, host);
    } else if (addr && p->has_addr && !tcp_addr_same(&p->addr, addr, 1)) {
        rc = deck_fail(DECK_EEXIST, "deck_add_peer: peer %d is already known at another address (now %s)", id, host);
    } else {
        if (addr) {
            p->addr = *addr;
            p->has_addr = 1;
        }
        memcpy(p->key, key, DECK_KEY_BYTES);
        p->has_key = 1;
        deck_cond_broadcast(&p->changed);
    }
    deck_mutex_unlock(&peers_lock);
    if (rc == DECK_OK) tcp_listen_keys_changed();   /* its handshake may be waiting for the key */
    return rc;
}

int tcp_peer_count(void)
{
    deck_mutex_lock(&peers_lock);
    int n = 0;
    for (int i = 0; i < npeers; i++) n += peers[i] && peers[i]->has_key;
    deck_mutex_unlock(&peers_lock);
    return n;
}

int tcp_peer_at(int i, int *id)
{
    int rc = DECK_ENOTFOUND;
    deck_mutex_lock(&peers_lock);
    for (int k = 0; k < npeers; k++) {
        if (!peers[k] || !peers[k]->has_key || i-- > 0) continue;
        *id = peers[k]->id;
        rc = DECK_OK;
        break;
    }
    deck_mutex_unlock(&peers_lock);
    return rc;
}

int tcp_peer_is_gone(int id)
{
    deck_mutex_lock(&peers_lock);
    tcp_peer_t *p = find_locked(id);
    int gone = p && p->gone;
    deck_mutex_unlock(&peers_lock);
    return gone;
}

void tcp_peer_lost(tcp_peer_t *p, tcp_conn_t *c)
{
    tcp_conn_t *dropped = NULL;
    deck_mutex_lock(&peers_lock);
    if (p->conn == c) {
        dropped = c;
        p->conn = NULL;
    }
    int left = --p->readers == 0;
    /* Frames another connection of p brought may still be on their way to the mailboxes: p
     * has left only once the last one's reader has queued them. */
    if (left) p->gone = 1;
    else if (!p->conn) p->conn = tcp_conn_other(p, c);
    deck_cond_broadcast(&p->changed);
    deck_mutex_unlock(&peers_lock);
    if (dropped) tcp_conn_unref(dropped);
    if (!left) return;
    deck_table_peer_gone(p->id);
    tcp_barrier_wake();
}

/* A TCP connection to addr within the deadline; a refused connect (the peer is still starting)
 * is tried again every CONNECT_RETRY_MS. The descriptor is blocking on return. */
static int dial(const tcp_sockaddr_t *addr, const struct timespec *deadline, const char *origin, int *out)
{
    for (;;) {
        int fd = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) return deck_fail_errno(DECK_EIO, errno, "deck tcp: socket for %s", origin);
        int err = connect(fd, &addr->sa, tcp_addr_len(addr)) == 0 ? 0 : errno;
        if (err == EINPROGRESS) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            long ms = (deadline->tv_sec - now.tv_sec) * 1000L + (deadline->tv_nsec - now.tv_nsec) / 1000000L;
            struct pollfd pfd = { fd, POLLOUT, 0 };
            int r = poll(&pfd, 1, ms > 0 ? (int)ms : 0);
            socklen_t len = sizeof err;
            if (r <= 0) err = r == 0 ? ETIMEDOUT : errno;
            else getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        }
        if (err == 0) {
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
            *out = fd;
            return DECK_OK;
        }
        close(fd);
        if ((err != ECONNREFUSED && err != EINTR) || deck_deadline_passed(deadline))
            return deck_fail_errno(DECK_EIO, err, "deck tcp: connecting to %s", origin);
        struct timespec pause = { 0, CONNECT_RETRY_MS * 1000000L };
        nanosleep(&pause, NULL);
    }
}

/* Connects to p's listener and proves the connection; it becomes p's send connection. */
static int connect_peer(tcp_peer_t *p, const tcp_sockaddr_t *addr, const uint8_t *key,
                        const struct timespec *deadline)
{
    char where[TCP_ADDR_TEXT], origin[TCP_ORIGIN_TEXT];
    tcp_addr_text(addr, where, sizeof where);
    snprintf(origin, sizeof origin, "node %d at %s", p->id, where);
    int fd = -1, rc = dial(addr, deadline, origin, &fd);
    if (rc) return rc;
    tcp_io_t io = tcp_io_plain(fd);
    if ((rc = tcp_auth_connect(&io, p->id, key, tcp_auth_timeout_ms(), origin))) {
        tcp_io_close(&io);
        return rc;
    }
    return tcp_conn_start(io, p, origin, NULL);
}

int tcp_peer_conn(int id, int wait_ms, const char *what, tcp_conn_t **out)
{
    tcp_peer_t *p = tcp_peer_find(id);
    if (!p) return deck_fail(DECK_ENOTFOUND, "%s: node %d is not part of this run", what, id);
    struct timespec deadline;
    deck_deadline(&deadline, wait_ms);
    int rc = DECK_OK;
    deck_mutex_lock(&peers_lock);
    for (;;) {
        if (p->gone) { rc = deck_fail(DECK_EPEER, "%s: node %d has gone away", what, id); break; }
        if (p->conn) {
            atomic_fetch_add(&p->conn->refs, 1);
            *out = p->conn;
            break;
        }
        if (!p->has_key) { rc = deck_fail(DECK_ENOTFOUND, "%s: node %d was never introduced (deck_add_peer)", what, id); break; }
        if (p->has_addr && !p->connecting) {
            tcp_sockaddr_t addr = p->addr;
            uint8_t key[DECK_KEY_BYTES];
            memcpy(key, p->key, sizeof key);
            p->connecting = 1;
            deck_mutex_unlock(&peers_lock);
            rc = connect_peer(p, &addr, key, &deadline);
            memset(key, 0, sizeof key);
            deck_mutex_lock(&peers_lock);
            p->connecting = 0;
            deck_cond_broadcast(&p->changed);
            if (rc) {
                if (rc == DECK_EIO) rc = deck_fail(DECK_EIO, "%s: %s", what, deck_last_error());
                break;
            }
            continue;                         /* installed as p->conn, unless one came meanwhile */
        }
        /* Someone else is connecting, or the peer does not listen and will connect to us. */
        if (deck_deadline_passed(&deadline) || deck_cond_wait_until(&p->changed, &peers_lock, &deadline) == ETIMEDOUT) {
            rc = p->conn || p->gone ? DECK_OK : deck_fail(DECK_ETIMEDOUT, "%s: node %d has not connected to this "
                                                         "process within %d ms", what, id, wait_ms);
            if (rc) break;
        }
    }
    deck_mutex_unlock(&peers_lock);
    return rc;
}

int tcp_peer_send(int id, const tcp_frame_t *f, const struct iovec *pieces, int cnt, int wait_ms, const char *what)
{
    tcp_conn_t *c;
    int rc = tcp_peer_conn(id, wait_ms, what, &c);
    if (rc) return rc;
    int err = tcp_conn_send(c, f, pieces, cnt);
    if (err) rc = deck_fail_errno(DECK_EPEER, err, "%s: sending to %s", what, c->origin);
    tcp_conn_unref(c);
    return rc;
}

int tcp_peer_answer(tcp_conn_t *c, int index)
{
    tcp_peer_t *p = c->peer;
    deck_mutex_lock(&peers_lock);
    int asked = c->unanswered > 0;
    /* A peer slower than DECK_AUTH_TIMEOUT_MS answers a lookup whose asker gave up: dropped,
     * not taken for the answer of the lookup after it (another name), nor an attack. */
    if (asked && --c->unanswered == 0 && p->lookup_waiting && !p->lookup_answered) {
        p->lookup_answered = 1;
        p->lookup_index = index;
        deck_cond_broadcast(&p->changed);
    }
    deck_mutex_unlock(&peers_lock);
    return asked;
}

int tcp_peer_lookup(int id, const char *name, int connect_wait_ms, int *index)
{
    tcp_peer_t *p = tcp_peer_find(id);
    if (!p) return DECK_ENOTFOUND;
    tcp_conn_t *c;
    /* A peer still starting, or one that will connect to us, is asked again on the next pass. */
    int rc = tcp_peer_conn(id, connect_wait_ms, "deck_mbox_clone", &c);
    if (rc) return rc == DECK_EPEER ? rc : DECK_ENOTFOUND;
    deck_mutex_lock(&p->lookup_lock);            /* one lookup at a time on a peer's connection */
    deck_mutex_lock(&peers_lock);
    p->lookup_waiting = 1;
    p->lookup_answered = 0;
    c->unanswered++;
    deck_mutex_unlock(&peers_lock);
    tcp_frame_t f = { .type = FRAME_LOOKUP, .src = self, .index = 0, .len = strlen(name) };
    struct iovec piece = { (void *)name, f.len };
    int err = tcp_conn_send(c, &f, &piece, 1);
    struct timespec deadline;
    deck_deadline(&deadline, tcp_auth_timeout_ms());
    deck_mutex_lock(&peers_lock);
    while (!err && !p->lookup_answered && !p->gone && !atomic_load(&c->closed)
           && deck_cond_wait_until(&p->changed, &peers_lock, &deadline) == 0) {}
    int answered = p->lookup_answered, found = p->lookup_index;
    p->lookup_waiting = 0;
    deck_mutex_unlock(&peers_lock);
    deck_mutex_unlock(&p->lookup_lock);
    if (!answered) rc = deck_fail(DECK_EPEER, "deck_mbox_clone: %s did not answer the lookup of '%s'", c->origin, name);
    else if (found < 0) rc = DECK_ENOTFOUND;
    else *index = found;
    tcp_conn_unref(c);
    return rc;
}
