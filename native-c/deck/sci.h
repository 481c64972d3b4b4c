/*
 * Internals of DECK's sci transport (sci_*.c): the segments of deck.md "DECK/SCI" laid out in
 * 64-byte lines over the segment layer (seg.h), and the three write-only protocols.
 *
 * Write-only discipline: every value a party polls lives in its own segment and is written by
 * the other side (a remote read is ~10x slower on SCI). Receivers poll their mailbox segment;
 * senders poll the flow-control lines of their own control segment.
 *
 * Start is not collective (like tcp): deck_init exports this process's segments and returns;
 * a peer's control segment is mapped the first time it is needed (sci_ctl_attach): by a lookup
 * (one look, clone retries), a post (bounded by DECK_CLONE_TIMEOUT_MS), a barrier (as long as
 * barriers wait), a receiver on its first message from a sender (to write its flow lines), a
 * destroy (to tell the peers that said hello). Mapping a peer's control segment writes `hello`
 * into it, so the peer knows whom to tell when one of its mailboxes goes away.
 *
 * Segments of a process (ids are node-unique):
 *   id 0  control segment: [bell line][identity line][barrier: release word + N arrive words]
 *                          [hello: N words][name table: M entries of 128 B][flow table: N x M lines]
 *                          [mark table: N x M entries of 8 B, rounded to lines]
 *   id 1  message segment: DECK_MSEG_SIZE bytes of big message buffers (sci_mseg.c)
 *   id 2+ one mailbox segment per deck_mbox_create (a counter, never reused by the process):
 *         [bell line][senders: N bits, rounded to lines][protocol-3 signals: N bytes, rounded]
 *         N x { protocol-1 ring 64 x 64 B | owner line |
 *               protocol-3 request line | protocol-2 buffer of DECK_MEDBUF_SIZE }
 *
 * Segment names start with a token (seg.h): a static run's, derived from the run secret; a
 * dynamic process's own, random, read from its claim file by a peer that maps its control
 * segment, then from that segment's identity line for its other segments.
 *
 * Dynamic runs (sci_dynamic.c, used by the auto transport for peers on the same host) have no
 * N: every process takes the first free host-local node number below SCI_DYN_NODES, so a
 * number is reused once its process has died. Each process therefore carries a random nonce
 * (its identity line); a sender binding to a mailbox clears its area there and writes its nonce
 * as the area's owner, and a receiver that finds a new owner in an area starts that sender's
 * state afresh and maps the new process's control segment (sci_peer_renew). Mappings of a
 * process replaced that way stay mapped until deck_done (other threads may still hold them).
 * The senders bitmap, set by a sender when it binds, lets a receiver look only at the areas
 * in use instead of all N.
 * Deviations from the 1.0 layout, for names up to DECK_MBOX_NAME_MAX and threads: a name entry
 * is two lines (128 B), and the flow-control areas of protocols 1, 2 and msg_address of
 * protocol 3 share one line per (receiver node, mailbox), so concurrent protocol-3 sends to
 * different mailboxes never share a msg_address. The receiver writes that line on every
 * protocol-1 take and once per protocol-2 round; a sender reads it only when it must wait (a
 * full ring, a wrap, a window), so the line stays in the receiver's cache instead of crossing
 * to the sender and back on every message. Protocol 2 has no control word: the header line
 * in front of a body is stamped last and polled (sci_p2_header_t). For the
 * lazy start, the name table is not
 * replicated: it holds only the process's own mailboxes, and a lookup (rare, never on the hot
 * path) reads the owner's table remotely; what a sender polls stays in its own memory: the
 * receiver marks a destroyed mailbox in the `gone` word of the sender's mark entry, which every
 * post reads: it is written only when a mailbox goes, so it stays shared in the sender's cache.
 */
#ifndef DECK_SCI_H
#define DECK_SCI_H

#include <pthread.h>
#include <stdint.h>
#include "seg.h"
#include "transport.h"

