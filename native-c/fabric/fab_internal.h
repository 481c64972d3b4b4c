/*
 * libaldeiafabric: vapi.h over libfabric (OpenFabrics Interfaces), after shared/spec/fabric.md.
 *
 *   fab_config.c    the "fabric:key=value,..." init string
 *   fab_hca.c       HCA = fabric + domain of the chosen provider; port query; protection domains
 *   fab_mr.c        memory regions (fi_mr_reg) and the lkey table posts are checked against
 *   fab_cq.c        VAPI completion queues: rings in this library, filled by fab_progress.c
 *   fab_qp.c        queue pairs: one RDM endpoint each, its address, connect, destroy
 *   fab_post.c      VAPI_post_sr/rr and their lists
 *   fab_progress.c  reading an endpoint's libfabric CQ: completions in posting order, credits
 *   fab_wait.c      sleeping until a queue pair's libfabric CQ has something (never a spin)
 *   fab_keeper.c    the HCA's keeper thread: keepalives and peer liveness, progress of idle
 *                   queue pairs
 *   fab_reap.c      removing what a dead peer's shm endpoint left in /dev/shm; whether shm
 *                   mapped a peer
 *   fab_rescue.c    releasing the spin locks a killed shm peer held (fab_shm_region.h)
 *   fab_spill.c     the receive window beyond posted receives: the library's spill buffers
 *   fab_signals.c   keeping the process's SIGSEGV and SIGBUS handlers from libfabric's shm
 *   fab_probe.c     whether a tcp peer whose sends are refused still listens (a dead peer)
 *
 * Why one RDM endpoint per queue pair. Reliable datagrams are what every fabric offers
 * (efa, cxi, opx and shm offer nothing else; verbs and tcp through ofi_rxm), a MSG endpoint
 * would rule those out. An endpoint per queue pair, rather than one per process with a tag
 * per queue pair, gives each socket a libfabric CQ of its own: a socket's reader sleeps on its
 * own CQ's wait object, and a message for one socket wakes no thread of another. Its address
 * (fi_getname) is exchanged by the bootstrap (EVAPI_query_qp_address), and its address vector
 * holds the one peer, so a receive names its source (FI_DIRECTED_RECV).
 *
 * What travels between two queue pairs, all tagged messages in one direction ordered by
 * FI_ORDER_SAS (so a socket's blocks arrive in posting order, as on an InfiniBand RC QP):
 *
 *   data    tag = peer's secret                one VAPI send request = one message, 0..mtu
 *                                              bytes (0 bytes: the channel's end of stream)
 *   credit  tag = peer's secret | 1            4 bytes, little-endian: receives the sender of the
 *                                              credit handed to libfabric (mod 2^32)
 *   goodbye tag = peer's secret | 1            8 bytes: a credit, then flags (little-endian),
 *                                              bit 0 set: the sender destroys its queue pair
 *
 * Goodbye. VAPI_destroy_qp sends one (waiting at most FAB_GOODBYE_WAIT_MS for its completion)
 * before it closes the endpoint, so the peer's requests fail at once ("the peer destroyed its
 * queue pair") rather than after peer_timeout: a reader blocked on a socket whose peer closed
 * sees it as on TCP. It goes after everything the queue pair sent (send-after-send order), so
 * what was sent before it arrives first; a peer of an older build, whose credit buffers hold 4
 * bytes, sees a truncated credit and fails as well.
 *
 * Where the provider carries remote CQ data (cq_data_size >= 4: shm, tcp, verbs, efa), every
 * data message also carries that count as its CQ data, so a socket whose peer answers needs no
 * credit messages at all; they go only when data flows one way and the peer's view of the
 * credit has fallen below half of the receives posted (or as a keepalive).
 *
 * The secret is 64 random bits (low bit clear) each queue pair draws at creation and gives
 * out only in its address, which only the bootstrap (authenticated by the pair key) carries:
 * a process that is not the bootstrapped peer reaches no posted receive, neither by address
 * (directed receives) nor by tag.
 *
 * Flow control, as InfiniBand's receiver-not-ready retry keeps a sender from overrunning
 * posted receives: a data message goes out only within the peer's credit (receives it has
 * handed to libfabric); the rest waits in this library's send queue, bounded by max_send_wr,
 * and the writer's ring fills and its write blocks, as on TCP. So a data message never waits
 * in libfabric as unexpected (one that matches no posted receive): libfabric 1.17's ofi_rxm
 * crashes in fi_trecv when a receive matches an unexpected rendezvous message (above its 16 KiB
 * eager limit) whose sender has closed since (the connection's endpoint is NULL by then:
 * libfabric.so.1+0xafe00, fi_readv in rxm_rndv_xfer_read; test_fabric_window). Credit messages
 * may wait unexpected: they are 4 bytes, eager everywhere.
 *
 * Window. max_recv_wr is the receive window in messages, posted or arrived (Aldeia posts 16
 * receives and asks for receive_window / mtu): a reader that reads nothing lets its writer run
 * that far ahead of what it took, as TCP's receive buffer does. What goes beyond the posted
 * receives lands in spill buffers of this library, handed to libfabric like receives (so still
 * nothing is unexpected), and is copied into the application's receives when it posts them
 * (fab_spill.c).
 *
 * Liveness. A queue pair that has sent its peer nothing for a keepalive period sends a credit
 * message (its count unchanged), and one that has heard nothing from its peer for peer_timeout
 * fails with VAPI_REM_ABORT_ERR: a peer that died or hangs shows as an error within seconds,
 * as DECK's peers do, also on providers that report nothing when a peer goes (shm). A peer
 * that is alive but whose application reads nothing still answers: its keeper thread
 * progresses its queue pairs. Over tcp a dead peer's connection resets: the keepalive to it
 * fails at once when it meets the reset, and otherwise libfabric refuses every later send
 * without an error, which the keeper's probe of the peer's address turns into a failure
 * within 2 s (fab_probe.c).
 *
 * Completions. Every send is posted with a completion, and VAPI completions are produced in
 * posting order from the oldest request whose libfabric completion has come, signalled
 * requests only: the channel reuses a send slot once a later signalled request completed,
 * which on libfabric's shm (whose large messages the receiver copies from the sender's
 * memory, completing after later small ones) would otherwise hand out memory still being
 * read. Receives likewise complete in posting order.
 */
