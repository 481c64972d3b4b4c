/* The TCP transport's function table: wires tcp_peers, tcp_incoming and tcp_barrier together. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcp.h"

static int listen_port;

static int tcp_init_static(int self, int nnodes, const deck_node_addr_t *nodes)
{
    int rc = tcp_peers_init(self, nnodes, nodes);
    if (rc) return rc;
    tcp_barrier_init(self, nnodes);
    char what[300];
    snprintf(what, sizeof what, "deck_init: node %d (%s:%d)", self, nodes[self].host, nodes[self].port);
    if ((rc = tcp_incoming_start(nodes[self].port, &listen_port, what))) {
        tcp_barrier_done();
        tcp_peers_done();
    }
    return rc;
}

static int tcp_init_dynamic(int self)
{
    int rc = tcp_peers_init(self, 0, NULL);
    if (rc) return rc;
    tcp_barrier_init(self, 1);
    if ((rc = tcp_incoming_start(0, &listen_port, "deck_init_dynamic"))) {
        tcp_barrier_done();
        tcp_peers_done();
    }
    return rc;
}

static void tcp_done(void)
{
    tcp_incoming_stop();      /* first: readers use the peers and the barrier */
    tcp_peers_done();
    tcp_barrier_done();
}

static int tcp_post(int node, int index, const void *buf, size_t len)
{
    tcp_frame_t f = { FRAME_DATA, deck_core_self(), index, len };
    /* The owner answered the clone, so a connect is refused only if it has left since. */
    return tcp_peer_send(node, &f, buf, NULL, 0, "deck_mbox_post");
}

static int tcp_lookup(int node, const char *name, int *index)
{
    tcp_frame_t f = { FRAME_LOOKUP, deck_core_self(), 0, strlen(name) }, reply;
    /* No connect retry: a peer still starting is asked again on the next pass of clone. */
    int rc = tcp_peer_send(node, &f, name, &reply, 0, "deck_mbox_clone");
    if (rc) return rc;
    if (reply.type != FRAME_LOOKUP_REPLY)
        return deck_fail(DECK_EIO, "deck_mbox_clone: node %d answered a lookup with frame type %u", node, reply.type);
    if (reply.index < 0) return DECK_ENOTFOUND;
    *index = reply.index;
    return DECK_OK;
}

static int tcp_contact(char *buf, size_t len)
{
    int n = snprintf(buf, len, "port=%d", listen_port);
    return n > 0 && (size_t)n < len ? DECK_OK : deck_fail(DECK_EINVAL, "deck_contact: buffer of %zu bytes too small", len);
}

/* "port=N", possibly followed by ",..." parts of other transports (auto's "shm="). */
static int tcp_add_peer(int id, const char *host, const char *contact)
{
    char *end;
    if (strncmp(contact, "port=", 5) != 0)
        return deck_fail(DECK_EINVAL, "deck_add_peer: contact '%s' is not 'port=N'", contact);
    long port = strtol(contact + 5, &end, 10);
    if ((*end && *end != ',') || port <= 0 || port > 65535)
        return deck_fail(DECK_EINVAL, "deck_add_peer: contact '%s' has no valid port", contact);
    struct sockaddr_in addr;
    int rc = tcp_resolve(host, (int)port, &addr, "deck_add_peer");
    return rc ? rc : tcp_peer_add(id, &addr, host);
}

static int tcp_peer_is_gone(int node)
{
    tcp_peer_t *p = tcp_peer_find(node);
    return p && atomic_load(&p->gone);
}

const deck_transport_t deck_tcp_transport = {
    .name = "tcp",
    .init_static = tcp_init_static,
    .init_dynamic = tcp_init_dynamic,
    .done = tcp_done,
    .post = tcp_post,
    .lookup = tcp_lookup,
    .barrier = tcp_barrier,
    .contact = tcp_contact,
    .add_peer = tcp_add_peer,
    .peer_count = tcp_peer_count,
    .peer_at = tcp_peer_at,
    .peer_gone = tcp_peer_is_gone,
};
