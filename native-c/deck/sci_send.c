/*
 * Sending side of the three DECK/SCI protocols (deck.md "DECK/SCI"):
 *   protocol 1, 0..62 B: one 64-byte packet in the per-sender ring of the mailbox;
 *   protocol 2, 63 B..DECK_MSG_BUF_LIMIT: the body, then its header line in front of it (which
 *     holds the body's first bytes) in the per-sender buffer, stamped last; wrap-around by
 *     rounds (sci.h draws it);
 *   protocol 3, above: rendezvous, the data written straight into the receiver's buffer.
 * One sequence number per (this process, mailbox) is shared by the three so that the receiver
 * keeps their order. Threads of one process posting to one mailbox take turns on its lock.
 * A sender only ever polls its own control segment (the flow lines the receiver writes).
 * A message may come in pieces (deck_mbox_postv_keyed): each protocol copies them straight to
 * where the receiver reads, so a piece is read once.
 * Posts to a mailbox of this same process are queued locally instead (deck_core_post_self), as with
 * tcp: a full ring or a rendezvous with itself would block a thread that also retrieves.
 */
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "sci.h"

typedef struct sci_out {
    pthread_mutex_t lock;
    int        index;              /* the mailbox this mapping serves; 0: none */
    uint64_t   owner;              /* the nonce of the process that owns it */
    int        broken;             /* a protocol step failed half-way: the stream is unusable */
    struct timespec next_check;    /* when to look again whether the receiver lives */
    deck_seg_t seg;
    uint32_t   seq, p1_sent, p2_cursor, p2_round, p3_tag;
    int        p2_round_over;      /* the next protocol-2 message starts the next round (sci.h) */
    uint32_t   p1_read_seen;       /* the receiver's p1_read when last read: room known without a look */
    uint8_t    p3_next;            /* 1..127, as DECK 1.0 */
    int        unrung;             /* a quiet post woke nobody since the last plain or keyed ring */
    uint32_t   ringing;            /* posts ringing the mapped bell after the lock: no unmapping */
} sci_out_t;

/* The sending state for mailbox `slot` of `node`. The table and its entries, once made, stay
 * until deck_done (sci_out_done), so a post finds an existing one without sci.lock (a lock pair
 * per message); they are published with release stores, whole. */