#ifndef FAB_INTERNAL_H
#define FAB_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "vapi.h"
#include "vapi_common.h"

/* libfabric's error text for a negative return, "fi_xxx: text (code)" into the caller's fail. */
#define FAB_FAIL(ret, fn, call, rc) \
    vapi_fail((ret), (fn), "%s: %s (%d)", (call), fi_strerror((int)-(rc)), (int)(rc))

/* ---- configuration (fab_config.c) -------------------------------------------------------- */
#define FAB_MTU_DEFAULT 1024u
#define FAB_MTU_MAX     (1u << 20)
#define FAB_NAME_MAX    64

struct fab_config {
    char     provider[FAB_NAME_MAX];  /* "" = the first hardware provider fi_getinfo offers */
    char     domain[FAB_NAME_MAX];    /* "" = the port-th domain of that provider */
    uint32_t port;                    /* 1-based: which of the provider's domains */
    uint32_t peer_timeout_ms;         /* a peer heard from for this long is given up */
    uint32_t mtu;                     /* largest message a send may carry */
    uint32_t tc;                      /* 0: the provider's traffic class; 1..15 see fab_hca.c */
};

/* Parses "fabric[:key=value,...]"; VAPI_EINVAL_PARAM with the key named when it is wrong. */
VAPI_ret_t fab_config_parse(const char *fn, const char *hca_id, struct fab_config *out);

/* ---- HCA (fab_hca.c) --------------------------------------------------------------------- */
struct fab_hca {
    struct fi_info      *info;     /* the chosen provider and domain, our requirements in it */
    struct fid_fabric   *fabric;
    struct fid_domain   *domain;
    struct fab_config    config;
    uint16_t             lid;      /* information 1: random, names this process in logs only */
    int                  mr_local; /* the provider needs descriptors of registered memory */
    _Atomic uint32_t     next_qp_num;
    _Atomic uint64_t     next_mr_key;  /* requested keys must differ within a domain (tcp: -FI_ENOKEY) */
    struct fab_mr_table *mrs;
    struct fab_keeper   *keeper;
    /* Held around every call into the provider when `serialized` (fab_hca.c says why);
     * recursive: a failure inside a progress cancels requests. */
    pthread_mutex_t      provider_lock;
    int                  serialized;
    /* the core provider is tcp: an endpoint's address is the TCP socket it listens on, which
     * fab_probe.c may connect to (verbs' is an RDMA CM address, no TCP port) */
    int                  tcp_core;
};