#define SCI_MAX_MBOX   256         /* M: mailboxes one process has at a time (one per Aldeia socket) */
#define SCI_MAX_NODES  256         /* one host: the control segment grows with N x M */
#define SCI_DYN_NODES  64          /* host-local node numbers of dynamic processes */
#define SCI_P1_SLOTS   64
#define SCI_P1_MAX     62          /* protocol 1 carries 0..62 bytes */
#define SCI_P3_DONE    0xffu       /* the -1 of a protocol-3 signal */
#define SCI_SEG_CTL    0
#define SCI_SEG_MSEG   1
#define SCI_SEG_MBOX0  2
#define SCI_CHECK_MS   100         /* how often a blocked side looks whether its peer still lives */

/* One name table entry, written by the mailbox's creator into its own control segment.
 * `index` is written last (0 = free), so a reader that sees it unchanged around its copy of
 * the other fields has a consistent entry. */
typedef struct sci_name {
    char     name[DECK_MBOX_NAME_MAX];
    int32_t  node;
    int32_t  seg_id;
    int32_t  index;
    uint8_t  pad[2 * DECK_SEG_LINE - DECK_MBOX_NAME_MAX - 12];
} sci_name_t;

/* Flow control, one line per (receiver node, mailbox slot) in the SENDER's control segment,
 * written by the receiver; the sender clears it when it binds to a new mailbox of that slot,
 * before it reads the mailbox's name entry (the receiver writes it only after that). */
typedef struct sci_flow {
    uint32_t p1_read;              /* protocol-1 packets consumed (a counter) */
    uint32_t p3_tag;               /* protocol-3 window number; written after p3_off/p3_len */
    uint64_t p2_pos;               /* protocol 2: round << 32, written as the receiver wraps */
    uint64_t p3_off;               /* msg_address: window offset in the receiver's message segment */
    uint64_t p3_len;               /* window length */
    uint8_t  pad[DECK_SEG_LINE - 32];
} sci_flow_t;

/* The receiver's marks for the same (receiver node, mailbox slot), beside the flow table in the
 * SENDER's control segment, eight entries to a line: written only when a mailbox goes, read on
 * every post. Cleared by the sender with its flow line. */
typedef struct sci_mark {
    uint32_t gone;                 /* nonzero (an index): the mailbox bound to was destroyed */
    uint32_t refused;              /* the same index: ... because it found an impossible value */
} sci_mark_t;

/*
 * Protocol-2 header line, at the sender's cursor in its protocol-2 buffer; the body starts in
 * the line itself and goes on in the lines after it:
 *
 *     cursor  +0       +8        +12       +16                                  +64
 *             | stamp  | datalen | (zero)  | body[0..48)                         |
 *     +64     | body[48..datalen), rounded up to whole lines ...                 |
 *
 * The stamp, seq << 32 | a tag of the sender's nonce (sci_p2_stamp), is stored last (release):
 * it is what the receiver polls at its cursor, so a message that shows is whole and a small one
 * is one or two lines to move between the CPUs. DECK 1.0 polled a separate control word
 * {next_msg, round} and read a header line and the body after it: a 64-byte message crossed in
 * four lines, two of them just to say it was there. A stamp left at that place by an earlier round
 * (an older seq) or an earlier sender of this node number (another tag; claim_area clears the
 * first line) is not the message awaited, so it is not taken.
 *
 * Wrap-around: a round ends after the message that leaves less room than the largest message
 * takes (sci_p2_round_over); the next protocol-2 message goes to the start of the buffer, in
 * the next round, once the receiver has taken everything of this one. The sender says so as it
 * posts that last message, before it rings: a wrap line behind it, stamped with the seq that
 * follows (datalen SCI_P2_WRAP), or nothing when less than a line is left. The receiver, taking
 * that message, wraps at once (it looks for the wrap line there and then), and only then
 * writes to the sender's flow line (sci_flow_t.p2_pos), which the sender waits for: so a stream
 * keeps flowing across the wrap while the receiver's application takes the round's last
 * message. A wrap line found later, by a look, is taken then.
 */
