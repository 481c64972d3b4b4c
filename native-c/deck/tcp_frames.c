/*
 * What a reader does with each frame of a proved connection (tcp.h, WIRE FORMAT). Every field
 * is checked against this process's limits before memory is allocated or a mailbox touched:
 * the type, the source (the proved peer), the mailbox index, the length (the mailbox's limit,
 * DECK_MSG_MAX for a mailbox that is not there), a name's length and bytes. A bad frame ends
 * its connection and is logged once, naming where it came from; it costs nothing else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcp.h"

#define DISCARD_CHUNK 65536

/* Logs why the connection ends; returns 0 (end it). */
static int bad(tcp_conn_t *c, const char *why)
{
    deck_log("tcp connection from %s: %s; connection closed", c->origin, why);
    return 0;
}

/* Reads and drops a payload addressed to a mailbox that is gone (it was destroyed meanwhile). */
static int discard(tcp_conn_t *c, uint64_t len)
{
    char *scratch = malloc(len < DISCARD_CHUNK ? (len ? len : 1) : DISCARD_CHUNK);
    if (!scratch) return 0;
    int ok = 1;
    while (ok && len > 0) {
        size_t n = len < DISCARD_CHUNK ? (size_t)len : DISCARD_CHUNK;
        ok = tcp_inbuf_read(&c->in, scratch, n) > 0;
        len -= n;
    }
    free(scratch);
    return ok;
}

static int data(tcp_conn_t *c, const tcp_frame_t *f)
{
    if (f->index < 0) return bad(c, "a message for a negative mailbox index");
    int rc = deck_table_admit(f->index, (unsigned long)f->len, c->peer->id);
    if (rc == DECK_EPROTO) return bad(c, deck_last_error());
    if (rc == DECK_ENOTFOUND) return discard(c, f->len);
    const void *here = tcp_inbuf_peek(&c->in, (size_t)f->len);   /* the holder's whole frames */
    if (here && deck_table_apply_here(f->index, c->peer->id, here, (size_t)f->len)) {
        tcp_inbuf_skip(&c->in, (size_t)f->len);
        return 1;
    }
    deck_qmsg_t *q = deck_qmsg_alloc((size_t)f->len, c->peer->id);
    if (!q) return bad(c, "no memory for its message");
    if (tcp_inbuf_read(&c->in, q->data, (size_t)f->len) <= 0) { deck_qmsg_free(q); return 0; }
    deck_core_deliver(f->index, q);     /* for a mailbox destroyed since, it is dropped */
    return 1;
}

static int lookup(tcp_conn_t *c, const tcp_frame_t *f)
{
    char name[DECK_MBOX_NAME_MAX];
    if (f->len == 0 || f->len > TCP_NAME_MAX) return bad(c, "a mailbox name of a length no mailbox has");
    if (tcp_inbuf_read(&c->in, name, (size_t)f->len) <= 0) return 0;
    if (memchr(name, '\0', (size_t)f->len)) return bad(c, "a mailbox name with a NUL byte");
    name[f->len] = '\0';
    tcp_frame_t reply = { .type = FRAME_LOOKUP_REPLY, .src = tcp_peers_self(), .index = -1, .len = 0 };
    int index;
    if (deck_table_find(name, &index) == DECK_OK) reply.index = index;
    return tcp_conn_send(c, &reply, NULL, 0) == 0;
}

static int barrier(tcp_conn_t *c, const tcp_frame_t *f)
{
    int self = tcp_peers_self();
    if (!tcp_peers_static()) return bad(c, "a barrier frame in a dynamic run, which has no barrier");
    if (f->type == FRAME_BARRIER_ARRIVE && self != 0) return bad(c, "a barrier arrival at a node other than 0");
    if (f->type == FRAME_BARRIER_RELEASE && f->src != 0) return bad(c, "a barrier release from a node other than 0");
    tcp_barrier_on_frame(f);
    return 1;
}

int tcp_frame_handle(tcp_conn_t *c, const tcp_frame_t *f)
{
    char why[160];
    if (f->reserved) return bad(c, "a frame whose reserved bytes are not 0");
    if (f->src != c->peer->id) {
        snprintf(why, sizeof why, "a frame claiming to come from node %d", f->src);
        return bad(c, why);
    }
    switch (f->type) {
    case FRAME_DATA:
        return data(c, f);
    case FRAME_LOOKUP:
        return lookup(c, f);
    case FRAME_LOOKUP_REPLY:
        if (f->len != 0) return bad(c, "a lookup answer with a payload");
        return tcp_peer_answer(c, f->index) ? 1 : bad(c, "a lookup answer nobody asked for");
    case FRAME_BARRIER_ARRIVE:
    case FRAME_BARRIER_RELEASE:
        if (f->len != 0) return bad(c, "a barrier frame with a payload");
        return barrier(c, f);
    default:
        snprintf(why, sizeof why, "a frame of type %u, which is not one of a proved connection", f->type);
        return bad(c, why);
    }
}
