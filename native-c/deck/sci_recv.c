/*
 * Receiving side of DECK/SCI: the mailbox segments (create publishes the name in this process's
 * name table; destroy withdraws it and marks it gone in the mark entry of every peer that said
 * hello) and deck_mbox_retrv. A sender's control segment, where the flow lines are, is mapped
 * on the first message from it.
 *
 * retrv polls node by node, resuming after the node served last; for each node it looks at
 * protocol 1, 2 and 3 and takes only the message carrying the sequence number it expects from
 * that node, so the order of one sender is kept across protocols. The protocol-1 packet holds
 * only 8 bits of it, so its flag is read first and an exact match in protocol 2 or 3 wins over
 * a packet whose byte merely agrees: anything posted before the packet is visible once the
 * packet is (the sender's stores are ordered, the flag is read with acquire).
 *
 * Shared memory fails loudly (shared/spec/security.md): every value read from another process's
 * writing is checked before it is used, and one that this protocol cannot produce ends the
 * mailbox's retrieves with DECK_EPROTO naming the segment and what was wrong (violation()), and
 * tells the sender (the gone word of its mark entry), so neither side waits for ever: an area
 * bound by a process the mailbox does not admit (deck_mbox_watch: its peer's node and nonce
 * only), a sequence gap, a length beyond a buffer or the mailbox's limit, a protocol-2 wrap
 * line where none can be. A protocol-2 stamp that is not the one awaited is not a message:
 * the place holds what an earlier round or sender left there until the message comes (sci.h).
 *
 * Protocol 3 receives in place when the receiving message's buffer lies in the message segment
 * (deck_msg_create above DECK_MSG_BUF_LIMIT puts it there); otherwise it falls back to a chunked
 * transfer through a window of up to 1 MiB allocated in the message segment, copied out after
 * each chunk (the fallback DECK 1.0 lacked; it goes through the message segment rather than the
 * protocol-2 buffer so that it needs no second flow control).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sci.h"

#define WINDOW_MAX (1u << 20)
#define WINDOW_MIN 4096u

typedef struct sci_from {          /* one mailbox's receiving state for one sending node */
    uint64_t owner;                /* the nonce of the sending process this state belongs to */
    int      src;                  /* its DECK id (deck_msg_t.src), -1 when not introduced */
    uint32_t seq, p1_read, p2_cursor, p2_round, p3_tag;
    uint8_t  p3_next;
    int      broken;               /* the sender died in the middle of a protocol-3 message */
} sci_from_t;

/* Retrievers inside sci_retrv, per mailbox slot, and destroys waiting for them to leave: counted
 * without sci.lock, which two lock pairs per retrieve cost on every message (pinned 64 B
 * ping-pong through MicroVAPI, C: 20 ns of 440 one-way). In static memory, so a retriever may
 * count itself before it knows whether the slot's mailbox is still there (retrv_enter). */
static int slot_users[SCI_MAX_MBOX];
static int destroys_waiting;

/* Which senders a mailbox admits (deck_mbox_watch): any; none through shared memory; or one
 * node, as one process when its nonce is known. */
typedef struct sci_admits {
    int      any;
    int      node;                 /* -1: none */
    uint64_t nonce;                /* 0: not known (a static run) */
} sci_admits_t;

/* A retrieve that hands its message to fn (deck_mbox_retrv_apply): protocol 2 hands it in place,
 * in the sender's part of the mailbox segment, before that part is given back (done set). */
typedef struct sci_sink {
    deck_msg_fn fn;
    void       *arg;
    int         done;
} sci_sink_t;

typedef struct sci_in {
    int             index, slot;
    deck_seg_t      seg;
    pthread_mutex_t lock;          /* one retriever polls at a time */
    int             closed;
    int             next_node;
    char            violated[400]; /* why the mailbox stopped: every retrieve fails with it */
    int             shared;        /* it admits every process: a violation closes only the area
                                    * of the one that broke the rules, not the mailbox */
    sci_sink_t     *sink;          /* set by the retriever around a scan only (lock held) */
    sci_from_t      from[];
} sci_in_t;

static void ring_sender(int node) { deck_bell_ring(sci_ctl_bell(node)); }
/* After a seq_cst store of p1_read or p2_pos: a sender waits for those only after it
 * armed its bell and looked at them again (sci_send.c wait_flow), so a bell nobody is armed on
 * need not be rung, and is not pulled across on every take. */
