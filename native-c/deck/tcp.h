/*
 * Internals of the TCP transport (tcp_*.c).
 *
 * Every process listens; to reach peer p it opens one outgoing connection, lazily, and sends
 * frames on it under a per-peer mutex. The peer runs one reader thread per incoming
 * connection, which queues DATA frames into the target mailbox and answers LOOKUP frames on
 * the same socket. A frame is a 24-byte header in network byte order, then `len` payload bytes.
 */
#ifndef DECK_TCP_H
#define DECK_TCP_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include "transport.h"

enum tcp_frame_type {
    FRAME_HELLO = 1,        /* first frame on a connection: src says who connected */
    FRAME_DATA,             /* index = mailbox, payload = message */
    FRAME_LOOKUP,           /* payload = mailbox name; answered by FRAME_LOOKUP_REPLY */
    FRAME_LOOKUP_REPLY,     /* index = mailbox index, or -1 when the name is not here */
    FRAME_BARRIER_ARRIVE,   /* to node 0 */
    FRAME_BARRIER_RELEASE   /* from node 0 */
};

typedef struct tcp_frame {
    uint32_t type;
    int32_t  src;
    int32_t  index;
    uint64_t len;
} tcp_frame_t;

#define TCP_FRAME_BYTES 24

/* ---- tcp_wire.c: whole frames over a socket, never raising SIGPIPE ---- */
/* 0, or the errno of the failure. */
int tcp_send_frame(int fd, const tcp_frame_t *f, const void *payload);
/* 1: read; 0: end of stream; -errno: failure. */
int tcp_read_full(int fd, void *buf, size_t n);
int tcp_read_frame(int fd, tcp_frame_t *f);
/* AF_INET address of host:port, or DECK_ECONFIG with `what` in the text. */
int tcp_resolve(const char *host, int port, struct sockaddr_in *out, const char *what);

/* ---- tcp_peers.c: the other processes and our outgoing connection to each ---- */
typedef struct tcp_peer {
    int                id;
    int                has_addr;    /* static: always; dynamic: once deck_add_peer was called */
    struct sockaddr_in addr;        /* guarded by the peers table lock */
    deck_mutex_t       out_lock;    /* serialises whole frames (and lookup round trips) */
    int                out_fd;      /* -1: not connected yet */
    int                broken;      /* the outgoing connection failed; it is not reopened */
    atomic_int         gone;        /* its connection to us ended: it has left the run (seen only
                                     * for a peer that connected, i.e. sent us anything; final
                                     * until deck_done) */
} tcp_peer_t;

int  tcp_peers_init(int self, int nnodes, const deck_node_addr_t *nodes);  /* nodes NULL: dynamic */
void tcp_peers_done(void);
tcp_peer_t *tcp_peer_find(int id);
tcp_peer_t *tcp_peer_learn(int id);       /* find, or record a dynamic peer that connected */
int  tcp_peer_add(int id, const struct sockaddr_in *addr, const char *host);
int  tcp_peer_count(void);
int  tcp_peer_at(int i, int *id);
void tcp_peer_mark_gone(tcp_peer_t *p);
/* Sends one frame to `id` (connecting first if needed, retrying a refused connect for up to
 * connect_wait_ms); with reply != NULL also reads the answer frame on that connection. */
int  tcp_peer_send(int id, const tcp_frame_t *f, const void *payload, tcp_frame_t *reply,
                   int connect_wait_ms, const char *what);

/* ---- tcp_incoming.c: the listening socket, accept thread and reader threads ---- */
int  tcp_incoming_start(int port, int *bound_port, const char *what);
void tcp_incoming_stop(void);

/* ---- tcp_barrier.c ---- */
void tcp_barrier_init(int self, int nnodes);
void tcp_barrier_done(void);
void tcp_barrier_on_frame(const tcp_frame_t *f);
void tcp_barrier_wake(void);
int  tcp_barrier(void);

#endif