#define SCI_P2_INLINE  48u         /* body bytes in the header line */
#define SCI_P2_WRAP    UINT32_MAX  /* datalen of a wrap line: the message stamped goes at 0 */
typedef struct sci_p2_header {
    uint64_t stamp;
    uint32_t datalen;
    uint32_t zero;
    uint8_t  body[SCI_P2_INLINE];
} sci_p2_header_t;
_Static_assert(sizeof(sci_p2_header_t) == DECK_SEG_LINE, "a protocol-2 header is one line");

/* The stamp of message `seq` of the sender whose nonce is `owner`: its tag is never 0, so a
 * cleared line shows no message. */
static inline uint64_t sci_p2_stamp(uint32_t seq, uint64_t owner)
{
    return (uint64_t)seq << 32 | ((uint32_t)(owner ^ owner >> 32) | 1u);
}

/* The protocol-2 buffer taken by a message of len bytes: its header line and the lines of the
 * rest of its body. */
static inline size_t sci_p2_need(size_t len)
{
    return DECK_SEG_LINE + (len > SCI_P2_INLINE ? deck_seg_roundup(len - SCI_P2_INLINE) : 0);
}

/* Whether a round ends at cursor: the largest message may not fit in what is left. Sender and
 * receiver ask the same (their DECK_MSG_BUF_LIMIT agree in a run; if not, a wrap line is only
 * found a look later). */
static inline int sci_p2_round_over(size_t cursor, size_t medbuf, size_t buf_limit)
{
    return medbuf - cursor < sci_p2_need(buf_limit);
}

/* Protocol-3 request line: what the signal byte asks for. `filled` acknowledges a window that
 * is not the last (chunked fallback); the last one is acknowledged by the -1 signal. */
typedef struct sci_p3_request {
    uint32_t seq;
    uint32_t filled;
    uint64_t size;
    uint8_t  pad[DECK_SEG_LINE - 16];
} sci_p3_request_t;

/* Who owns a control segment: written once by its owner before the segment is available. */
typedef struct sci_ident {
    uint64_t nonce;                /* random, nonzero: tells apart processes of one node number */
    int32_t  deck_id;
    char     token[DECK_SEG_TOKEN_MAX];  /* what the owner's segment names start with */
    uint8_t  pad[DECK_SEG_LINE - 12 - DECK_SEG_TOKEN_MAX];
} sci_ident_t;

_Static_assert(sizeof(sci_name_t) == 2 * DECK_SEG_LINE, "a name entry is two lines");
_Static_assert(sizeof(sci_ident_t) == DECK_SEG_LINE, "the identity is one line");
_Static_assert(sizeof(sci_flow_t) == DECK_SEG_LINE, "a flow entry is one line");
_Static_assert(DECK_SEG_LINE % sizeof(sci_mark_t) == 0, "mark entries do not straddle lines");

typedef struct sci_config {
    size_t buf_limit;              /* DECK_MSG_BUF_LIMIT: protocol 2 up to here, 3 above */
    size_t medbuf;                 /* DECK_MEDBUF_SIZE: protocol-2 buffer per sender */
    size_t mseg;                   /* DECK_MSEG_SIZE: message segment */
    long   spin_us;                /* DECK_SPIN_US: polling before blocking; -1 polls only */
    int    connect_ms;             /* bound on waiting for a peer's segment */
} sci_config_t;

