/*
 * MicroVAPI internals shared by its files (see vapi.h for the public contract).
 *
 * (vapi_common.h: errors and the handle table, shared with the fabric library)
 *   config.c    the "microvapi:key=value,..." init string
 *   hca.c       HCA open/release (DECK bring-up, reference counted), port query
 *   pd_mr.c     protection domains and memory regions (no DECK meaning)
 *   cq.c        completion queues
 *   wr_queue.c  growable FIFO of work requests
 *   wire.c      the message on the wire: a head naming both queue pairs and the window, then
 *               records [int length][length bytes] (consecutive sends coalesced)
 *   engine.c    the process's mailbox, the receive turn and thread, start and stop
 *   engine_table.c, engine_send.c, engine_peers.c  the queue pair table, the send thread, the
 *               peer processes and their liveness (engine.h: the engine's shared state)
 *   qp.c        queue pairs: create, connect (modify), destroy, fail
 *   qp_post.c   posting send and receive requests
 *   qp_send.c / qp_recv.c  the two directions of a queue pair and their window (flow control)
 */
#ifndef MV_INTERNAL_H
#define MV_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "deck.h"
#include "vapi.h"
#include "vapi_common.h"

/* Nanoseconds on CLOCK_MONOTONIC_COARSE: for times kept per message and compared in seconds
 * (when a peer was last heard from); a few ns to read where vapi_now_ns costs 20-40 ns in a
 * virtual machine. At most a timer tick (1-4 ms) behind vapi_now_ns, never ahead of it. */
static inline uint64_t mv_coarse_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* ---- configuration (config.c) ------------------------------------------------------------ */
#define MV_MTU_DEFAULT 1024u
#define MV_MTU_MAX     1048576u

enum mv_deck_mode { MV_DECK_ENV = 0, MV_DECK_STATIC, MV_DECK_DYNAMIC };

/* Init-string keys handed to DECK as environment variables (config.c, env_keys). */
#define MV_ENV_KEYS 5

struct mv_config {
    uint32_t mtu;
    enum mv_deck_mode mode;   /* MV_DECK_ENV: neither given, deck_init() reads deckrun's env */
    int deck_id;              /* -1 when not given */
    int deck_nodes;           /* -1 when not given */
    char deck_file[256];
    char deck_transport[32];  /* "" when not given */
    char deck_secret_file[512]; /* "" when not given: DECK_SECRET_FILE stays as deckrun set it */
    int  deck_tcp_encryption; /* -1 not given, 0 off, 1 on */
    long env_value[MV_ENV_KEYS];
    unsigned env_given;       /* bit i: env_value[i] was given */
};

VAPI_ret_t mv_config_parse(const char *fn, const char *hca_id, struct mv_config *cfg);
/* Sets DECK_TRANSPORT and the other DECK_* variables the string gave, for deck_init. */
VAPI_ret_t mv_config_export(const char *fn, const struct mv_config *cfg);

/* ---- HCA (hca.c) ------------------------------------------------------------------------- */
struct mv_hca {
    uint32_t mtu;
};

/* ---- completion queues (cq.c) ------------------------------------------------------------ */
struct mv_cq;
struct mv_qp;

VAPI_ret_t mv_cq_new(const char *fn, uint32_t min_entries, struct mv_cq **out);
void mv_cq_free(struct mv_cq *cq);
/* The ring, for the application to read (EVAPI_map_cq); from now on it never moves. */
EVAPI_cq_ring_t *mv_cq_map(struct mv_cq *cq);
/* Makes room for n future completions so that mv_cq_push never needs memory. */
VAPI_ret_t mv_cq_reserve(const char *fn, struct mv_cq *cq, uint32_t n);
void mv_cq_unreserve(struct mv_cq *cq, uint32_t n);
/* Uses one reservation. */
void mv_cq_push(struct mv_cq *cq, const VAPI_wc_desc_t *wc);
uint32_t mv_cq_take(struct mv_cq *cq, uint32_t max, VAPI_wc_desc_t *wcs);
VAPI_ret_t mv_cq_wait(const char *fn, struct mv_cq *cq, uint32_t timeout_usec,
                      VAPI_wc_desc_t *wc);
/* Wakes every waiter: the CQ is being destroyed (closing) or a QP using it went away. */
void mv_cq_wake(struct mv_cq *cq, int closing);
/* The engine's receive turn came free: pollers of cq waiting for it look again. */
void mv_cq_notify(struct mv_cq *cq);
/* A queue pair's receive (or send) queue starts (add 1) or stops (add 0) reporting to cq. */
void mv_cq_bind(struct mv_cq *cq, int receive, int add);
/* The key a poller of cq waits on (engine.c, keyed wake-ups): that of the first receive queue
 * pair reporting to it; messages for its other queue pairs reach it through the dispatcher. */