static inline void fab_provider_enter(struct fab_hca *h)
{
    if (h->serialized)
        pthread_mutex_lock(&h->provider_lock);
}

static inline void fab_provider_leave(struct fab_hca *h)
{
    if (h->serialized)
        pthread_mutex_unlock(&h->provider_lock);
}

/* ---- the keeper (fab_keeper.c) ----------------------------------------------------------- */
VAPI_ret_t fab_keeper_start(const char *fn, struct fab_hca *hca, uint64_t hca_h);
void fab_keeper_stop(struct fab_hca *hca);
/* The queue pairs the keeper looks after: every one of the HCA's from creation to destroy. */
VAPI_ret_t fab_keeper_add(const char *fn, struct fab_hca *hca, uint64_t qp_h);
void fab_keeper_remove(struct fab_hca *hca, uint64_t qp_h);

/* ---- memory regions (fab_mr.c) ----------------------------------------------------------- */
struct fab_mr_table *fab_mr_table_new(void);
void fab_mr_table_free(struct fab_mr_table *t);
/* The descriptor for [addr, addr + len) in region lkey; VAPI_EINVAL_PARAM if the range is not
 * inside that region (no provider reads or writes memory the application did not register). */
VAPI_ret_t fab_mr_desc(const char *fn, struct fab_hca *hca, uint32_t lkey, uint64_t addr, uint32_t len,
                       void **desc);

/* ---- completion queues (fab_cq.c) -------------------------------------------------------- */
struct fab_cq;
struct fab_qp;

/* Adds wc unless the CQ is full (0 then): producers (fab_progress.c, holding the QP's lock)
 * keep a completion that does not fit in the queue pair instead of dropping it. */
int fab_cq_try_push(struct fab_cq *cq, const VAPI_wc_desc_t *wc);
/* Wakes the CQ's sleeping pollers, so that they look again at what reports to it. */
void fab_cq_wake(struct fab_cq *cq);
/* A queue pair of cq connected (its lock held): a sleeper's slices start short, as after a
 * completion (fab_cq.c). */
void fab_cq_stir(struct fab_cq *cq);
/* The queue pairs that report to this CQ progress when it is polled (fab_qp.c). */
VAPI_ret_t fab_cq_attach(const char *fn, struct fab_cq *cq, struct fab_qp *qp);
void fab_cq_detach(struct fab_cq *cq, struct fab_qp *qp);

/* ---- queue pairs (fab_qp.c, fab_post.c, fab_progress.c, fab_wait.c) ---------------------- */
#define FAB_CREDIT_BUFS 2       /* credit receives kept posted */
#define FAB_CREDIT_LEN  4u      /* a credit message; a goodbye has flags after it */
#define FAB_GOODBYE_LEN 8u
#define FAB_GOODBYE     1u      /* flag: the sender destroys its queue pair */
#define FAB_GOODBYE_WAIT_MS 50u /* longest a destroy waits for its goodbye to leave */
#define FAB_ADDR_HEAD   12u     /* secret and qp_num before the endpoint's name (fab_qp.c) */

/* FAB_SPILLED: a receive whose position went to a spill buffer that has not filled yet */
enum fab_slot_state { FAB_FREE = 0, FAB_QUEUED, FAB_POSTED, FAB_DONE, FAB_SPILLED };

#define FAB_SPILL_MAX   1024u              /* spill buffers a queue pair may have at once */
#define FAB_SPILL_BYTES (64u << 20)        /* and their bytes at most */