/* The running transport (sci_transport.c). */
typedef struct sci_state {
    int           self, n;
    uint64_t      nonce;           /* this process's identity nonce */
    char          token[DECK_SEG_TOKEN_MAX];  /* this process's segment names' token (static: the run's) */
    int           dynamic;         /* node numbers are claimed (sci_dynamic.c), tokens per process */
    deck_seg_t    claim;           /* dynamic: this process's claim of its node number */
    sci_config_t  cfg;
    deck_seg_t    ctl, mseg;       /* ours */
    deck_seg_t   *peer_ctl;        /* [n], [self] aliases ctl; valid once ctl_ready[node] */
    int          *ctl_ready;       /* [n], set (release) once peer_ctl[node] is mapped */
    uint64_t     *peer_nonce;      /* [n], the nonce of the process peer_ctl[node] maps */
    deck_seg_t   *peer_mseg;       /* [n], attached on first protocol-3 send */
    deck_seg_t   *retired;         /* mappings of replaced processes, unmapped at deck_done */
    int           nretired, cap_retired;
    int           next_seg_id;
    uint32_t      barrier_epoch;
    pthread_mutex_t lock;          /* peer_mseg, the in/out tables' changes, a destroy's wait */
    pthread_cond_t  idle;          /* a destroyed mailbox lost its last retriever */
    int            *dead;          /* [n], set once a node is seen dead (never cleared) */
    struct sci_in  *in[SCI_MAX_MBOX];
    struct sci_out **out;          /* [n * M], allocated on first post; read without the lock */
    /* Dynamic runs (set by auto): whether DECK id `deck_id` is reached through sci, and as
     * which node and process (nonce); NULL in a static run, where a DECK id is the node. */
    int           (*sender_of)(int deck_id, int *node, uint64_t *nonce);
    /* The reverse, for deck_msg_t.src: the DECK id introduced as `node` and process `nonce`,
     * -1 if none; NULL in a static run, where the node is the id. */
    int           (*deck_id_of)(int node, uint64_t nonce);
} sci_state_t;

extern sci_state_t sci;

/* ---- layout of the control and mailbox segments (sci_layout.c) ---- */
deck_bell_t *sci_ctl_bell(int node);
sci_ident_t *sci_ctl_ident(int node);
uint32_t    *sci_ctl_release(int node);
uint32_t    *sci_ctl_arrive(int node, int from);
uint32_t    *sci_ctl_hello(int node, int from);
sci_name_t  *sci_name_at(int owner, int slot);
sci_flow_t  *sci_flow_at(int ctl_node, int receiver, int slot);
sci_mark_t  *sci_mark_at(int ctl_node, int receiver, int slot);
size_t       sci_ctl_size(void);
size_t       sci_mbox_seg_size(void);
deck_bell_t *sci_mbox_bell(void *mbox_seg);
uint64_t    *sci_mbox_senders(void *mbox_seg);     /* N bits, one per sender that bound */
uint8_t     *sci_mbox_signal(void *mbox_seg, int sender);
uint8_t     *sci_mbox_ring(void *mbox_seg, int sender);
uint64_t    *sci_mbox_owner(void *mbox_seg, int sender);    /* the bound sender's nonce, a line */
sci_p3_request_t *sci_mbox_request(void *mbox_seg, int sender);
uint8_t     *sci_mbox_medbuf(void *mbox_seg, int sender);
/* ---- peers (sci_transport.c) ---- */
/* Maps node's control segment once (waiting up to timeout_ms, 0: one look, for it to appear)
 * and says hello in it. DECK_OK; DECK_ENOTFOUND (not there yet, or left), DECK_EPEER (died). */
int          sci_ctl_attach(int node, int timeout_ms);
/* Dynamic runs: node now belongs to the process with `nonce`. When the mapped control
 * segment is another process's, retires it (and the message segment) and maps the new one;
 * DECK_OK once node's control segment carries that nonce, DECK_ENOTFOUND when it does not. */
int          sci_peer_renew(int node, uint64_t nonce);
/* A consistent copy of entry `slot` of the owner's (mapped) name table; 0 when free. */
int          sci_name_read(int owner, int slot, sci_name_t *out);
/* Looks at the node's owner record (a /proc read): slow, for blocked sides only. A node whose
 * control segment is not there (not started yet) counts as alive, like an unconnected tcp peer. */
int          sci_node_alive(int node);
/* 1 when the node was already seen dead: cheap, for every post. */
int          sci_node_known_dead(int node);
int          sci_mseg_attach(int node, deck_seg_t *seg);    /* a copy of the mapping */

/* ---- waiting: poll DECK_SPIN_US, then block on a doorbell (sci_wait.c) ---- */
typedef struct sci_waiter {
    deck_bell_t    *bell;
    int             armed, forever, once, polls;
    int             spun;          /* the polling window (spin_end) is over */
    int             yielding;      /* the last ringer ran on this CPU: poll with sched_yield */
    int             deck_ids;      /* the peer is a DECK id (deck_core_peer_gone), not a node here */
    uint32_t        seen;
    struct timespec spin_end, deadline, next_check;
} sci_waiter_t;