void mv_cq_key(struct mv_cq *cq, uint32_t qp_num);

/* ---- work-request FIFO (wr_queue.c); the caller provides the locking --------------------- */
struct mv_wrq {
    VAPI_sr_desc_t *ring;
    uint32_t cap, head, count;
};

int mv_wrq_push(struct mv_wrq *q, const VAPI_sr_desc_t *list, uint32_t n); /* 0 or -1 (ENOMEM) */
const VAPI_sr_desc_t *mv_wrq_front(const struct mv_wrq *q);               /* NULL if empty */
const VAPI_sr_desc_t *mv_wrq_at(const struct mv_wrq *q, uint32_t i);     /* NULL past the end */
void mv_wrq_pop(struct mv_wrq *q);
void mv_wrq_free(struct mv_wrq *q);

/* ---- the wire (wire.c) ------------------------------------------------------------------- */
/* Every DECK message between MicroVAPI processes goes to the receiving process's one mailbox
 * (the engine's) and starts with this head; the layout is drawn in wire.c. */
enum mv_wire_kind {
    MV_WIRE_DATA   = 1,   /* records follow; credit is valid */
    MV_WIRE_CREDIT = 2,   /* no records: a window update */
    MV_WIRE_RESET  = 3,   /* no records: the queue pair is gone or aborted (TCP's RST) */
    MV_WIRE_PING   = 4,   /* process to process (queue pairs 0): are you there? */
    MV_WIRE_PONG   = 5    /* the answer */
};
struct mv_wire_head {
    uint32_t dest_qp;     /* the receiving queue pair's qp_num */
    uint32_t src_qp;      /* the sending queue pair's qp_num */
    uint32_t credit;      /* the sender's receive window edge for the receiver's data to it:
                           * it may send until its payload counter reaches this (mod 2^32) */
    uint32_t kind;        /* enum mv_wire_kind */
};
#define MV_WIRE_HEAD ((uint32_t)sizeof(struct mv_wire_head))
/* Bytes a record needs beyond its data: the length header. */
#define MV_WIRE_HEADER ((uint32_t)sizeof(int32_t))
/* Coalescing bounds: records per DECK message, and data bytes of a message of several. With
 * an mtu of 1024 a message carries 64 full blocks: a 1 MiB write is 16 DECK posts. The bytes
 * bound is 64 KiB plus MV_COALESCE_TAIL: a write of a 64 KiB block (the default mtu) and a
 * short tail, as a program's frame header makes it, goes as one message and one system call
 * instead of two (the Java send path posts such a tail with the block before it). The largest
 * message stays within DECK/sci's protocol-2 limit (DeckSciThresholds: 66 560 bytes). That is
 * the least bound: a queue pair whose peer DECK reaches by a route that moves longer messages
 * as one transfer (tcp: a frame, one system call each side) coalesces up to what DECK says
 * (mv_wire_bound of deck_mbox_post_hint), so a stream's 64 KiB blocks go four to a frame. */
#define MV_COALESCE_BLOCKS 64u
#define MV_COALESCE_TAIL   512u
#define MV_COALESCE_BYTES  (65536u + MV_COALESCE_TAIL)

/* Size of the DECK message that holds any message the bounds allow, for this mtu; with
 * MV_MTU_MAX, any message of any queue pair. */
uint32_t mv_wire_capacity(uint32_t mtu);
/* The data bytes a message of several records may carry to a mailbox whose post hint is
 * `hint` (deck_mbox_post_hint): room left for the head and every record's length, never below
 * MV_COALESCE_BYTES, never above MV_MTU_MAX. */
uint32_t mv_wire_bound(unsigned long hint);
/* Whether a record of len bytes may join a message that holds count records of payload bytes
 * under the data bound `bound` (the first record always may). */
int mv_wire_fits(uint32_t count, uint64_t payload, uint32_t len, uint32_t bound);
/* The pieces a data message is posted in (deck_mbox_postv_keyed): the head, then each
 * request's length and its bytes, read in place from the registered memory it names. lens
 * (n entries) holds the lengths; iov takes MV_WIRE_PIECES(n) pieces, the count returned; 0 when
 * n or a length is beyond the wire's bounds. */
