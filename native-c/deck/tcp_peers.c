/*
 * The peers of the TCP transport and the outgoing connection to each.
 *
 * Static run: peers[id] for every node but this one. Dynamic run: a growing array, searched by
 * id, holding peers added with deck_add_peer and peers that connected to us first. Peer
 * records are freed only by tcp_peers_done, after every thread is joined, so a pointer from
 * tcp_peer_find stays valid for the whole run.
 */
#include <errno.h>
#include <netinet/tcp.h>
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
static int           npeers, cap, self, is_static;

static tcp_peer_t *new_peer(int id)
{
    tcp_peer_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->id = id;
    p->out_fd = -1;
    atomic_init(&p->gone, 0);
    deck_mutex_init(&p->out_lock);
    return p;
}

int tcp_peers_init(int me, int nnodes, const deck_node_addr_t *nodes)
{
    self = me;
    is_static = nodes != NULL;
    npeers = cap = is_static ? nnodes : 0;
    peers = is_static ? calloc((size_t)nnodes, sizeof *peers) : NULL;
    if (is_static && !peers) return deck_fail(DECK_ENOMEM, "deck_init: out of memory");
    for (int i = 0; is_static && i < nnodes; i++) {
        if (i == me) continue;
        char what[64];
        snprintf(what, sizeof what, "deck_init: node %d", i);
        if (!(peers[i] = new_peer(i))) { tcp_peers_done(); return deck_fail(DECK_ENOMEM, "deck_init: out of memory"); }
        int rc = tcp_resolve(nodes[i].host, nodes[i].port, &peers[i]->addr, what);
        if (rc) { tcp_peers_done(); return rc; }
        peers[i]->has_addr = 1;
    }
    return DECK_OK;
}

void tcp_peers_done(void)
{
    for (int i = 0; i < npeers; i++) {
        tcp_peer_t *p = peers[i];
        if (!p) continue;
        if (p->out_fd >= 0) close(p->out_fd);
        deck_mutex_destroy(&p->out_lock);
        free(p);
    }
    free(peers);
    peers = NULL;
    npeers = cap = 0;
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

tcp_peer_t *tcp_peer_learn(int id)
{
    deck_mutex_lock(&peers_lock);
    tcp_peer_t *p = find_locked(id);
    if (!p && !is_static && id != self) p = append_locked(id);
    deck_mutex_unlock(&peers_lock);
    return p;
}

int tcp_peer_add(int id, const struct sockaddr_in *addr, const char *host)
{
    int rc = DECK_OK;
    deck_mutex_lock(&peers_lock);
    tcp_peer_t *p = find_locked(id);
    if (!p && !(p = append_locked(id))) {
        rc = deck_fail(DECK_ENOMEM, "deck_add_peer: out of memory");
    } else if (p->has_addr && (p->addr.sin_addr.s_addr != addr->sin_addr.s_addr || p->addr.sin_port != addr->sin_port)) {
        rc = deck_fail(DECK_EEXIST, "deck_add_peer: peer %d is already known at another address (now %s)", id, host);
    } else {
        p->addr = *addr;
        p->has_addr = 1;
    }
    deck_mutex_unlock(&peers_lock);
    return rc;
}

int tcp_peer_count(void)
{
    deck_mutex_lock(&peers_lock);
    int n = 0;
    for (int i = 0; i < npeers; i++) n += peers[i] && peers[i]->has_addr;
    deck_mutex_unlock(&peers_lock);
    return n;
}

int tcp_peer_at(int i, int *id)
{
    int rc = DECK_ENOTFOUND;
    deck_mutex_lock(&peers_lock);
    for (int k = 0; k < npeers; k++) {
        if (!peers[k] || !peers[k]->has_addr || i-- > 0) continue;
        *id = peers[k]->id;
        rc = DECK_OK;
        break;
    }
    deck_mutex_unlock(&peers_lock);
    return rc;
}

void tcp_peer_mark_gone(tcp_peer_t *p)
{
    atomic_store(&p->gone, 1);
    deck_table_peer_gone(p->id);
    tcp_barrier_wake();
}

/* Called with p->out_lock held. Retries a refused connect (the peer is still starting) with a
 * bounded sleep until connect_wait_ms has passed. */
static int connect_peer(tcp_peer_t *p, int connect_wait_ms, const char *what)
{
    struct sockaddr_in addr;
    deck_mutex_lock(&peers_lock);
    addr = p->addr;
    int known = p->has_addr;
    deck_mutex_unlock(&peers_lock);
    if (!known) return deck_fail(DECK_ENOTFOUND, "%s: no address for node %d (deck_add_peer)", what, p->id);
    struct timespec deadline;
    deck_deadline(&deadline, connect_wait_ms);
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return deck_fail_errno(DECK_EIO, errno, "%s: socket", what);
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            tcp_frame_t hello = { FRAME_HELLO, self, 0, 0 };
            int err = tcp_send_frame(fd, &hello, NULL);
            if (err) { close(fd); return deck_fail_errno(DECK_EIO, err, "%s: greeting node %d", what, p->id); }
            p->out_fd = fd;
            return DECK_OK;
        }
        int err = errno;
        close(fd);
        if ((err != ECONNREFUSED && err != EINTR) || deck_deadline_passed(&deadline))
            return deck_fail_errno(DECK_EIO, err, "%s: connecting to node %d", what, p->id);
        struct timespec pause = { 0, CONNECT_RETRY_MS * 1000000L };
        nanosleep(&pause, NULL);
    }
}

/* Called with p->out_lock held: the connection is unusable from now on. */
static int break_connection(tcp_peer_t *p, int err, const char *what, const char *step)
{
    close(p->out_fd);
    p->out_fd = -1;
    p->broken = 1;
    return err ? deck_fail_errno(DECK_EIO, err, "%s: %s node %d", what, step, p->id)
               : deck_fail(DECK_EIO, "%s: %s node %d: connection closed", what, step, p->id);
}

int tcp_peer_send(int id, const tcp_frame_t *f, const void *payload, tcp_frame_t *reply,
                  int connect_wait_ms, const char *what)
{
    tcp_peer_t *p = tcp_peer_find(id);
    if (!p) return deck_fail(DECK_ENOTFOUND, "%s: node %d is not part of this run", what, id);
    if (atomic_load(&p->gone)) return deck_fail(DECK_EPEER, "%s: node %d has gone away", what, id);
    int rc = DECK_OK;
    deck_mutex_lock(&p->out_lock);
    if (p->broken)
        rc = deck_fail(DECK_EPEER, "%s: the connection to node %d was lost earlier", what, id);
    else if (p->out_fd < 0)
        rc = connect_peer(p, connect_wait_ms, what);
    if (rc == DECK_OK) {
        int err = tcp_send_frame(p->out_fd, f, payload);
        if (err) rc = break_connection(p, err, what, "sending to");
    }
    if (rc == DECK_OK && reply) {
        int r = tcp_read_frame(p->out_fd, reply);
        if (r <= 0) rc = break_connection(p, -r, what, "reading the answer of");
    }
    deck_mutex_unlock(&p->out_lock);
    return rc;
}
