/*
 * The network under DECK: a table of functions, one table per transport (tcp now; sci and gm
 * later), chosen by name at deck_init. The core (core.c, mbox.c) owns ids, the name service
 * loop and the local mailboxes; a transport only moves bytes between processes and hands
 * incoming DATA to deck_table_deliver().
 */
#ifndef DECK_TRANSPORT_H
#define DECK_TRANSPORT_H

#include <stddef.h>
#include "internal.h"

typedef struct deck_transport {
    const char *name;
    /* Static run: `self` among nodes[0..nnodes-1] (self's entry says where to listen). */
    int  (*init_static)(int self, int nnodes, const deck_node_addr_t *nodes);
    /* Dynamic run: listen anywhere; peers come later through add_peer. */
    int  (*init_dynamic)(int self);
    /* Stops every thread and closes every descriptor of the transport. */
    void (*done)(void);
    /* Sends len bytes to mailbox `index` of process `node`; on return buf may be reused. */
    int  (*post)(int node, int index, const void *buf, size_t len);
    /* Asks `node` for its mailbox `name`: DECK_OK and *index, or DECK_ENOTFOUND. */
    int  (*lookup)(int node, const char *name, int *index);
    int  (*barrier)(void);
    int  (*contact)(char *buf, size_t len);
    int  (*add_peer)(int id, const char *host, const char *contact);
    int  (*peer_count)(void);          /* processes reachable besides this one */
    int  (*peer_at)(int i, int *id);   /* i in 0..peer_count()-1 */
    int  (*peer_gone)(int node);       /* 1 once node's connection to us has ended */
} deck_transport_t;

extern const deck_transport_t deck_tcp_transport;

/* The transport of the running DECK (core.c); NULL when not initialised. */
const deck_transport_t *deck_core_transport(void);

#endif