/* A data message's buffer of this library's (fab_spill.c); its address is the context. */
struct fab_spill {
    struct fi_context2 ctx;     /* first */
    uint8_t           *buf;     /* mtu bytes while in use */
    struct fid_mr     *mr;      /* when the provider wants FI_MR_LOCAL */
    uint32_t           pos;     /* the message's position: the application's receive number */
    uint32_t           len;
    uint8_t            state;   /* FAB_FREE, FAB_POSTED, FAB_DONE (arrived or failed) */
    uint8_t            status;  /* once FAB_DONE */
    uint8_t            attached;/* that receive is posted and waits (FAB_SPILLED) */
};

/* One posted request, in posting order; its address is the libfabric operation context. */
struct fab_slot {
    struct fi_context2 ctx;     /* first: providers with FI_CONTEXT(2) mode write here */
    struct fab_qp     *qp;
    VAPI_wr_id_t       id;
    uint64_t           addr;
    void              *desc;
    uint32_t           len;     /* requested; for a receive, updated to what arrived */
    uint8_t            signaled;
    uint8_t            state;   /* enum fab_slot_state */
    uint8_t            status;  /* enum VAPI_wc_status once FAB_DONE */
    uint8_t            is_recv;
};

/* A credit message's buffer, received or sent; its address is the operation context. */
struct fab_credit {
    struct fi_context2 ctx;
    uint8_t            value[8];   /* count, then flags (a goodbye only), little-endian */
    uint8_t            busy;       /* handed to libfabric */
};

/* A FIFO of requests: slots [head, tail) in use, [head, next) handed to libfabric. */
struct fab_queue {
    struct fab_slot *slots;
    uint32_t cap, head, next, tail;
};

struct fab_qp {
    struct fab_hca   *hca;
    uint64_t          handle, hca_h, scq_h, rcq_h;
    struct fab_cq    *scq, *rcq;
    struct fid_ep    *ep;
    struct fid_av    *av;
    struct fid_cq    *cq;        /* the endpoint's one libfabric CQ, sends and receives */
    int               wait_fd;   /* its wait object (FI_WAIT_FD), -1 if the provider has none */
    uint32_t          qp_num;
    uint64_t          secret;    /* my tags: data = secret, credit = secret | 1 */
    uint8_t           addr[EVAPI_QP_ADDRESS_MAX];
    uint32_t          addr_len;  /* 8 secret bytes, then the endpoint's name */
    uint64_t          peer_secret;
    fi_addr_t         peer;
    /* The peer is in the address vector and libfabric reached it when it was put there: only
     * then is the endpoint read (fab_progress_locked). shm (libfabric 1.17) takes a message
     * off its queue whatever the queue pair's state, and the first message from an endpoint
     * carries its name: one from an endpoint that has closed since (or that is not in the
     * address vector and has closed) makes shm map a region that is gone and dereference NULL
     * (smr_progress_connreq, libfabric.so.1+0xd01f7). Set under the lock, once; atomic for
     * fab_wait, which looks without it. */
    _Atomic int       joined;
    /* +1: always NUL-terminated, whatever the peer sent, for providers whose names are strings
     * (shm reads the name fi_av_insert is given up to its NUL) */
    uint8_t           peer_addr[EVAPI_QP_ADDRESS_MAX + 1];
    uint32_t          peer_addr_len;
    uint32_t          rx_depth;  /* receives libfabric takes at once (rx_attr->size) */
    uint32_t          tx_depth;