/* timeout_ms < 0: no bound; 0: the first sci_wait_next already times out; DECK_POLL: times out
 * when the polling window (DECK_SPIN_US) is over, never blocks. */
void sci_wait_start(sci_waiter_t *w, deck_bell_t *bell, int timeout_ms);
/* Call after a check found nothing; then check again. DECK_OK, DECK_ETIMEDOUT, or DECK_EPEER
 * when `peer` (>= 0) was found dead (looked at every SCI_CHECK_MS). */
int  sci_wait_next(sci_waiter_t *w, int peer);
void sci_wait_end(sci_waiter_t *w);

/* ---- message segment allocator (sci_mseg.c) ---- */
void  sci_mseg_init(void);
void *sci_msg_alloc(size_t size);       /* transport hook: NULL below the limit or when full */
int   sci_msg_free(void *buf);          /* transport hook */
void *sci_mseg_alloc(size_t size);
void  sci_mseg_free(void *buf);
int   sci_mseg_offset(const void *buf, size_t len, uint64_t *off);   /* 1 inside the segment */

/* ---- starting (sci_transport.c, sci_dynamic.c) ---- */
int  sci_init_dynamic(int deck_id);
/* Shared by both starts once the node number is known: tables, message segment, config. */
int  sci_start_tables(int self, int n);
/* Writes the identity line and makes the (created) control segment available. */
int  sci_publish_ctl(int deck_id);
/* The token the segments of mapped node `node` are named with, from its identity line; DECK_OK,
 * or DECK_EPROTO when the line holds no valid token (a corrupted segment). */
int  sci_peer_token(int node, char *token, size_t len);
void sci_release_all(void);
/* "<boot id>.<node>.<nonce hex>": what a dynamic peer on this host needs to reach us. */
int  sci_dyn_contact(char *buf, size_t len);
const char *sci_boot_id(void);          /* this host's, read by sci_init_dynamic */

/* ---- protocols (sci_send.c, sci_recv.c) ---- */
/* Posts the len bytes of iov[0..cnt) (transport.h), whose ring is keyed (key >= 0,
 * deck_bell_ring_key); key < 0: a plain ring. */
int  sci_postv_keyed(int node, int index, const struct iovec *iov, int cnt, size_t len, int key);
/* Mailbox `index`'s doorbell (NULL when it has none here), for keyed waits (deck_mbox_key_*). */
deck_bell_t *sci_mbox_bell_of(int index);
int  sci_mbox_bell_read(int index, uint32_t *value);
void sci_mbox_key_ring(int index, int key);
/* deck_mbox_key_wait on mailbox `index`'s doorbell (sci_wait.c). */
int  sci_mbox_key_wait(int index, int key, uint32_t seen, int timeout_ms);
int  sci_mbox_key_poller(int index, int key);
/* deck_transport_t.post_hint: DECK_MSG_BUF_LIMIT, protocol 2's bound. */
unsigned long sci_post_hint(int node);
void sci_out_done(void);
void sci_mbox_ring_index(int index);    /* wakes the (plain) retrievers of mailbox `index` */
int  sci_mbox_created(int index, const char *name);
void sci_mbox_destroyed(int index);
int  sci_retrv(int index, void *entry, deck_msg_t *msg, int timeout_ms);
int  sci_retrv_apply(int index, void *entry, deck_msg_t *scratch, int timeout_ms, deck_msg_fn fn, void *arg);
/* The DECK id of the process `nonce` that sends as node `node` (deck_msg_t.src); -1 if unknown. */
int  sci_deck_id_of(int node, uint64_t nonce);
void sci_in_done(void);
/* Mailbox `index`'s segment (NULL: none): its doorbell, and fuzz/fuzz_sci_mailbox.c and tests. */
void *sci_mbox_segment_of(int index);

#endif
