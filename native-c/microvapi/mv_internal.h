/*
 * MicroVAPI internals shared by its files (see vapi.h for the public contract).
 *
 *   error.c     thread-local EVAPI_last_error text, VAPI_strerror
 *   registry.c  handle table: handle -> object, pinning, parent/child links
 *   config.c    the "microvapi:key=value,..." init string
 *   hca.c       HCA open/release (DECK bring-up, reference counted), port query
 *   pd_mr.c     protection domains and memory regions (no DECK meaning)
 *   cq.c        completion queues
 *   wr_queue.c  growable FIFO of work requests
 *   wire.c      the message on the wire: records [int length][length bytes], several
 *               consecutive send requests coalesced into one DECK message
 *   qp.c        queue pairs: create, connect (modify), destroy
 *   qp_post.c   posting send and receive requests
 *   qp_send.c / qp_recv.c  the two directions of a queue pair: progress in the caller's
 *               thread when nothing is queued ahead, daemons for the backlog
 */
#ifndef MV_INTERNAL_H
#define MV_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "deck.h"
#include "vapi.h"

/* ---- errors (error.c) -------------------------------------------------------------------- */
/* Records "fn: text" as this thread's last error and returns ret, so failures read
 * `return mv_fail(VAPI_EINVAL_PARAM, fn, "...", ...);`. */