    pthread_mutex_t   lock;      /* everything below; taken before a CQ's lock */
    int               state;     /* enum VAPI_qp_state */
    char              err_text[256];
    struct fab_queue  sq, rq;
    uint32_t          tx_inflight;  /* sends and credits libfabric holds (<= tx_depth) */
    uint32_t          peer_credit;  /* receives the peer posted, as it last said (mod 2^32) */
    uint32_t          data_sent;    /* data messages handed to libfabric (mod 2^32) */
    /* Data receives handed to libfabric since create (mod 2^32): the credit. Not the receives
     * the application posted: those beyond what the provider takes at once wait here, and a
     * message sent on their credit would wait in libfabric as unexpected (see below). */
    uint32_t          recv_handed;
    uint32_t          credit_told;  /* recv_handed as last sent to the peer */
    uint32_t          lf_recvs;     /* data receives in libfabric, the application's and spills */
    uint32_t          app_in_lf;    /* of them the application's */
    struct fab_spill *spills;       /* nspill, by position mod nspill; NULL until first needed */
    uint32_t          nspill;
    uint32_t          spill_inflight; /* spill buffers in use */
    uint32_t          spill_waiting;  /* of them filled, their receive not yet posted */
    uint64_t          spill_ns;       /* when a spill buffer was last posted or filled */
    int               spill_ok;       /* set by the keeper around its progress (fab_spill.c) */
    uint32_t          data_received;/* data messages that arrived (mod 2^32) */
    int               credit_due;   /* a credit message must go even if the peer has enough */
    int               cq_data;      /* the provider carries 4 bytes of CQ data with a message */
    uint64_t          heard_ns;     /* when the peer's last message or credit came */
    uint64_t          told_ns;      /* when the last credit message went to the peer */
    int               peer_silent;  /* given up for silence: reaped at the failure and at destroy */
    struct fab_credit credit_rx[FAB_CREDIT_BUFS];
    struct fab_credit credit_tx;
    struct fab_credit goodbye_tx;   /* last: credit_mr covers credit_rx up to here */
    struct fid_mr    *credit_mr;    /* the credit buffers, when the provider wants FI_MR_LOCAL */
    int               peer_left;    /* the peer's goodbye came: it destroyed its queue pair */
    int               shm_peer;     /* the peer is an shm endpoint of a process on this host */
    uint64_t          alive_ns;     /* when that process was last seen running */
    /* since when libfabric has refused (FI_EAGAIN) every send to the peer, 0 while they go;
     * when the keeper last probed the peer's address (fab_probe.c) */
    uint64_t          refused_ns;
    uint64_t          probed_ns;
    /* something of the peer's arrived: it connected, and on shm it knows this endpoint (a send
     * to a peer that has not answered shm's name announcement waits for it: FI_EAGAIN) */
    int               heard_any;
    /* Posts and polls by application threads (mod 2^32), and their count at the keeper's last
     * look: a queue pair none called in between is a silent reader's (fab_keeper.c). */
    uint32_t          app_calls;
    uint32_t          app_calls_seen;
};

/* With qp->lock held. */
VAPI_ret_t fab_queue_init(struct fab_queue *q, uint32_t cap);
void fab_queue_free(struct fab_queue *q);
/* Reads qp's libfabric CQ and acts on every completion; hands queued sends, receives and
 * credits to libfabric as room allows; moves finished requests to the VAPI CQs. */
void fab_progress_locked(struct fab_qp *qp);
/* Hands what is queued to libfabric, as far as credit and the provider's queues allow. */
void fab_pump_locked(struct fab_qp *qp);
/* The keeper's round: a keepalive when one is due (nothing sent for a quarter of peer_timeout,
 * FAB_KEEPALIVE_MAX_NS at most), and the queue pair failed when its peer has been silent for
 * peer_timeout. */
void fab_timers_locked(struct fab_qp *qp, uint64_t now_ns);
#define FAB_KEEPALIVE_MAX_NS 1000000000ull
/* The keeper's rounds come every FAB_KEEPER_PERIOD_MS (FAB_KEEPER_FAST_MS while fab_spill_busy). */
#define FAB_KEEPER_PERIOD_MS 250u
/* Nanoseconds from the stamp to now_ns, signed: a stamp taken after now_ns (by another thread,
 * between the caller's clock read and its look) is "just now", not 584 years ago. */
static inline int64_t fab_ns_since(uint64_t now_ns, uint64_t stamp_ns)
{
    return (int64_t)(now_ns - stamp_ns);
}
/* The queue pair gave its peer up: on shm, remove the dead peer's endpoint object once the
 * peer's pid is gone (tried when the peer is given up and again at destroy: a hung peer may be
 * killed in between). */
void fab_reap_dead_peer(const struct fab_qp *qp);
/* The pid an shm endpoint's name ("fi_shm://<pid>:<n>:<m>") holds, its object's name
 * ("<pid>:<n>:<m>") into *object; 0 for a name of another shape or provider. */