static void ring_sender_if_waiting(int node) { deck_bell_ring_armed(sci_ctl_bell(node)); }

static void mark_refused(const sci_in_t *in, int i);

/* An impossible value in the mailbox's segment: the mailbox stops (every later retrieve fails
 * with the same text) and the sender of area i, if it can be told, finds its mailbox gone and
 * refused (its mark entry), so its posts fail too. */
static int violation(sci_in_t *in, int i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int violation(sci_in_t *in, int i, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (in->shared && i >= 0 && i < sci.n && i != sci.self) {
        /* One sender's fault: its area is ignored until another process binds it. */
        deck_log("deck_mbox_retrv: shared segment %s, area of node %d: %s; the area is closed",
                 in->seg.name, i, what);
        in->from[i].broken = 1;
        if (in->from[i].owner) mark_refused(in, i);
        return deck_fail(DECK_EPROTO, "deck_mbox_retrv: area of node %d closed: %s", i, what);   /* scan skips it */
    }
    snprintf(in->violated, sizeof in->violated, "deck_mbox_retrv: shared segment %s, area of node %d: %s",
             in->seg.name, i, what);
    deck_log("%s; the mailbox is closed to it", in->violated);
    if (i >= 0 && i < sci.n && i != sci.self && in->from[i].owner) mark_refused(in, i);
    return deck_fail_text(DECK_EPROTO, in->violated);
}

/* Whether the control segment of the process that owns sender i's area now is mapped (on its
 * first message); 0 when it cannot be (it sent something, so it started: it has died since). */
static int sender_mapped(const sci_in_t *in, int i)
{
    uint64_t owner = in->from[i].owner;
    return __atomic_load_n(&sci.peer_nonce[i], __ATOMIC_ACQUIRE) == owner || !sci_peer_renew(i, owner);
}

/* The flow line of sender i for this mailbox, in its control segment; NULL when unmapped. */
static sci_flow_t *sender_flow(const sci_in_t *in, int i)
{
    return sender_mapped(in, i) ? sci_flow_at(i, sci.self, in->slot) : NULL;
}

/* Tells sender i, through its mark entry, that this mailbox closed itself to it. */
static void mark_refused(const sci_in_t *in, int i)
{
    if (!sender_mapped(in, i)) return;
    sci_mark_t *m = sci_mark_at(i, sci.self, in->slot);
    __atomic_store_n(&m->refused, (uint32_t)in->index, __ATOMIC_RELAXED);
    __atomic_store_n(&m->gone, (uint32_t)in->index, __ATOMIC_SEQ_CST);
    ring_sender(i);
}

/* Withdraws the name, then tells every peer that may hold a handle. A sender says hello before
 * it reads the name entry when binding (seq_cst on both sides, Dekker): either it sees the
 * entry withdrawn, or this sees its hello and marks its mark entry, which it reads on every post. */
static void in_free(sci_in_t *in)
{
    __atomic_store_n(&sci_name_at(sci.self, in->slot)->index, 0, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int c = 0; c < sci.n; c++) {
        if (c == sci.self || !__atomic_load_n(sci_ctl_hello(sci.self, c), __ATOMIC_SEQ_CST)) continue;
        if (sci_ctl_attach(c, 0)) continue;                 /* gone: nobody to tell */
        sci_mark_t *m = sci_mark_at(c, sci.self, in->slot);
        /* A mailbox that stopped over an impossible value says so to every sender, also to one
         * whose mark violation() could not reach (its area no longer named its owner). */
        if (in->violated[0]) __atomic_store_n(&m->refused, (uint32_t)in->index, __ATOMIC_RELAXED);
        __atomic_store_n(&m->gone, (uint32_t)in->index, __ATOMIC_SEQ_CST);
        ring_sender(c);                                     /* a sender blocked on flow control */
    }
    deck_seg_remove(&in->seg);
    pthread_mutex_destroy(&in->lock);
    free(in);
}

int sci_mbox_created(int index, const char *name)
{
    int slot = index & 0xffff;
    if (slot >= SCI_MAX_MBOX)
        return deck_fail(DECK_ENOMEM, "deck_mbox_create: '%s': the sci transport holds %d mailboxes per process", name, SCI_MAX_MBOX);
    sci_in_t *in = calloc(1, sizeof *in + (size_t)sci.n * sizeof in->from[0]);
    if (!in) return deck_fail(DECK_ENOMEM, "deck_mbox_create: out of memory");
    in->index = index;
    in->slot = slot;
    pthread_mutex_lock(&sci.lock);
    int id = sci.next_seg_id++;
    pthread_mutex_unlock(&sci.lock);
    int rc = deck_seg_export(&in->seg, id, sci_mbox_seg_size());
    if (rc) { free(in); return rc; }
    pthread_mutex_init(&in->lock, NULL);
    pthread_mutex_lock(&sci.lock);
    __atomic_store_n(&sci.in[slot], in, __ATOMIC_RELEASE);   /* sci_mbox_bell_of reads it unlocked */
    pthread_mutex_unlock(&sci.lock);
    /* The name last: a sender that finds it binds to a segment that exists. */
    sci_name_t *e = sci_name_at(sci.self, slot);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->node = sci.self;
    e->seg_id = id;
    __atomic_store_n(&e->index, index, __ATOMIC_RELEASE);
    return DECK_OK;
}

void sci_mbox_destroyed(int index)
{
    int slot = index & 0xffff;
    if (slot >= SCI_MAX_MBOX) return;
    pthread_mutex_lock(&sci.lock);
    sci_in_t *in = sci.in[slot];
    if (!in || in->index != index) { pthread_mutex_unlock(&sci.lock); return; }
    /* seq_cst, paired with retrv_enter's count and look: either a retriever sees the slot empty,
     * or this sees it counted and waits for it. */
    __atomic_store_n(&sci.in[slot], NULL, __ATOMIC_SEQ_CST);
    __atomic_store_n(&in->closed, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&destroys_waiting, 1, __ATOMIC_SEQ_CST);
    deck_bell_ring(sci_mbox_bell(in->seg.addr));
    while (__atomic_load_n(&slot_users[slot], __ATOMIC_SEQ_CST) > 0) pthread_cond_wait(&sci.idle, &sci.lock);
    __atomic_fetch_sub(&destroys_waiting, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&sci.lock);
    in_free(in);
}

void sci_in_done(void)
{
    for (int s = 0; s < SCI_MAX_MBOX; s++)
        if (sci.in[s]) {
            sci_in_t *in = sci.in[s];
            __atomic_store_n(&sci.in[s], NULL, __ATOMIC_RELEASE);
            in_free(in);
        }
}

void sci_mbox_ring_index(int index)
{
    int slot = index & 0xffff;
    pthread_mutex_lock(&sci.lock);
    sci_in_t *in = slot < SCI_MAX_MBOX ? sci.in[slot] : NULL;
    if (in && in->index == index) deck_bell_ring_plain(sci_mbox_bell(in->seg.addr));
    pthread_mutex_unlock(&sci.lock);
}

/* ---- the three protocols; each returns 1 (taken), 0 or a negative DECK_E* ---- */

static int truncated(size_t len, const deck_msg_t *msg, int p)
{
    return deck_fail(DECK_ETRUNC, "deck_mbox_retrv: incoming message of %zu bytes (protocol %d), receiving message "
                     "holds %lu (message left in the mailbox)", len, p, msg->size);
}

static int take_p1(sci_in_t *in, int i, const uint8_t *pkt, uint8_t flag, deck_msg_t *msg)
{
    sci_from_t *st = &in->from[i];
    size_t len = flag & 0x3f;
    if (len > SCI_P1_MAX) return violation(in, i, "a protocol-1 packet of %zu bytes (at most %d)", len, SCI_P1_MAX);
    if (len > msg->size) return truncated(len, msg, 1);
    memcpy(msg->buf, pkt, len);
    msg->len = len;
    msg->pos = 0;
    st->p1_read++;
    st->seq++;
    sci_flow_t *f = sender_flow(in, i);
    if (f) {
        __atomic_store_n(&f->p1_read, st->p1_read, __ATOMIC_SEQ_CST);
        ring_sender_if_waiting(i);
    }
    return 1;
}

/* The sender's protocol-2 buffer wraps (sci.h): the next round starts at its beginning, and
 * the sender, which waits for that before it writes there, is told. */
static void p2_wrap(sci_in_t *in, int i)
{
    sci_from_t *st = &in->from[i];
    st->p2_round = (st->p2_round + 1) & 0xff;
    st->p2_cursor = 0;
    sci_flow_t *f = sender_flow(in, i);
    if (f) {
        __atomic_store_n(&f->p2_pos, (uint64_t)st->p2_round << 32, __ATOMIC_SEQ_CST);
        ring_sender_if_waiting(i);
    }
}

/* The message just taken ended its sender's round (sci.h): the wrap line behind it (the sender
 * wrote it before the message showed), or no room for one, ends it now. */
static void p2_end_round(sci_in_t *in, int i)
{
    sci_from_t *st = &in->from[i];
    if (st->p2_cursor <= sci.cfg.medbuf - DECK_SEG_LINE) {
        const sci_p2_header_t *at = (const sci_p2_header_t *)(sci_mbox_medbuf(in->seg.addr, i) + st->p2_cursor);
        if (__atomic_load_n(&at->stamp, __ATOMIC_ACQUIRE) != sci_p2_stamp(st->seq, st->owner)
            || __atomic_load_n(&at->datalen, __ATOMIC_RELAXED) != SCI_P2_WRAP)
            return;   /* not there: a look finds it later */
    }
    p2_wrap(in, i);
}

/* The message of len bytes whose header line is `at` (len read once, from the line the stamp
 * showed). Nothing is written to the sender per message: its buffer is given back a round at
 * a time (p2_wrap). */
static int take_p2(sci_in_t *in, int i, const sci_p2_header_t *at, uint32_t len, deck_msg_t *msg)
{
    sci_from_t *st = &in->from[i];
    size_t need = sci_p2_need(len);
    if (need > sci.cfg.medbuf - st->p2_cursor)   /* need > len: a length past the buffer too */
        return violation(in, i, "a protocol-2 message of %u bytes at %u of a %zu-byte buffer", len,
                         st->p2_cursor, sci.cfg.medbuf);
    const char *body = (const char *)at + offsetof(sci_p2_header_t, body);
    if (in->sink) {
        /* In place: the sender reuses this part of its buffer only in its next round, after
         * fn. It may still write into it meanwhile (deck.h: fn reads once). */
        deck_msg_t view = { .buf = (char *)body, .size = len, .len = len, .src = st->src };
        in->sink->fn(&view, in->sink->arg);
        in->sink->done = 1;
    } else {
        if (len > msg->size) return truncated(len, msg, 2);
        memcpy(msg->buf, body, len);
        msg->len = len;
        msg->pos = 0;
    }
    st->p2_cursor += (uint32_t)need;
    st->seq++;
    if (sci_p2_round_over(st->p2_cursor, sci.cfg.medbuf, sci.cfg.buf_limit)) p2_end_round(in, i);
    return 1;
}

/* Names a window to the sender (msg_address) and waits until it is filled. */
static int p3_window(sci_in_t *in, int i, uint64_t off, size_t len, int *last)
{
    sci_from_t *st = &in->from[i];
    sci_flow_t *f = sender_flow(in, i);
    if (!f) return deck_fail(DECK_EPEER, "deck_mbox_retrv: node %d went away before its %zu-byte message", i, len);
    uint8_t *signal = sci_mbox_signal(in->seg.addr, i);
    sci_p3_request_t *req = sci_mbox_request(in->seg.addr, i);
    st->p3_tag++;
    __atomic_store_n(&f->p3_off, off, __ATOMIC_RELAXED);
    __atomic_store_n(&f->p3_len, (uint64_t)len, __ATOMIC_RELAXED);
    __atomic_store_n(&f->p3_tag, st->p3_tag, __ATOMIC_RELEASE);
    ring_sender(i);
    sci_waiter_t w;
    sci_wait_start(&w, sci_mbox_bell(in->seg.addr), -1);
    int rc = DECK_OK;
    int closed = 0;
    for (;;) {
        /* -1 ends the message; the sender may already have replaced it by its next request. */
        if (__atomic_load_n(signal, __ATOMIC_ACQUIRE) != st->p3_next) { *last = 1; break; }
        if (__atomic_load_n(&req->filled, __ATOMIC_ACQUIRE) == st->p3_tag) { *last = 0; break; }
        /* A live sender that never fills the window must not hold a destroy up for ever. */
        if ((closed = __atomic_load_n(&in->closed, __ATOMIC_ACQUIRE))) break;
        if ((rc = sci_wait_next(&w, i))) break;
    }
    sci_wait_end(&w);
    if (closed) {
        st->broken = 1;
        return deck_fail(DECK_ECLOSED, "deck_mbox_retrv: the mailbox was destroyed in the middle of a %zu-byte "
                         "message from node %d", len, i);
    }
    if (rc) {
        st->broken = 1;
        return deck_fail(DECK_EPEER, "deck_mbox_retrv: node %d went away in the middle of a %zu-byte message", i, len);
    }
    return DECK_OK;
}

static int take_p3(sci_in_t *in, int i, size_t size, deck_msg_t *msg)
{
    if (size > msg->size) return truncated(size, msg, 3);
    uint64_t off;
    size_t win = size;
    void *bounce = NULL;
    if (!sci_mseg_offset(msg->buf, size, &off)) {
        win = size < WINDOW_MAX ? size : WINDOW_MAX;
        while (!(bounce = sci_mseg_alloc(win)) && win > WINDOW_MIN) win /= 2;
        if (!bounce)
            return deck_fail(DECK_ENOMEM, "deck_mbox_retrv: no room in the message segment (DECK_MSEG_SIZE) for a "
                             "receive window");
        sci_mseg_offset(bounce, win, &off);
    }
    int rc = DECK_OK, last = 0;
    for (size_t done = 0; done < size && rc == DECK_OK;) {
        size_t wl = size - done < win ? size - done : win;
        if (!(rc = p3_window(in, i, off, wl, &last))) {
            if (bounce) memcpy(msg->buf + done, bounce, wl);
            done += wl;
            if (last != (done == size))
                rc = violation(in, i, "a protocol-3 message ended after %zu of its %zu bytes", done, size);
        }
    }
    if (bounce) sci_mseg_free(bounce);
    if (rc) { in->from[i].broken = 1; return rc; }
    msg->len = size;
    msg->pos = 0;
    in->from[i].p3_next = (uint8_t)(in->from[i].p3_next % 127 + 1);
    in->from[i].seq++;
    return 1;
}

/* Whether the process `owner` of node i's area is one the mailbox admits. */
static int admitted(const sci_admits_t *a, int i, uint64_t owner)
{
    return a->any || (a->node == i && (!a->nonce || a->nonce == owner));
}

int sci_deck_id_of(int node, uint64_t nonce)
{
    if (sci.deck_id_of) return sci.deck_id_of(node, nonce);
    return node < sci.n ? node : -1;
}

/* A take's result r; when it took a message (1), the message says whom it came from. */
static int took(int r, const sci_from_t *st, deck_msg_t *msg)
{
    if (r == 1) msg->src = st->src;
    return r;
}

static int take_from(sci_in_t *in, void *entry, int i, deck_msg_t *msg, const sci_admits_t *admits);

#define LOOK_AGAIN 2   /* look_at: a later message showed, the one awaited did not (yet) */

/* One look at sender i's area for the message numbered st->seq: 1 taken, 0 none, LOOK_AGAIN
 * (unless `last`), or a negative DECK_E*. */
static int look_at(sci_in_t *in, void *entry, int i, deck_msg_t *msg, const sci_admits_t *admits, int last)
{
    sci_from_t *st = &in->from[i];
    void *seg = in->seg.addr;
    if (i == sci.self) {                           /* the queue: posts to this process, tcp peers' (auto) */
        if (!in->sink) return deck_entry_poll(entry, msg);
        int r = deck_entry_poll_apply(entry, msg, in->sink->fn, in->sink->arg);
        if (r == 1) in->sink->done = 1;
        return r;
    }
    uint64_t owner = __atomic_load_n(sci_mbox_owner(seg, i), __ATOMIC_ACQUIRE);
    if (owner != st->owner) {
        /* A sender bound (claim_area): the first one, or a new process of node number i. */
        if (!owner && (admits->any || !st->owner)) return 0;
        if (!admitted(admits, i, owner))
            return violation(in, i, "bound by process %#llx, which this mailbox does not admit (%s)",
                             (unsigned long long)owner, admits->node < 0 ? "it admits no process through shared memory"
                             : "it admits its connection's peer only");
        *st = (sci_from_t){ .owner = owner, .p3_next = 1, .src = sci_deck_id_of(i, owner) };
    }
    if (!st->owner) return 0;          /* nobody bound the area: nothing to take, no flow line to write */
    if (st->broken) return 0;
    if (st->src < 0 && admits->any && (st->src = sci_deck_id_of(i, owner)) < 0)
        return 0;   /* a process not introduced (yet: its bootstrap may still be adding it): its
                     * messages wait in its area, they are not taken from an unknown sender */
    const uint8_t *pkt = sci_mbox_ring(seg, i) + (size_t)(st->p1_read % SCI_P1_SLOTS) * DECK_SEG_LINE;
    uint8_t flag = __atomic_load_n(pkt + DECK_SEG_LINE - 1, __ATOMIC_ACQUIRE);   /* first: see above */
    int p1_there = (flag & 0xc0) == (0x80 | ((st->p1_read / SCI_P1_SLOTS) & 1) << 6);
    int p1 = p1_there && pkt[62] == (uint8_t)st->seq;

    const sci_p2_header_t *at = (const sci_p2_header_t *)(sci_mbox_medbuf(seg, i) + st->p2_cursor);
    /* The line after the header comes with each look: once the stamp shows, the rest of a
     * small message is here already instead of crossing between the CPUs after it. */
    if (st->p2_cursor + 2 * DECK_SEG_LINE <= sci.cfg.medbuf) __builtin_prefetch(at + 1);
    uint64_t stamp = __atomic_load_n(&at->stamp, __ATOMIC_ACQUIRE), ours = sci_p2_stamp(st->seq, st->owner);
    if (stamp == ours) {
        uint32_t len = __atomic_load_n(&at->datalen, __ATOMIC_RELAXED);   /* read once */
        if (len != SCI_P2_WRAP) return took(take_p2(in, i, at, len, msg), st, msg);
        if (st->p2_cursor == 0) return violation(in, i, "a protocol-2 wrap line at the start of its buffer");
        p2_wrap(in, i);
        return take_from(in, entry, i, msg, admits);   /* the message comes at the start */
    }
    /* A later message of this sender at the cursor (not one of an older round, nor another
     * sender's: those are only what the place held before). */
    int p2_later = (uint32_t)stamp == (uint32_t)ours && (int32_t)((uint32_t)(stamp >> 32) - st->seq) > 0;
    const sci_p3_request_t *req = sci_mbox_request(seg, i);
    if (__atomic_load_n(sci_mbox_signal(seg, i), __ATOMIC_ACQUIRE) == st->p3_next && req->seq == st->seq) {
        uint64_t size = __atomic_load_n(&req->size, __ATOMIC_RELAXED);   /* read once */
        if (size > deck_entry_limit_of(entry))
            return violation(in, i, "a protocol-3 message of %llu bytes, above the mailbox's limit of %lu",
                             (unsigned long long)size, deck_entry_limit_of(entry));
        return took(take_p3(in, i, (size_t)size, msg), st, msg);
    }
    if (p1) return took(take_p1(in, i, pkt, flag, msg), st, msg);
    /* A later message is there, so everything before it is too (the sender's stores are
     * ordered), but maybe only since its protocol was looked at: one more look, and if the
     * message awaited is still missing, the sender skipped it. */
    if ((p1_there || p2_later) && !last) return LOOK_AGAIN;
    if (p1_there) return violation(in, i, "message number %u (low byte) came when number %u is next", pkt[62], st->seq);
    if (p2_later) return violation(in, i, "protocol-2 message number %u came when number %u is next",
                                   (uint32_t)(stamp >> 32), st->seq);
    return 0;
}

static int take_from(sci_in_t *in, void *entry, int i, deck_msg_t *msg, const sci_admits_t *admits)
{
    int r = look_at(in, entry, i, msg, admits, 0);
    return r == LOOK_AGAIN ? look_at(in, entry, i, msg, admits, 1) : r;
}

/* The first node in [from, to) whose bit is set; -1 when none. */
static int next_bit(const uint64_t *set, int from, int to)
{
    while (from < to) {
        uint64_t w = set[from / 64] >> (from % 64);
        if (w) {
            int i = from + __builtin_ctzll(w);
            return i < to ? i : -1;
        }
        from = (from / 64 + 1) * 64;
    }
    return -1;
}

/* One look at every sender that bound to this mailbox, and at the local queue (posts to this
 * process; with auto, tcp peers' too), round robin from the node after the one served last. */
static int scan(sci_in_t *in, void *entry, deck_msg_t *msg, const sci_admits_t *admits)
{
    uint64_t set[(SCI_MAX_NODES + 63) / 64];
    const uint64_t *bits = sci_mbox_senders(in->seg.addr);
    for (int w = 0; w < (sci.n + 63) / 64; w++) set[w] = __atomic_load_n(&bits[w], __ATOMIC_ACQUIRE);
    set[sci.self / 64] |= 1ull << (sci.self % 64);
    for (int pass = 0; pass < 2; pass++) {
        int lo = pass ? 0 : in->next_node, hi = pass ? in->next_node : sci.n;
        for (int i = next_bit(set, lo, hi); i >= 0; i = next_bit(set, i + 1, hi)) {
            int r = take_from(in, entry, i, msg, admits);
            /* A mailbox every process may use does not stop for one sender that broke the rules
             * or died half-way through a message: its area is closed (broken), the rest go on. */
            if (in->shared && (r == DECK_EPROTO || r == DECK_EPEER) && i != sci.self) r = 0;
            if (r == 1) in->next_node = (i + 1) % sci.n;
            if (r) return r;
        }
    }
    return 0;
}

/* What the mailbox admits, from deck_mbox_watch: -1 anyone, DECK_NOBODY no process through
 * shared memory, else its peer (a DECK id): in a dynamic run, through sci as one node and
 * process (sci.sender_of) or not at all; in a static run, the node of that id. */
static sci_admits_t admits_of(void *entry)
{
    int watched = deck_entry_watched(entry), node;
    uint64_t nonce;
    sci_admits_t a = { .any = watched == -1, .node = -1 };
    if (watched < 0) return a;
    if (sci.sender_of) {
        if (sci.sender_of(watched, &node, &nonce)) { a.node = node; a.nonce = nonce; }
    } else if (watched < sci.n) {
        a.node = watched;
    }
    return a;
}

/* scan, with the sink of this retrieve (only the lock holder's scan may use it) */
static int scan_to(sci_in_t *in, void *entry, deck_msg_t *msg, const sci_admits_t *admits, sci_sink_t *sink)
{
    in->sink = sink;
    int r = scan(in, entry, msg, admits);
    in->sink = NULL;
    return r;
}

/* Leaves a slot retrv_enter counted; the last retriever out wakes a destroy waiting for it
 * (under sci.lock, which the destroy holds from its look at the count until it sleeps). */
static void retrv_leave(int slot)
{
    if (__atomic_sub_fetch(&slot_users[slot], 1, __ATOMIC_SEQ_CST) == 0
        && __atomic_load_n(&destroys_waiting, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&sci.lock);
        pthread_cond_broadcast(&sci.idle);
        pthread_mutex_unlock(&sci.lock);
    }
}

/* The mailbox `index`, counted as used until retrv_leave; NULL when it is destroyed (or being). */
static sci_in_t *retrv_enter(int index)
{
    int slot = index & 0xffff;
    if (slot >= SCI_MAX_MBOX) return NULL;
    __atomic_fetch_add(&slot_users[slot], 1, __ATOMIC_SEQ_CST);
    sci_in_t *in = __atomic_load_n(&sci.in[slot], __ATOMIC_SEQ_CST);
    if (in && in->index == index) return in;
    retrv_leave(slot);
    return NULL;
}

static int retrv(int index, void *entry, deck_msg_t *msg, int timeout_ms, sci_sink_t *sink)
{
    sci_in_t *in = retrv_enter(index);
    if (!in) return deck_fail(DECK_ECLOSED, "deck_mbox_retrv: mailbox %d is destroyed", index);

    sci_waiter_t w;
    int waiting = 0;                               /* w started: not for a look, nor before the first scan */
    pthread_mutex_lock(&in->lock);
    sci_admits_t admits = admits_of(entry);
    in->shared = admits.any;
    int rc;
    for (;;) {
        if (__atomic_load_n(&in->closed, __ATOMIC_SEQ_CST)) {
            rc = deck_fail(DECK_ECLOSED, "deck_mbox_retrv: mailbox destroyed while waiting");
            break;
        }
        if (in->violated[0]) {
            rc = deck_fail_text(DECK_EPROTO, in->violated);
            break;
        }
        if ((rc = scan_to(in, entry, msg, &admits, sink))) break;
        if (timeout_ms == 0) {
            rc = deck_fail_text(DECK_ETIMEDOUT, "deck_mbox_retrv_timed: nothing there (a look, no wait)");
            break;
        }
        if (!waiting) {
            sci_wait_start(&w, sci_mbox_bell(in->seg.addr), timeout_ms);
            w.deck_ids = 1;                        /* deck_mbox_watch names a DECK id */
            waiting = 1;
        }
        int watch = deck_entry_watched(entry);
        pthread_mutex_unlock(&in->lock);
        rc = sci_wait_next(&w, watch);
        pthread_mutex_lock(&in->lock);
        if (rc == DECK_EPEER && !(rc = scan_to(in, entry, msg, &admits, sink))) {  /* what it sent before dying counts */
            rc = deck_fail(DECK_EPEER, "deck_mbox_retrv: node %d has gone away", watch);
            break;
        }
        if (rc == DECK_ETIMEDOUT)
            rc = timeout_ms == DECK_POLL
                 ? deck_fail_text(DECK_ETIMEDOUT, "deck_mbox_retrv_timed: nothing within the polling window")
                 : deck_fail(DECK_ETIMEDOUT, "deck_mbox_retrv_timed: nothing within %d ms", timeout_ms);
        if (rc) break;
    }
    pthread_mutex_unlock(&in->lock);
    if (waiting) sci_wait_end(&w);
    retrv_leave(in->slot);
    return rc == 1 ? DECK_OK : rc;
}

int sci_retrv(int index, void *entry, deck_msg_t *msg, int timeout_ms)
{
    return retrv(index, entry, msg, timeout_ms, NULL);
}

int sci_retrv_apply(int index, void *entry, deck_msg_t *scratch, int timeout_ms, deck_msg_fn fn, void *arg)
{
    sci_sink_t sink = { .fn = fn, .arg = arg };
    int rc = retrv(index, entry, scratch, timeout_ms, &sink);
    return sink.done ? rc : deck_apply_scratch(rc, scratch, fn, arg);
}

/* Without sci.lock: keyed waits and rings come on every message. The mailbox is published with
 * a release store and stays mapped until deck_mbox_destroy, which its owner does not call while
 * it waits or rings on it (deck.h). */
deck_bell_t *sci_mbox_bell_of(int index)
{
    int slot = index & 0xffff;
    sci_in_t *in = slot < SCI_MAX_MBOX ? __atomic_load_n(&sci.in[slot], __ATOMIC_ACQUIRE) : NULL;
    return in && in->index == index ? sci_mbox_bell(in->seg.addr) : NULL;
}

_Static_assert(DECK_MBOX_KEYS == DECK_BELL_KEYS, "a mailbox key is a doorbell key");

int sci_mbox_bell_read(int index, uint32_t *value)
{
    deck_bell_t *b = sci_mbox_bell_of(index);
    if (!b) return deck_fail(DECK_ESTATE, "deck_mbox_key_seen: mailbox %d has no doorbell", index);
    *value = deck_bell_read(b);
    return DECK_OK;
}

void sci_mbox_key_ring(int index, int key)
{
    deck_bell_t *b = sci_mbox_bell_of(index);
    if (!b) return;
    if (key >= 0) deck_bell_ring_key_only(b, (unsigned)key);
    else deck_bell_ring_plain(b);
}

/* The segment of mailbox `index` of this process, or NULL when there is none: for the fuzz
 * target fuzz/fuzz_sci_mailbox.c (and tests), which play a sender by writing into it. */
void *sci_mbox_segment_of(int index)
{
    int slot = index & 0xffff;
    pthread_mutex_lock(&sci.lock);
    sci_in_t *in = slot < SCI_MAX_MBOX ? sci.in[slot] : NULL;
    void *addr = in && in->index == index ? in->seg.addr : NULL;
    pthread_mutex_unlock(&sci.lock);
    return addr;
}