VAPI_ret_t mv_fail(VAPI_ret_t ret, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Nanoseconds on the monotonic clock. */
static inline uint64_t mv_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* ---- handles (registry.c) ---------------------------------------------------------------- */
enum mv_kind { MV_HCA = 1, MV_PD, MV_MR, MV_CQ, MV_QP };

/* New handle for obj, owned by HCA `hca` (0 for an HCA itself); 0 if out of memory. */
uint64_t mv_reg_add(enum mv_kind kind, uint64_t hca, void *obj);
/* Looks up live handle h of `kind` belonging to `hca` and pins it (it cannot be removed until
 * mv_reg_put). Fails with the error code of that kind of handle. */
VAPI_ret_t mv_reg_get(const char *fn, uint64_t hca, uint64_t h, enum mv_kind kind, void **obj);
void mv_reg_put(uint64_t h);
/* A child object (MR of a PD, QP of a CQ, anything of an HCA) keeps its parent alive: the parent
 * cannot be retired while linked. Fails if the parent is retired. */
VAPI_ret_t mv_reg_link(const char *fn, uint64_t parent, enum mv_kind kind);
void mv_reg_unlink(uint64_t parent);
/* First step of destroying pinned handle h: refuses if children are linked or another thread
 * is already destroying it; afterwards lookups fail. */
VAPI_ret_t mv_reg_retire(const char *fn, uint64_t h, enum mv_kind kind);
/* Second step: waits until the caller holds the only pin, then frees the handle. */
void mv_reg_remove(uint64_t h);

/* ---- configuration (config.c) ------------------------------------------------------------ */
#define MV_MTU_DEFAULT 1024u
#define MV_MTU_MAX     1048576u

enum mv_deck_mode { MV_DECK_ENV = 0, MV_DECK_STATIC, MV_DECK_DYNAMIC };

/* Init-string keys handed to DECK as environment variables (config.c, env_keys). */
#define MV_ENV_KEYS 4

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
/* A QP's send or receive queue reports to cq. Pollers progress a receive queue themselves
 * when it is the only queue the CQ serves. Unbinding waits until no poller uses the QP. */
void mv_cq_bind(struct mv_cq *cq, struct mv_qp *qp, int receive);
void mv_cq_unbind(struct mv_cq *cq, struct mv_qp *qp, int receive);
/* The receive progress of a bound QP changed (turn released, request posted, stopping):
 * pollers waiting for the turn look again. */
void mv_cq_notify(struct mv_cq *cq);

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
/* Bytes a record needs beyond its data: the length header. */
#define MV_WIRE_HEADER ((uint32_t)sizeof(int32_t))
/* Coalescing bounds: records per DECK message, and data bytes of a message of several. With
 * the default mtu of 1024 a message carries 64 full blocks: a 1 MiB write is 16 DECK posts. */
#define MV_COALESCE_BLOCKS 64u
#define MV_COALESCE_BYTES  65536u

/* Size of the DECK message that holds any message the bounds allow, for this mtu. */
uint32_t mv_wire_capacity(uint32_t mtu);
/* Whether a record of len bytes may join a message that holds count records of payload bytes
 * (the first record always may). */
int mv_wire_fits(uint32_t count, uint64_t payload, uint32_t len);
/* How many requests of list[0..n) one message carries (at least 1 when n > 0). */
uint32_t mv_wire_batch(const VAPI_sr_desc_t *list, uint32_t n);
/* Appends the record [len][data] to msg (start with deck_msg_clear); -1 if it does not fit. */
int mv_wire_append(deck_msg_t *msg, const void *data, uint32_t len);
/* Reads the record at byte *off of a received message and moves *off past it; -1 if the
 * message is malformed there. */
int mv_wire_next(const deck_msg_t *msg, uint32_t *off, const void **data, uint32_t *len);

/* ---- queue pairs (qp.c, qp_send.c, qp_recv.c) -------------------------------------------- */
/* One direction of a queue pair: its request FIFO and "the turn", guarded by lock, and its
 * daemon. Whoever holds the turn (busy) is the only thread in DECK for this direction, so
 * requests are served strictly in order whether the daemon or a caller does the work. */
struct mv_side {
    pthread_mutex_t lock;
    pthread_cond_t  work;          /* wakes the daemon (and the destroyer waiting for the turn) */
    struct mv_wrq   q;             /* requests not yet taken by a turn holder */
    uint32_t        max_wr;        /* 0 = unlimited */
    struct mv_cq   *cq;
    VAPI_cq_hndl_t  cq_hndl;
    int             stopping;
    int             running;       /* the daemon thread was started */
    pthread_t       daemon;
    deck_msg_t      msg;           /* the turn holder's message, mv_wire_capacity(mtu) bytes */
    int             busy;          /* the turn is held */
    uint32_t        inflight;      /* send: requests taken by the turn holder, not yet reported */
    int             daemon_idle;   /* the daemon sleeps without a timeout: signal work to wake it */
    /* receive side only */
    int             busy_daemon;   /* the turn holder is the daemon */
    uint32_t        pollers;       /* blocking pollers that progress this side themselves */
    int             kick_pending;  /* a wake-up token is in the mailbox */
    uint64_t        activity_ns;   /* the reader's last poll or post (the daemon's grace) */
    uint32_t        msg_off;       /* msg's records from here on are not handed out yet
                                    * (msg_off < msg.len: a message is pending) */
};

struct mv_qp {
    uint32_t        qp_num;
    uint32_t        mtu;           /* the HCA's: size of every message buffer */
    uint32_t        path_mtu;      /* the largest send accepted, set by modify_qp */
    uint32_t        state;         /* enum VAPI_qp_state, guarded by sq.lock */
    char            err_text[512]; /* why the QP is in VAPI_ERR (DECK's error included) */
    pthread_mutex_t modify_lock;   /* one modify_qp at a time */
    deck_mbox_t     recv_mb;       /* created: "mb-<qp_num>-<deck id>" */
    deck_mbox_t     send_mb;       /* cloned from the peer at modify_qp */
    int             recv_mb_open, send_mb_open;
    struct mv_side  sq, rq;
    /* receive side failure, guarded by rq.lock: once set, every request completes with it */
    uint32_t        rq_failed_status;
    deck_mbox_t     self_mb;       /* cloned from recv_mb: carries wake-up tokens */
    int             self_mb_open;
    deck_msg_t      token;         /* zero-length: a wake-up (real messages carry a header) */
    int             cq_bound;
    struct mv_qp   *cq_next;       /* the receive CQ's list of QPs; guarded by that CQ's lock */
    uint32_t        cq_refs;       /* pollers using the QP through that CQ; same lock */
};

void *mv_send_daemon(void *qp);
void *mv_recv_daemon(void *qp);
/* Posts list[0..n) (one message's worth: mv_wire_batch) to DECK in the caller's thread; the
 * caller took the send turn (sq.busy) and counted the requests in sq.inflight. Reports them
 * and hands the turn back. */
void mv_send_inline(struct mv_qp *qp, const VAPI_sr_desc_t *list, uint32_t n);

/* Receive progress by pollers (qp_recv.c). A step takes the turn if it is free and a request
 * is posted, retrieves with timeout_ms (-1: no limit, 0: only look) and completes it. */
enum mv_rq_step {
    MV_RQ_DONE,      /* completions were pushed */
    MV_RQ_AGAIN,     /* a wake-up token was taken: step again */
    MV_RQ_IDLE,      /* nothing posted, or someone else holds the turn */
    MV_RQ_TIMEOUT,   /* nothing arrived in time */
    MV_RQ_GONE       /* the QP is being destroyed */
};
enum mv_rq_step mv_rq_step(struct mv_qp *qp, int timeout_ms);
/* A blocking poller arrives / leaves: while one is there the daemon keeps out. */
void mv_rq_poller_enter(struct mv_qp *qp);
void mv_rq_poller_leave(struct mv_qp *qp);
/* Receive requests were queued (rq.lock held): the reader is active. */
void mv_rq_posted_locked(struct mv_qp *qp);
/* Destroying: no new turn; ends the retrieve in progress and waits until the turn is free. */
void mv_rq_stop(struct mv_qp *qp);
/* Wakes the side's daemon if it sleeps without a timeout (lock held). */
void mv_side_wake_locked(struct mv_side *side);
/* Completes every request still queued on side with status (flush or failure); lock held. */
void mv_side_fail_all(struct mv_side *side, uint32_t opcode, uint32_t status);
const char *mv_qp_state_name(uint32_t state);
/* Moves the QP to VAPI_ERR with the reason (the first reason wins); sq.lock held. */
void mv_qp_set_error_locked(struct mv_qp *qp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* MV_INTERNAL_H */