long fab_shm_name_pid(const char *name, const char **object);
/* The pid of an shm peer's process (from its address), 0 for a peer of another provider;
 * whether a process has ended, a zombie included (fab_reap.c says why it matters). */
long fab_shm_peer_pid(const struct fab_qp *qp);
int fab_shm_pid_ended(long pid);
int fab_shm_peer_dead(const struct fab_qp *qp);
/* A connected shm queue pair's regions are watched from its connect to its endpoint's close:
 * a spin lock of theirs that a killed peer held is released (fab_rescue.c), so that no thread
 * spins for ever inside libfabric. */
void fab_rescue_watch(const struct fab_qp *qp);
void fab_rescue_forget(const struct fab_qp *qp);
/* Around opening an endpoint: the process's SIGSEGV and SIGBUS handlers are read, then put
 * back over any libfabric installed meanwhile (fab_signals.c says why); one thread at a time. */
void fab_signals_hold(void);
void fab_signals_restore(void);
/* After fi_av_insert: 0 when the provider is shm and the peer's endpoint object is gone, so
 * that libfabric did not map it (fab_reap.c), with what was found in why; 1 otherwise. */
int fab_shm_peer_mapped(const struct fab_qp *qp, char *why, size_t cap);
/* The keeper's look at a queue pair whose sends libfabric has refused for a while and whose
 * peer has been silent: with qp->lock held and the queue pair pinned; it drops the lock while
 * it probes (fab_probe.c), and fails the queue pair when the peer's endpoint refuses. */
void fab_probe_locked(struct fab_qp *qp, uint64_t now_ns);
/* The window beyond posted receives (fab_spill.c), with qp->lock held. */
struct fab_spill *fab_spill_of(struct fab_qp *qp, void *ctx);
int fab_spill_may(const struct fab_qp *qp);
/* Hands position recv_handed to a new spill buffer: 0 done, 1 not now, -1 the queue pair
 * failed (posted() of fab_progress.c judges libfabric's answer). */
int fab_spill_post(struct fab_qp *qp, int (*posted)(struct fab_qp *, const char *, ssize_t));
/* The application's receive number i, just posted, whose position is a spill's. */
void fab_spill_attach(struct fab_qp *qp, uint32_t i);
void fab_spill_arrived(struct fab_qp *qp, struct fab_spill *sp, uint32_t len, uint8_t status);
void fab_spill_cancel(struct fab_qp *qp);
/* Spill buffers wait in libfabric and data came into them lately: only the keeper progresses
 * a silent reader, and should then look every FAB_KEEPER_FAST_MS, not every
 * FAB_KEEPER_PERIOD_MS. */
int fab_spill_busy(const struct fab_qp *qp, uint64_t now_ns);
#define FAB_KEEPER_FAST_MS 1u
#define FAB_SPILL_BUSY_NS  (100u * 1000000u)
/* The keeper frees spill buffers none of which was used for this long. */
void fab_spill_trim(struct fab_qp *qp, uint64_t now_ns);
#define FAB_SPILL_KEEP_NS  (1000ull * 1000000u)
/* After the endpoint is closed. */
void fab_spill_free_all(struct fab_qp *qp);
/* Destroy, the queue pair failed already: tells a peer that joined and has not left that this
 * one goes, and waits for that to leave, at most FAB_GOODBYE_WAIT_MS (fab_internal.h's top). */
void fab_goodbye_locked(struct fab_qp *qp);
/* After the endpoint is closed: every request not finished completes with VAPI_WR_FLUSH_ERR
 * as far as the CQs have room (the queue pair is going away). */
void fab_flush_locked(struct fab_qp *qp);
/* Moves the queue pair to VAPI_ERR with why (first cause kept); every request not yet
 * finished completes with `status`: receives libfabric holds once it has cancelled them, sends
 * at once (fab_qp.c says why). */
void fab_qp_fail_locked(struct fab_qp *qp, enum VAPI_wc_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sleeps until one of qps' libfabric CQs or wake_fd is readable, or timeout_ns passes; when a
 * queue pair's provider has no wait object, at most slice_ns. Called without locks. */
void fab_wait(struct fab_qp **qps, int n, int wake_fd, uint64_t timeout_ns, uint64_t slice_ns);

#endif