#define MV_WIRE_PIECES(n) (1 + 2 * (n))
uint32_t mv_wire_gather(struct iovec *iov, const struct mv_wire_head *head, int32_t *lens,
                        const VAPI_sr_desc_t *list, uint32_t n);
/* Reads the head of a received message; -1 if it has none (a malformed or zero-length one). */
int mv_wire_head(const deck_msg_t *msg, struct mv_wire_head *head);
/* Reads the record at byte *off of buf[0..len) and moves *off past it; -1 if malformed there. */
int mv_wire_next(const char *buf, uint32_t len, uint32_t *off, const void **data, uint32_t *dlen);
/* The data bytes of the records of buf[0..len) (a message after its head); -1 when they do not
 * fill it exactly. 0: records without bytes, an end of stream alone. */
int64_t mv_wire_payload(const char *buf, uint32_t len);

/* ---- the engine (engine.c): what one process's queue pairs share ------------------------- */
/* One DECK mailbox per process ("mv-<deck id>") receives for every queue pair, so a queue
 * pair costs no mailbox, no segment and no thread; two threads per process serve what
 * nobody's own thread does: the receiver drains the mailbox when no reader is in it (and
 * watches the peers' lives), the sender posts what waited for the peer's window. */
struct mv_peer;

VAPI_ret_t mv_engine_open(const char *fn);       /* with each HCA (the first starts it) */
void mv_engine_close(void);                      /* with each HCA (the last stops it) */
/* Registers qp and gives it its qp_num (a table slot with random high bits). */
VAPI_ret_t mv_engine_add_qp(const char *fn, struct mv_qp *qp);
/* Takes qp out of the table and waits until no dispatch uses it. */
void mv_engine_remove_qp(struct mv_qp *qp);
/* The peer process `id`'s mailbox (looked up at that process only, once per process). */
VAPI_ret_t mv_engine_peer(const char *fn, uint32_t id, struct mv_peer **peer);
void mv_engine_peer_put(struct mv_peer *peer);
/* The data bytes one message to peer may carry (mv_wire_bound of DECK's post hint for it). */
uint32_t mv_engine_peer_message_bytes(struct mv_peer *peer);
/* Names qp's peer (process, queue pair, mailbox): from now on its messages reach qp. -1 when
 * that peer was given up meanwhile. */
int mv_engine_connect_qp(struct mv_qp *qp, uint32_t dest_id, uint32_t dest_qp, struct mv_peer *peer);
/* Posts the message made of iov[0..cnt) to peer, its ring keyed for the receiving queue pair
 * dest_qp (mv_key_of); quiet, it wakes only a reader of that queue pair (deck_mbox_postv_quiet). */
int mv_engine_post(struct mv_peer *peer, const struct iovec *iov, uint32_t cnt, uint32_t dest_qp, int quiet);
/* Posts a message that is a head alone (a credit, a reset, a ping, a pong) to peer; DECK's
 * result. */
int mv_engine_post_control(struct mv_peer *peer, uint32_t kind, uint32_t dest_qp, uint32_t src_qp,
                           uint32_t credit);
/* The send thread posts qp's queued sends (their window opened). */
void mv_engine_schedule_send(struct mv_qp *qp);
/* The send thread sends a message of `kind` with no records to process `id` (a reset for its
 * queue pair dest_qp, which talks to none of ours; a ping; a pong). */
void mv_engine_schedule_control(int id, uint32_t kind, uint32_t dest_qp, uint32_t src_qp);

/* Receive progress by a reader's own thread (cq.c): takes the process's receive turn if it is
 * free, retrieves one message with timeout_ms (-1: no limit, 0: only look) and dispatches it.
 * pass_turn: the caller is no blocked poller that looks again at once, so a reader waiting for
 * the turn is told it is free. */
enum mv_progress {
    MV_PROGRESSED,   /* a message was dispatched (maybe to someone else) */
    MV_BUSY,         /* another thread holds the turn: wait for a completion or a notify */
    MV_TIMEOUT       /* nothing arrived in time */
};
enum mv_progress mv_engine_progress(int timeout_ms, int pass_turn);
/* A reader blocks on cq (its poll may progress) / leaves; while readers are there the
 * receive thread keeps out of the mailbox. */
void mv_engine_poller_enter(struct mv_cq *cq);
void mv_engine_poller_leave(struct mv_cq *cq);
/* A reader posted or polled: the receive thread's grace starts again. */
void mv_engine_activity(void);
/* Ends the retrieve of a reader holding the turn (its CQ has news it must see). */
void mv_engine_kick(void);

