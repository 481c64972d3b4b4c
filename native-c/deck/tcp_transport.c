/*
 * The TCP transport's function table: wires tcp_peers, tcp_listen, tcp_conn and tcp_barrier
 * together. A static process listens at once on its nodes-file address; a dynamic one binds a
 * port only when a peer that reaches it over tcp needs one (deck_contact_for), on the address
 * that peer's bootstrap came to, and listens there once a peer proved itself (deck_add_peer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcp.h"

/* How long a lookup waits for a peer that does not listen to connect (clone asks again). */
#define LOOKUP_CONNECT_WAIT_MS 100

static int listen_static(const deck_node_addr_t *me, int self)
{
    char what[300];
    snprintf(what, sizeof what, strchr(me->host, ':') ? "deck_init: node %d ([%s]:%d)" : "deck_init: node %d (%s:%d)",
             self, me->host, me->port);
    tcp_sockaddr_t addr;
    int rc = tcp_resolve(me->host, me->port, 0, &addr, what), port;
    if (rc) return rc;
    /* The address the nodes file gives, so that the port is not open on every interface; a
     * name that is not an address of this host (behind NAT) listens on all of them: the
     * wildcard of its family (IPv6's takes IPv4 too). */
    if ((rc = tcp_listen_open(&addr, &port, 1, what)) == DECK_EIO) {
        tcp_addr_any(&addr);
        rc = tcp_listen_open(&addr, &port, 1, what);
    }
    return rc;
}

static int tcp_init_static(int self, int nnodes, const deck_node_addr_t *nodes)
{
    int rc = tcp_wait_init();
    if (rc) return rc;
    if ((rc = tcp_peers_init(self, nnodes, nodes))) {
        tcp_wait_done();
        return rc;
    }
    tcp_barrier_init(self, nnodes);
    if ((rc = listen_static(&nodes[self], self))) {
        tcp_listen_stop();
        tcp_barrier_done();
        tcp_peers_done();
        tcp_wait_done();
    }
    return rc;
}

static int tcp_init_dynamic(int self)
{
    int rc = tcp_wait_init();
    if (rc) return rc;
    if ((rc = tcp_peers_init(self, 0, NULL))) {
        tcp_wait_done();
        return rc;
    }
    tcp_barrier_init(self, 1);
    return DECK_OK;
}

static void tcp_done(void)
{
    tcp_listen_stop();        /* first: no new connection starts */
    tcp_conns_stop();         /* readers use the peers and the barrier */
    tcp_peers_done();
    tcp_barrier_done();
    tcp_wait_done();          /* last: a reader wakes a holder through its wake descriptor until it ends */
}

/* The pieces go to the kernel as they are, behind the frame header, in one vectored write. A
 * key wakes nobody in particular here, quiet or not: the reader's delivery wakes the mailbox's
 * retrievers. */
static int tcp_postv_keyed(int node, int index, const struct iovec *iov, int cnt, size_t len, int key)
{
    (void)key;
    tcp_frame_t f = { .type = FRAME_DATA, .src = tcp_peers_self(), .index = index, .len = len };
    /* The owner answered the clone, so its connection was there: waiting would not bring it back. */
    return tcp_peer_send(node, &f, iov, cnt, 0, "deck_mbox_post");
}

/* A frame of this length is written with one system call and read whole by a waiting
 * retriever (tcp_wait.c, LOWAT_MAX); its queued copy is a reused buffer (qmsg.c). */
unsigned long tcp_post_hint(int node)
{
    (void)node;
    return DECK_TCP_POST_HINT;
}

static int tcp_lookup(int node, const char *name, int *index)
{
    return tcp_peer_lookup(node, name, LOOKUP_CONNECT_WAIT_MS, index);
}

static int tcp_contact(char *buf, size_t len)
{
    int n = snprintf(buf, len, "tcp");
    return n > 0 && (size_t)n < len ? DECK_OK : deck_fail(DECK_EINVAL, "deck_contact: buffer of %zu bytes too small", len);
}

/* Every peer of a tcp-only process is reached over tcp: it gets a port on local_addr, which
 * listens once a peer is added (tcp_listen_start). */