static sci_out_t *out_get(int node, int slot)
{
    size_t at = (size_t)node * SCI_MAX_MBOX + slot;
    sci_out_t **table = __atomic_load_n(&sci.out, __ATOMIC_ACQUIRE);
    sci_out_t *o = table ? __atomic_load_n(&table[at], __ATOMIC_ACQUIRE) : NULL;
    if (o) return o;
    pthread_mutex_lock(&sci.lock);
    if (!sci.out) __atomic_store_n(&sci.out, calloc((size_t)sci.n * SCI_MAX_MBOX, sizeof *sci.out), __ATOMIC_RELEASE);
    if (sci.out && !(o = sci.out[at]) && (o = calloc(1, sizeof *o))) {
        pthread_mutex_init(&o->lock, NULL);
        __atomic_store_n(&sci.out[at], o, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&sci.lock);
    return o;
}

/* Unmaps o's segment once no post is ringing its bell any more (a ring is one system call, so
 * the wait is short); no new ringer starts meanwhile: bind holds o's lock, deck_done comes
 * after every post. */
static void disconnect(sci_out_t *o)
{
    while (__atomic_load_n(&o->ringing, __ATOMIC_ACQUIRE))
        sched_yield();
    deck_seg_disconnect(&o->seg);
}

void sci_out_done(void)
{
    for (size_t i = 0; sci.out && i < (size_t)sci.n * SCI_MAX_MBOX; i++) {
        sci_out_t *o = sci.out[i];
        if (!o) continue;
        disconnect(o);
        pthread_mutex_destroy(&o->lock);
        free(o);
    }
    free(sci.out);
    sci.out = NULL;
}

static int gone(int node, int index)
{
    return deck_fail(DECK_ENOTFOUND, "deck_mbox_post: mailbox %d of node %d does not exist (any more)", index, node);
}

/* Writes into the segment of a dead process would succeed unnoticed: a post fails once the
 * receiver is known dead, looking at its owner record at most every SCI_CHECK_MS. */
static int receiver_lost(sci_out_t *o, int node)
{
    if (!sci_node_known_dead(node)) {
        if (!deck_check_due(&o->next_check, SCI_CHECK_MS)) return DECK_OK;
        if (sci_node_alive(node)) return DECK_OK;
    }
    return deck_fail(DECK_EPEER, "deck_mbox_post: node %d has gone away", node);
}

/* entry: "flow line" or "mark entry", where the value was found. */
static int corrupt_entry(const sci_out_t *o, int node, const char *entry, const char *what)
{
    return deck_fail(DECK_EPROTO, "deck_mbox_post: shared segment %s, %s of node %d's mailbox %d: a value node "
                     "%d cannot have written while this post waited for %s", sci.ctl.name, entry, node, o->index, node, what);
}

static int corrupt_flow(const sci_out_t *o, int node, const char *what)
{
    return corrupt_entry(o, node, "flow line", what);
}

/* The receiver marks our mark entry with the mailbox's index when the mailbox we are bound to
 * is destroyed (gone), or has closed itself to us over an impossible value (gone and refused).
 * DECK_OK while it is open; any other mark is not the receiver's doing. */
static int closed_by_receiver(sci_out_t *o, int node)
{
    sci_mark_t *m = sci_mark_at(sci.self, node, o->index & 0xffff);
    uint32_t gone_mark = __atomic_load_n(&m->gone, __ATOMIC_ACQUIRE), refused = __atomic_load_n(&m->refused, __ATOMIC_RELAXED);
    if (gone_mark == 0 && refused == 0) return DECK_OK;
    if (gone_mark == (uint32_t)o->index && refused == 0) return gone(node, o->index);
    o->broken = 1;
    if (gone_mark == (uint32_t)o->index && refused == gone_mark)
        return deck_fail(DECK_EPROTO, "deck_mbox_post: mailbox %d of node %d closed itself to this process: it found a "
                         "value this process cannot have written in its shared segment %s", o->index, node, o->seg.name);
    return corrupt_entry(o, node, "mark entry", "the receiver to stay open");
}

/* Takes this process's area in a mailbox it binds to: it may hold what a dead process of the
 * same node number left there (dynamic runs). Cleared first, then our nonce as its owner, so a
 * receiver that sees the new owner starts afresh; then our bit, so it looks at the area. */
static void claim_area(void *seg)
{
    memset(sci_mbox_ring(seg, sci.self), 0, SCI_P1_SLOTS * DECK_SEG_LINE);
    memset(sci_mbox_request(seg, sci.self), 0, sizeof(sci_p3_request_t));
    memset(sci_mbox_medbuf(seg, sci.self), 0, sizeof(sci_p2_header_t));   /* where it looks first */
    __atomic_store_n(sci_mbox_signal(seg, sci.self), 0, __ATOMIC_RELAXED);
    __atomic_store_n(sci_mbox_owner(seg, sci.self), sci.nonce, __ATOMIC_RELEASE);
    __atomic_fetch_or(sci_mbox_senders(seg) + sci.self / 64, 1ull << (sci.self % 64), __ATOMIC_SEQ_CST);
}

/* Maps the mailbox segment of (node, index), found in the owner's name table, once. After that
 * a post reads only its own memory: the gone word of its mark entry. */
static int bind(sci_out_t *o, int node, int index)
{
    int rc = receiver_lost(o, node);
    if (rc) return rc;
    /* A node number taken over by another process (dynamic runs, sci_peer_renew) is a new
     * receiver, whatever the index says. */
    if (o->index == index && o->owner == __atomic_load_n(&sci.peer_nonce[node], __ATOMIC_ACQUIRE)) {
        if ((rc = closed_by_receiver(o, node))) return rc;
        return o->broken ? deck_fail(DECK_EIO, "deck_mbox_post: the stream to mailbox %d of node %d broke earlier",
                                     index, node) : DECK_OK;
    }
    if ((rc = sci_ctl_attach(node, sci.cfg.connect_ms))) return rc;
    sci_name_t e;
    int slot = index & 0xffff;
    /* A stale handle (an older mailbox of this slot) leaves the current binding alone. */
    if (!sci_name_read(node, slot, &e) || e.index != index) return gone(node, index);
    disconnect(o);                      /* the mailbox of this slot was re-created */
    o->index = 0;
    /* A fresh flow line and mark (the receiver writes them only once we post), then the name
     * once more: a destroy from now on marks the gone word (seq_cst, see in_free's notice). */
    memset(sci_flow_at(sci.self, node, slot), 0, sizeof(sci_flow_t));
    sci_mark_t *m = sci_mark_at(sci.self, node, slot);
    __atomic_store_n(&m->refused, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&m->gone, 0, __ATOMIC_SEQ_CST);
    if (!sci_name_read(node, slot, &e) || e.index != index) return gone(node, index);
    char token[DECK_SEG_TOKEN_MAX];
    if (!(rc = sci_peer_token(node, token, sizeof token)))
        rc = deck_seg_attach(&o->seg, token, node, e.seg_id, sci.cfg.connect_ms);
    if (!rc && o->seg.size < deck_seg_roundup(sci_mbox_seg_size())) {
        deck_seg_disconnect(&o->seg);
        rc = deck_fail(DECK_ECONFIG, "deck_mbox_post: mailbox '%s' of node %d is smaller than this process expects: "
                       "DECK_MEDBUF_SIZE differs between the processes", e.name, node);
    }
    o->broken = 0;
    o->seq = o->p1_sent = o->p1_read_seen = o->p2_cursor = o->p2_round = o->p3_tag = 0;
    o->p2_round_over = 0;
    o->p3_next = 1;
    if (rc) return rc;
    claim_area(o->seg.addr);
    o->index = index;
    o->owner = sci.peer_nonce[node];
    return DECK_OK;
}

/* What a blocked sender waits for, read from its own control segment, where the receiver
 * writes: 1 ready, 0 not yet, -1 a value the receiver cannot have written (the flow line is
 * corrupt; the post fails naming it rather than wait for ever). The loads are seq_cst: they
 * pair with the receiver's stores and its look at the bell's waiters (sci_recv.c ring_sender_if_waiting). */
typedef int (*ready_fn)(sci_out_t *o, sci_flow_t *f);

/* The ring's room is looked at only when what the receiver reported last says it is full: the
 * receiver writes p1_read on every take, and a look on every post would pull its line across. */
static int p1_room(sci_out_t *o, sci_flow_t *f)
{
    if (o->p1_sent - o->p1_read_seen < SCI_P1_SLOTS) return 1;
    uint32_t read = __atomic_load_n(&f->p1_read, __ATOMIC_SEQ_CST), unread = o->p1_sent - read;
    if (unread > SCI_P1_SLOTS) return -1;
    o->p1_read_seen = read;
    return unread < SCI_P1_SLOTS;
}

/* The receiver reports the round it went on to when it wrapped (sci.h): still ours until it
 * has taken everything of it, then the next. */
static int p2_caught_up(sci_out_t *o, sci_flow_t *f)
{
    uint64_t pos = __atomic_load_n(&f->p2_pos, __ATOMIC_SEQ_CST);
    if (pos == (uint64_t)o->p2_round << 32) return 0;
    return pos == (uint64_t)((o->p2_round + 1) & 0xff) << 32 ? 1 : -1;
}

static int p3_window(sci_out_t *o, sci_flow_t *f)
{
    return __atomic_load_n(&f->p3_tag, __ATOMIC_ACQUIRE) == o->p3_tag;
}

static int wait_flow(sci_out_t *o, int node, ready_fn ready, const char *what)
{
    sci_flow_t *f = sci_flow_at(sci.self, node, o->index & 0xffff);
    int state = ready(o, f);
    if (state > 0) return DECK_OK;
    if (state < 0) { o->broken = 1; return corrupt_flow(o, node, what); }
    /* Quiet posts (deck_mbox_postv_quiet) woke nobody: the receiver may not know that what
     * fills its ring is there. A ring now makes sure some retriever is on its way. */
    if (o->unrung) {
        o->unrung = 0;
        deck_bell_ring(sci_mbox_bell(o->seg.addr));
    }
    sci_waiter_t w;
    int timeout = deck_post_timeout_ms();
    sci_wait_start(&w, sci_ctl_bell(sci.self), timeout);
    int rc = DECK_OK;
    while ((state = ready(o, f)) <= 0) {
        if (state < 0) { o->broken = 1; rc = corrupt_flow(o, node, what); break; }
        if ((rc = closed_by_receiver(o, node))) break;
        if ((rc = sci_wait_next(&w, node)) == DECK_ETIMEDOUT) {
            /* Alive but taking nothing (stopped?): the caller gives up on it. A protocol-3
             * message may be half written, so the stream to that mailbox is over. */
            o->broken = 1;
            rc = deck_fail(DECK_ETIMEDOUT, "deck_mbox_post: node %d took nothing for %d ms (DECK_POST_TIMEOUT_MS) "
                           "while this post waited for %s", node, timeout, what);
            break;
        }
        if (rc) {
            rc = deck_fail(DECK_EPEER, "deck_mbox_post: node %d went away while this post waited for %s", node, what);
            break;
        }
    }
    sci_wait_end(&w);
    return rc;
}

/* The ring that shows a message: keyed (key >= 0) wakes the thread waiting for that key, quiet
 * (DECK_KEY_QUIET) that thread only, plain (key < 0) every waiter. The lock need not be held:
 * the bell stays mapped while o->ringing counts this ring (sci_postv_keyed). */
static void ring_bell(deck_bell_t *bell, int key)
{
    if (key >= 0 && (key & DECK_KEY_QUIET)) deck_bell_ring_key_only(bell, (unsigned)(key & ~DECK_KEY_QUIET));
    else if (key >= 0) deck_bell_ring_key(bell, (unsigned)key);
    else deck_bell_ring(bell);
}

/* Notes whether the ring of `key` is a quiet one, which wakes no retriever (wait_flow); lock held. */
static void note_ring(sci_out_t *o, int key)
{
    o->unrung = key >= 0 && (key & DECK_KEY_QUIET);
}

/* Rings now, lock held: protocol 3's steps, which wait for the receiver under the lock. */
static void ring_receiver(sci_out_t *o, int key)
{
    note_ring(o, key);
    ring_bell(sci_mbox_bell(o->seg.addr), key);
}

static int post_p1(sci_out_t *o, int node, const struct iovec *iov, int cnt, size_t len, int key)
{
    int rc = wait_flow(o, node, p1_room, "room in the protocol-1 ring");
    if (rc) return rc;
    uint8_t *pkt = sci_mbox_ring(o->seg.addr, sci.self) + (size_t)(o->p1_sent % SCI_P1_SLOTS) * DECK_SEG_LINE;
    uint8_t line[DECK_SEG_LINE] __attribute__((aligned(DECK_SEG_LINE)));
    deck_gather_copy(line, iov, cnt, 0, len);
    line[62] = (uint8_t)o->seq;
    /* byte 63, next_msg: valid bit, the ring lap's parity (a slot never sees the same flag
     * twice in a row) and the length; stored last, so the packet is whole when it shows. */
    uint8_t flag = (uint8_t)(0x80 | ((o->p1_sent / SCI_P1_SLOTS) & 1) << 6 | len);
    memcpy(pkt, line, DECK_SEG_LINE - 1);
    __atomic_store_n(pkt + DECK_SEG_LINE - 1, flag, __ATOMIC_RELEASE);
    o->p1_sent++;
    o->seq++;
    note_ring(o, key);   /* rung by sci_postv_keyed */
    return DECK_OK;
}

/* Writes the header line at the cursor, datalen and first bytes, then its stamp, last. */
static void p2_stamp(sci_out_t *o, sci_p2_header_t *at, uint32_t datalen)
{
    at->datalen = datalen;
    at->zero = 0;
    deck_seg_flush();              /* the body is in place before the stamp shows it */
    __atomic_store_n(&at->stamp, sci_p2_stamp(o->seq, sci.nonce), __ATOMIC_RELEASE);
}

static int post_p2(sci_out_t *o, int node, const struct iovec *iov, int cnt, size_t len, int key)
{
    uint8_t *buf = sci_mbox_medbuf(o->seg.addr, sci.self);
    if (o->p2_round_over) {
        /* The next round starts at the beginning of the buffer once the receiver has taken
         * everything of this one (sci.h). */
        int rc = wait_flow(o, node, p2_caught_up, "the protocol-2 buffer to empty");
        if (rc) return rc;
        o->p2_round = (o->p2_round + 1) & 0xff;
        o->p2_cursor = 0;
        o->p2_round_over = 0;
    }
    sci_p2_header_t *at = (sci_p2_header_t *)(buf + o->p2_cursor);
    size_t inline_len = len < SCI_P2_INLINE ? len : SCI_P2_INLINE;
    if (len > inline_len) deck_gather_copy(at + 1, iov, cnt, inline_len, len - inline_len);
    deck_gather_copy(at->body, iov, cnt, 0, inline_len);
    p2_stamp(o, at, (uint32_t)len);
    o->p2_cursor += (uint32_t)sci_p2_need(len);
    o->seq++;
    if (sci_p2_round_over(o->p2_cursor, sci.cfg.medbuf, sci.cfg.buf_limit)) {
        /* The round ends behind this message: a wrap line says so where there is room for one,
         * before the ring, so the receiver wraps as it takes this message. */
        if (o->p2_cursor <= sci.cfg.medbuf - DECK_SEG_LINE)
            p2_stamp(o, (sci_p2_header_t *)(buf + o->p2_cursor), SCI_P2_WRAP);
        o->p2_round_over = 1;
    }
    note_ring(o, key);   /* rung by sci_postv_keyed */
    return DECK_OK;
}

/* Protocol 3: ask with the signal byte, then fill each window the receiver names in our
 * msg_address (one window: its message buffer, zero copy; several: the chunked fallback). Only
 * the request is rung with the key: the fills are for whoever retrieves by then, who waits as a
 * plain waiter inside the retrieve. */
static int post_p3(sci_out_t *o, int node, const struct iovec *iov, int cnt, size_t len, int key)
{
    sci_p3_request_t *req = sci_mbox_request(o->seg.addr, sci.self);
    uint8_t *signal = sci_mbox_signal(o->seg.addr, sci.self);
    sci_flow_t *f = sci_flow_at(sci.self, node, o->index & 0xffff);
    deck_seg_t mseg;
    int rc = sci_mseg_attach(node, &mseg);
    if (rc) return rc;
    req->seq = o->seq;
    req->size = len;
    __atomic_store_n(signal, o->p3_next, __ATOMIC_RELEASE);
    ring_receiver(o, key);
    for (size_t done = 0; done < len;) {
        o->p3_tag++;
        if ((rc = wait_flow(o, node, p3_window, "the receiver's buffer address"))) break;
        uint64_t off = __atomic_load_n(&f->p3_off, __ATOMIC_RELAXED), wl = __atomic_load_n(&f->p3_len, __ATOMIC_RELAXED);
        if (wl == 0 || wl > len - done || off > mseg.size || wl > mseg.size - off) {
            rc = deck_fail(DECK_EPROTO, "deck_mbox_post: shared segment %s, flow line of node %d: a buffer window "
                           "%llu+%llu that is not in its message segment of %zu bytes", sci.ctl.name, node,
                           (unsigned long long)off, (unsigned long long)wl, mseg.size);
            break;
        }
        deck_gather_copy((char *)mseg.addr + off, iov, cnt, done, wl);
        done += wl;
        deck_seg_flush();
        if (done == len) __atomic_store_n(signal, (uint8_t)SCI_P3_DONE, __ATOMIC_RELEASE);
        else __atomic_store_n(&req->filled, o->p3_tag, __ATOMIC_RELEASE);
        ring_receiver(o, -1);
    }
    if (rc) { o->broken = 1; return rc; }
    o->p3_next = (uint8_t)(o->p3_next % 127 + 1);
    o->seq++;
    return DECK_OK;
}

int sci_postv_keyed(int node, int index, const struct iovec *iov, int cnt, size_t len, int key)
{
    int slot = index & 0xffff;
    if (node < 0 || node >= sci.n || index <= 0 || slot >= SCI_MAX_MBOX) return gone(node, index);
    if (node == sci.self) return deck_core_post_self(index, iov, cnt, len);   /* queued, then sci_mbox_ring_index */
    sci_out_t *o = out_get(node, slot);
    if (!o) return deck_fail(DECK_ENOMEM, "deck_mbox_post: out of memory");
    pthread_mutex_lock(&o->lock);
    int rc = bind(o, node, index), rung = 0;   /* rung: protocol 3 rang at each step itself */
    if (!rc) {
        if (len <= SCI_P1_MAX) {
            rc = post_p1(o, node, iov, cnt, len, key);
        } else if (len <= sci.cfg.buf_limit) {
            rc = post_p2(o, node, iov, cnt, len, key);
        } else {
            rc = post_p3(o, node, iov, cnt, len, key);
            rung = 1;
        }
    }
    /* The ring after the lock: a ring that wakes a sleeper is a system call of several us, and
     * threads posting to the same mailbox (connections to one process) queued behind it on the
     * lock and slept there (4 connections: a third of the posting threads' CPU in the lock's
     * futex calls). o->ringing keeps the bell mapped until the ring is done (disconnect). */
    deck_bell_t *bell = NULL;
    if (!rc && !rung) {
        bell = sci_mbox_bell(o->seg.addr);
        __atomic_fetch_add(&o->ringing, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&o->lock);
    if (bell) {
        ring_bell(bell, key);
        __atomic_fetch_sub(&o->ringing, 1, __ATOMIC_RELEASE);
    }
    return rc;
}