/* Keyed wake-ups (engine.c; DECK's deck_mbox_key_*): where the mailbox has a doorbell (shared
 * memory), a reader waits for the rings of its queue pair's key instead of inside a retrieve,
 * and the sending process wakes it directly. Nobody sleeps holding the turn: a woken reader
 * drains the mailbox with looks, dispatching what is for others (which rings their keys), and
 * the receive thread waits for the messages whose key nobody waits for. */
int      mv_engine_keyed(void);
uint32_t mv_engine_seen(void);                /* the bell, read before looking at a CQ */
/* Waits for a ring of key (or a plain one) while the bell is still seen, at most timeout_ms. */
void     mv_engine_wait_key(unsigned key, uint32_t seen, int timeout_ms);
void     mv_engine_ring_key(unsigned key);    /* a local ring: a completion for that key's CQ */
void     mv_engine_drain(void);               /* looks and dispatches while the turn is free */
/* One reader at a time, and only one that waits alone, polls the mailbox before it sleeps
 * (2 cores: several pollers would take both). From the take on, and after its release, the
 * doorbell says it looks for key (its messages wake nobody: it takes them, or is back within
 * microseconds) until a thread blocks otherwise. */
int      mv_engine_polling_take(unsigned key);   /* 0 unless this reader waits alone; marks key */
void     mv_engine_reader_enter(void);   /* a reader enters / leaves a keyed wait */
void     mv_engine_reader_leave(void);
void     mv_engine_polling_release(unsigned key);
/* The poller's mark goes, and the receive thread dispatches what came under it: before a
 * thread blocks on something else than its read (mv_engine_other_wait). */
void     mv_engine_unmark(void);
/* The same for a thread that holds no queue pair's lock (a queue pair goes): it dispatches what
 * came under the mark itself rather than wake the receive thread for it. */
void     mv_engine_unmark_here(void);
void     mv_engine_other_wait(int enter);   /* a writer blocks on its CQ (1) / is done (0) */

/* ---- queue pairs (qp.c, qp_send.c, qp_recv.c) -------------------------------------------- */
/* A block received and not yet handed to a receive request: records as on the wire, in chunks
 * allocated when data arrives and freed as it is handed out (buffers grow and shrink as TCP's). */
struct mv_rchunk {
    struct mv_rchunk *next;
    uint32_t len;                  /* bytes of records in data */
    uint32_t off;                  /* records before off are handed out */
    uint32_t cap;
    char     data[];
};

/* One direction of a queue pair: its request FIFO, guarded by lock. */
struct mv_side {
    pthread_mutex_t lock;
    struct mv_wrq   q;             /* requests not yet served */
    uint32_t        max_wr;        /* 0 = unlimited */
    struct mv_cq   *cq;
    VAPI_cq_hndl_t  cq_hndl;
    int             stopping;
    int             busy;          /* send: a thread is posting this QP's messages (the turn) */
    uint32_t        inflight;      /* send: requests taken by the turn holder, not yet reported */
    pthread_cond_t  idle;          /* send: busy fell to 0 (the destroyer waits for it) */
};

struct mv_qp {
    uint32_t        qp_num;        /* slot in the engine's table | random bits << MV_QP_SLOT_BITS */
    uint32_t        mtu;           /* the HCA's: the largest block */
    uint32_t        path_mtu;      /* the largest send accepted, set by modify_qp */
    uint32_t        message_bytes; /* data bytes a message of several sends may carry (mv_wire_bound
                                    * of the peer's route), set by modify_qp before any send */
    uint32_t        state;         /* enum VAPI_qp_state, guarded by sq.lock */
    char            err_text[512]; /* why the QP is in VAPI_ERR (DECK's error included) */
    pthread_mutex_t modify_lock;   /* one modify_qp at a time */
    uint32_t        dest_id;       /* the peer process and its queue pair, once connected */
    uint32_t        dest_qp;
    struct mv_peer *peer;          /* its mailbox; NULL until connected (set once, with release,
                                    * under the engine lock and sq.lock) */
    struct mv_side  sq, rq;
    /* send window, guarded by sq.lock: payload bytes posted, and the edge the peer allows */
    uint32_t        sent, send_edge;
    int             eos_sent;      /* a zero-length send (end of stream) went: an orderly end */
    /* a window the peer announced before this side connected (its connect raced ours) */
    int             early_set;
    uint32_t        early_id, early_qp, early_edge;
    int             send_scheduled;   /* on the engine's send list (engine lock) */
    struct mv_qp   *send_next;        /* engine lock */
    /* receive side, guarded by rq.lock */
    struct mv_rchunk *rx_head, *rx_tail;
    uint32_t        window;        /* bytes the peer may have in flight to us (SO_RCVBUF) */
    uint32_t        received;      /* payload bytes that arrived */
    uint32_t        consumed;      /* payload bytes handed out to receive requests */
    uint32_t        advertised;    /* the edge last told the peer */
    uint32_t        rq_failed_status;  /* once set, every request completes with it */
    uint32_t        pins;          /* dispatches using the QP (engine lock) */
};

