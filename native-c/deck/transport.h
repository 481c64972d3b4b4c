/*
 * The network under DECK: a table of functions, one table per transport (tcp; sci, shared
 * segments on one host, sci_*.c; auto, dynamic runs only: sci for the peers on this host and
 * tcp for the others, auto_transport.c; gm later), chosen by name (DECK_TRANSPORT) at deck_init. The core (core.c, mbox.c) owns ids, the name service
 * loop and the local mailboxes; a transport only moves bytes between processes and hands
 * incoming DATA to deck_table_deliver().
 */
#ifndef DECK_TRANSPORT_H
#define DECK_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include "internal.h"

typedef struct deck_transport {
    const char *name;
    /* Static run: `self` among nodes[0..nnodes-1] (self's entry says where to listen). */
    int  (*init_static)(int self, int nnodes, const deck_node_addr_t *nodes);
    /* Dynamic run: listen anywhere; peers come later through add_peer. */
    int  (*init_dynamic)(int self);
    /* Stops every thread and closes every descriptor of the transport. */
    void (*done)(void);
    /* Sends the len bytes of iov[0..cnt) (checked by the core), one piece after the other, to
     * mailbox `index` of process `node`; on return the pieces may be reused. A key >= 0 wakes
     * the waiters of that key where the transport has keyed wake-ups (below); < 0: a plain post.
     * A key with DECK_KEY_QUIET wakes that key's sleepers and nobody else (deck_mbox_postv_quiet). */
    int  (*postv_keyed)(int node, int index, const struct iovec *iov, int cnt, size_t len, int key);
#define DECK_KEY_QUIET (1 << 30)
    /* Asks `node` for its mailbox `name`: DECK_OK and *index, or DECK_ENOTFOUND. */
    int  (*lookup)(int node, const char *name, int *index);
    int  (*barrier)(void);
    /* Dynamic runs: what this process tells a peer it connects to (deck_contact). */
    int  (*contact)(char *buf, size_t len);
    /* Dynamic runs: what this process tells the peer whose contact is peer_contact, opening
     * what that peer needs to reach it on local_addr (deck_contact_for). NULL: contact. */
    int  (*contact_for)(const char *peer_contact, const char *local_addr, char *buf, size_t len);
    /* Dynamic runs: the peer and the key it proves itself with (DECK_KEY_BYTES). */
    int  (*add_peer)(int id, const char *host, const char *contact, const uint8_t *key);
    /* The key `id` proves itself with: DECK_OK and key, or DECK_ENOTFOUND. NULL: none known. */
    int  (*peer_key)(int id, uint8_t *key);
    int  (*peer_count)(void);          /* processes reachable besides this one */
    int  (*peer_at)(int i, int *id);   /* i in 0..peer_count()-1 */
    int  (*peer_gone)(int node);       /* 1 once node's connection to us has ended */
    unsigned long (*post_hint)(int node);   /* deck_mbox_post_hint for a post to `node` */

    /* Optional hooks, NULL for tcp. A transport that receives into its own memory (sci) sets
     * all three: then every post, to this process too, goes through postv_keyed(), and retrieves come
     * from retrv() (which may still use the queue of `entry` for posts to this process, through
     * deck_entry_poll). retrv reads deck_entry_watched(entry) for deck_mbox_watch. */
    int  (*mbox_created)(int index, const char *name);
    void (*mbox_destroyed)(int index);  /* wakes its retrievers with DECK_ECLOSED first */
    int  (*retrv)(int index, void *entry, deck_msg_t *msg, int timeout_ms);
    /* Set with retrv (deck_mbox_retrv_apply): retrv handing the message to fn, in place where it
     * can. Without retrv, the core hands queued messages over in place (deck_entry_take_apply). */
    int  (*retrv_apply)(int index, void *entry, deck_msg_t *scratch, int timeout_ms, deck_msg_fn fn, void *arg);
    /* Optional: a message buffer in transport memory (sci's message segment); NULL when the
     * transport does not want this one. msg_free returns 1 when buf was such a buffer. */
    void *(*msg_alloc)(size_t size);
    int   (*msg_free)(void *buf);
    /* Optional: a message was queued for mailbox `index` (a post to this process, or tcp's
     * reader): a transport whose retrievers wait on its own memory (sci) wakes them. */
    void  (*delivered)(int index);
    /* Optional (tcp), both or none: a retriever about to wait for its empty mailbox reads the
     * transport's connections itself for one wait of at most until *deadline (NULL: no
     * deadline; the wait still ends now and then), so that a message reaches it without a
     * hand-off from a reader thread: 1 when it waited so (it looks at its mailbox again), 0 when
     * another thread does that now or there is nothing to read (it waits as usual).
     * wake_reading ends such a wait at once: a delivery to its mailbox by another thread, the
     * mailbox's destroy or its watched peer's end. */
    int   (*read_waiting)(const struct timespec *deadline);
    void  (*wake_reading)(void);
    /* Optional: how `id` is reached, for deck_peer_describe; NULL: the transport's name. */
    int   (*describe_peer)(int id, char *buf, size_t len);

    /* Optional, all or none (deck_mbox_key_*): keyed wake-ups. On created mailbox `index`: its
     * bell value (DECK_ESTATE when it has no doorbell here), a wait for `key`'s rings (key < 0:
     * plain, any message), a hand-on ring, and the poller's mark. Without them a post's key
     * wakes nobody in particular. */
    int   (*mbox_bell_read)(int index, uint32_t *value);
    int   (*mbox_key_wait)(int index, int key, uint32_t seen, int timeout_ms);
    void  (*mbox_key_ring)(int index, int key);
    int   (*mbox_key_poller)(int index, int key);
} deck_transport_t;

extern const deck_transport_t deck_tcp_transport;
extern const deck_transport_t deck_sci_transport;
extern const deck_transport_t deck_auto_transport;

/* The transport of the running DECK (core.c); NULL when not initialised. */
const deck_transport_t *deck_core_transport(void);

#endif