static int tcp_contact_for(const char *peer_contact, const char *local_addr, char *buf, size_t len)
{
    tcp_sockaddr_t addr;
    int rc = tcp_resolve(local_addr, 0, 0, &addr, "deck_contact_for"), port;
    if (rc || (rc = tcp_listen_open(&addr, &port, 0, "deck_contact_for"))) return rc;
    int n = snprintf(buf, len, "port=%d", port);
    return n > 0 && (size_t)n < len ? DECK_OK : deck_fail(DECK_EINVAL, "deck_contact_for: buffer of %zu bytes too small", len);
}

/* A contact is parts separated by ',': "port=N" (the peer listens there), "host=A" (an IPv4 or
 * IPv6 address, bare or in brackets: it listens on A, not on the address its bootstrap was reached at; with port only),
 * "tcp" (it does not listen: it connects to this process) and auto's "shm=..."; anything else
 * is not a contact. */
int tcp_introduce(int id, const char *host, const char *contact, const uint8_t *key)
{
    int has_port = 0, has_host = 0;
    long port = 0;
    char listen_host[TCP_ADDR_TEXT];
    tcp_sockaddr_t addr;
    for (const char *part = contact; part; part = strchr(part, ',') ? strchr(part, ',') + 1 : NULL) {
        size_t n = strcspn(part, ",");
        if (strncmp(part, "port=", 5) == 0) {
            char *end;
            port = strtol(part + 5, &end, 10);
            if (end != part + n || n == 5 || port <= 0 || port > 65535 || has_port)
                return deck_fail(DECK_EINVAL, "deck_add_peer: contact '%s' has no valid port", contact);
            has_port = 1;
        } else if (strncmp(part, "host=", 5) == 0) {
            if (n - 5 >= sizeof listen_host || has_host)
                return deck_fail(DECK_EINVAL, "deck_add_peer: contact '%s' has no valid host", contact);
            memcpy(listen_host, part + 5, n - 5);
            listen_host[n - 5] = '\0';
            if (tcp_resolve(listen_host, 0, 1, &addr, "deck_add_peer") != DECK_OK)
                return deck_fail(DECK_EINVAL, "deck_add_peer: contact '%s' has no valid host: %s", contact, deck_last_error());
            has_host = 1;
        } else if (!(n == 3 && strncmp(part, "tcp", 3) == 0) && strncmp(part, "shm=", 4) != 0) {
            return deck_fail(DECK_EINVAL, "deck_add_peer: contact '%s' is not made of port=N, host=A, tcp and shm=... "
                             "parts", contact);
        }
    }
    if (has_host && !has_port)
        return deck_fail(DECK_EINVAL, "deck_add_peer: contact '%s' names a host but no port", contact);
    const char *at = has_host ? listen_host : host;
    int rc = has_port ? tcp_resolve(at, (int)port, 0, &addr, "deck_add_peer") : DECK_OK;
    return rc ? rc : tcp_peer_add(id, has_port ? &addr : NULL, at, key);
}

/* Every peer of a tcp-only process is reached over tcp: a proved one opens the ports bound for
 * the bootstraps (deck_contact_for). */
static int tcp_add_peer(int id, const char *host, const char *contact, const uint8_t *key)
{
    int rc = tcp_introduce(id, host, contact, key);
    return rc ? rc : tcp_listen_start();
}

const deck_transport_t deck_tcp_transport = {
    .name = "tcp",
    .init_static = tcp_init_static,
    .init_dynamic = tcp_init_dynamic,
    .done = tcp_done,
    .postv_keyed = tcp_postv_keyed,
    .lookup = tcp_lookup,
    .barrier = tcp_barrier,
    .contact = tcp_contact,
    .contact_for = tcp_contact_for,
    .add_peer = tcp_add_peer,
    .peer_key = tcp_peer_key,
    .peer_count = tcp_peer_count,
    .peer_at = tcp_peer_at,
    .peer_gone = tcp_peer_is_gone,
    .read_waiting = tcp_read_waiting,
    .wake_reading = tcp_wake_reading,
    .post_hint = tcp_post_hint,
};