/* Bits of qp_num that index the engine's table; the rest are random, so a stale or guessed
 * number rarely names a live queue pair. */
#define MV_QP_SLOT_BITS 20
#define MV_QP_SLOTS (1u << MV_QP_SLOT_BITS)
/* The wake-up key of queue pair qp_num (its table slot, folded onto DECK's keys). */
static inline unsigned mv_key_of(uint32_t qp_num) { return (qp_num & (MV_QP_SLOTS - 1)) % DECK_MBOX_KEYS; }
/* The window every queue pair starts with before its peer's first credit: both ends assume it. */
#define MV_WINDOW_INITIAL (64u * 1024u)
/* SO_RCVBUF with nothing configured: aldeia.conf's receive_window default. Above loopback TCP's
 * ~4 MiB with the send ring's 1 MiB, and above what loopback's socket buffers hold: at 4 MiB a
 * loopback stream ran into the window (not the socket) and its credits came while a sender of
 * this process was in sendmsg, so reading them slept on the socket's lock and the sender paid
 * the wake-up (14% of the writer's time, perf); at 8 MiB the socket paced the writer, as it
 * paces the JDK's (0.5%). Over veth that still happens in some runs. Streams of 64 KiB writes
 * over loopback tcp, medians of four rounds: 3.6 -> 4.5 GB/s free, 4.8 -> 4.9 pinned; over
 * shared memory (two rounds) 15-23 -> 25-26 GB/s. */
#define MV_WINDOW_DEFAULT (8u * 1024u * 1024u)
#define MV_WINDOW_MAX     (1u << 30)

/* Whether the poster of a send list posts all of it (within the window) on a route whose
 * messages may be `message_bytes` long (mv_wire_bound of its post hint): see qp_send.c. */
int mv_whole_writes(uint32_t message_bytes);
/* Posts list[0..n) as coalesced messages as far as the window allows, in the caller's thread;
 * the caller took the send turn (sq.busy) and counted the requests in sq.inflight. Reports
 * them and hands the turn back; the rest goes to the engine's send thread, or, on a route of
 * whole writes (mv_whole_writes), out from this thread too (mv_send_queued). */
void mv_send_inline(struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n);
/* A credit due, then what is queued while the window allows: the engine's send thread, or a
 * poster that posts the rest of its write itself. */
void mv_send_queued(struct mv_qp *qp);
/* Whether the first queued send may be posted now: no turn holder, not stopping, and the
 * window open for it (sq.lock held). */
int mv_send_ready_locked(const struct mv_qp *qp);
/* How many of list[0..n) one message carries within the window: 0 when the window is shut. */
uint32_t mv_send_batch(const struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n);
/* A message for qp arrived (the engine checked its head and source): take its credit and its
 * records. Never posts: the dispatcher may hold the receive turn. */
void mv_qp_dispatch(struct mv_qp *qp, const struct mv_wire_head *head, const deck_msg_t *msg);
/* Fails the queue pair: requests queued on both sides and every later one complete with
 * status; the QP moves to ERR with the reason. */
void mv_qp_fail(struct mv_qp *qp, uint32_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Receive requests were queued (rq.lock held): hand out what is there. */
void mv_rq_serve_locked(struct mv_qp *qp);
/* After post_rr (no lock held): tells the peer how far it may send now, if that moved enough. */
void mv_rq_credit(struct mv_qp *qp);
/* Frees what was received and not handed out (rq.lock held). */
void mv_rq_free_locked(struct mv_qp *qp);
/* Completes every request still queued on side with status (flush or failure); lock held. */
void mv_side_fail_all(struct mv_side *side, uint32_t opcode, uint32_t status);
const char *mv_qp_state_name(uint32_t state);
/* Moves the QP to VAPI_ERR with the reason (the first reason wins); sq.lock held. */
void mv_qp_set_error_locked(struct mv_qp *qp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* MV_INTERNAL_H */
