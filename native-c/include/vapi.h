/*
 * vapi.h — the verbs contract Aldeia's queue-pair channel speaks (shared/spec/vapi.md).
 *
 * Function names and objects follow Mellanox VAPI (revision 0.98 in the thesis). Two libraries
 * implement it: libmicrovapi (MicroVAPI, routed onto DECK) and libaldeiafabric (libfabric:
 * InfiniBand, RoCE, EFA, Slingshot, and tcp and shm anywhere; fabric/fab_internal.h). The Java binding (aldeia-vapi) maps exactly this header, so the
 * structures are kept flat with fixed layouts:
 *  - a work request carries one scatter/gather entry inline (the channel never needs more);
 *  - list-posting and multi-completion polling (EVAPI_*_list, EVAPI_poll_cq_many) let one
 *    native call carry a whole write, as the thesis's "prototype 3" required.
 */
#ifndef VAPI_H
#define VAPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t  VAPI_ret_t;
typedef uint64_t VAPI_hca_hndl_t;
typedef uint64_t VAPI_pd_hndl_t;
typedef uint64_t VAPI_cq_hndl_t;
typedef uint64_t VAPI_qp_hndl_t;
typedef uint64_t VAPI_mr_hndl_t;
typedef uint64_t VAPI_wr_id_t;

/* ---- return codes ---------------------------------------------------------------------- */
#define VAPI_OK               0
#define VAPI_CQ_EMPTY         1    /* poll found no completion (not an error) */
#define VAPI_ETIMEDOUT        2    /* a blocking poll ran out of time (not an error) */
#define VAPI_EGEN           (-1)   /* general failure; EVAPI_last_error() says what */
#define VAPI_EINVAL_PARAM   (-2)
#define VAPI_EINVAL_HCA_HNDL (-3)
#define VAPI_EINVAL_QP_HNDL (-4)
#define VAPI_EINVAL_CQ_HNDL (-5)
#define VAPI_EINVAL_QP_STATE (-6)  /* e.g. post_sr before the QP is connected */
#define VAPI_ENOMEM         (-7)
#define VAPI_EAGAIN         (-8)   /* queue full */
#define VAPI_ENOSYS         (-9)   /* not supported by this implementation */

const char *VAPI_strerror(VAPI_ret_t ret);
/* Text of the last failure in the calling thread: the function, the cause, the layer below. */
const char *EVAPI_last_error(void);

/* ---- enumerations ------------------------------------------------------------------------ */
enum VAPI_qp_state { VAPI_RESET = 0, VAPI_INIT = 1, VAPI_RTR = 2, VAPI_RTS = 3, VAPI_ERR = 4 };
enum VAPI_wr_opcode { VAPI_SEND = 1, VAPI_RECEIVE = 2 };
enum VAPI_comp_type { VAPI_SIGNALED = 0, VAPI_UNSIGNALED = 1 };
enum VAPI_wc_status {
    VAPI_SUCCESS = 0,
    VAPI_WR_FLUSH_ERR = 1,   /* the QP was destroyed or moved to ERR before the request ran */
    VAPI_LOC_LEN_ERR = 2,    /* incoming message larger than the posted receive buffer */
    VAPI_REM_ABORT_ERR = 3,  /* the peer has gone away */
    VAPI_GENERAL_ERR = 4
};
/* InfiniBand path MTU values. MicroVAPI accepts any block size from the init string. */
enum VAPI_mtu { VAPI_MTU_256 = 256, VAPI_MTU_512 = 512, VAPI_MTU_1024 = 1024,
                VAPI_MTU_2048 = 2048, VAPI_MTU_4096 = 4096 };

/* ---- structures (fixed layout, mirrored by aldeia-vapi) ---------------------------------- */
typedef struct {            /* 8 bytes */
    uint16_t lid;           /* information 1 (MicroVAPI: low 16 bits of the DECK id) */
    uint8_t  state;         /* 4 = active */
    uint8_t  reserved;
    uint32_t max_mtu;
} VAPI_hca_port_t;

typedef struct {            /* 24 bytes */
    VAPI_cq_hndl_t sq_cq_hndl;
    VAPI_cq_hndl_t rq_cq_hndl;
    uint32_t       max_send_wr;
    uint32_t       max_recv_wr;
} VAPI_qp_init_attr_t;

typedef struct {            /* 16 bytes */
    uint32_t qp_num;        /* information 2 */
    uint32_t max_send_wr;
    uint32_t max_recv_wr;
    uint32_t window;        /* bytes the peer may send before this QP says more (MicroVAPI's
                             * receive window); 0: the library has no such window to tell */
} VAPI_qp_prop_t;

typedef struct {            /* 24 bytes */
    uint32_t qp_state;      /* enum VAPI_qp_state: RTR then RTS, or RTS directly */
    uint32_t dest_qp_num;   /* remote information 2 */
    uint32_t dest_id;       /* remote information 1 (LID; MicroVAPI: the full DECK id) */
    uint32_t path_mtu;      /* bytes */
    uint8_t  sl;            /* service level 0..15 */
    uint8_t  port;
    uint8_t  reserved[2];
    uint32_t dest_window;   /* the peer's prop.window, carried by the bootstrap as the PSNs of
                             * an InfiniBand connection are; 0: unknown (see VAPI_modify_qp) */
} VAPI_qp_attr_t;

typedef struct {            /* 32 bytes; used for send and receive requests alike */
    VAPI_wr_id_t id;
    uint32_t     opcode;    /* enum VAPI_wr_opcode */
    uint32_t     comp_type; /* enum VAPI_comp_type (receives are always signalled) */
    uint64_t     addr;      /* inside a registered region */
    uint32_t     len;
    uint32_t     lkey;
} VAPI_sr_desc_t;
typedef VAPI_sr_desc_t VAPI_rr_desc_t;

typedef struct {            /* 24 bytes */
    VAPI_wr_id_t id;
    uint32_t     status;    /* enum VAPI_wc_status */
    uint32_t     opcode;    /* enum VAPI_wr_opcode */
    uint32_t     byte_len;  /* bytes received (receives) or sent */
    uint32_t     reserved;
} VAPI_wc_desc_t;

/* ---- functions --------------------------------------------------------------------------- */
/* MicroVAPI reads its configuration from hca_id, e.g.
 *   "microvapi:mtu=1024,deck_id=0,deck_nodes=2,deck_file=nodes,deck_transport=tcp"  (static)
 *   "microvapi:mtu=1024,deck=dynamic"                                               (dynamic)
 * The first open brings DECK up; later opens share it (reference counted). */
VAPI_ret_t EVAPI_get_hca_hndl(const char *hca_id, VAPI_hca_hndl_t *hca);
VAPI_ret_t EVAPI_release_hca_hndl(VAPI_hca_hndl_t hca);
VAPI_ret_t VAPI_query_hca_port_prop(VAPI_hca_hndl_t hca, uint8_t port, VAPI_hca_port_t *prop);

VAPI_ret_t VAPI_alloc_pd(VAPI_hca_hndl_t hca, VAPI_pd_hndl_t *pd);
VAPI_ret_t VAPI_dealloc_pd(VAPI_hca_hndl_t hca, VAPI_pd_hndl_t pd);

VAPI_ret_t VAPI_create_cq(VAPI_hca_hndl_t hca, uint32_t min_entries, VAPI_cq_hndl_t *cq,
                          uint32_t *num_entries);
VAPI_ret_t VAPI_destroy_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq);

/* max_recv_wr is the receive window: the peer may send that many messages past what the
 * application has taken (libaldeiafabric holds those beyond the posted receives in buffers of
 * its own, as an InfiniBand HCA would make the sender retry). */
VAPI_ret_t VAPI_create_qp(VAPI_hca_hndl_t hca, const VAPI_qp_init_attr_t *attr,
                          VAPI_qp_hndl_t *qp, VAPI_qp_prop_t *prop);
/* To RTR/RTS: connects. libaldeiafabric on shm refuses (VAPI_EGEN) a peer whose endpoint
 * closed before this queue pair connected to it. MicroVAPI: with dest_window 0 the queue pair
 * tells the peer its window in a message of its own, which wakes the peer's engine; with the
 * peer's window given, it sends nothing and takes it that the peer was given this queue pair's
 * window too (both sides give it, or neither, as both sides of an InfiniBand connection give
 * the other's packet sequence numbers). libaldeiafabric ignores dest_window. */
VAPI_ret_t VAPI_modify_qp(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const VAPI_qp_attr_t *attr);
/* Outstanding requests complete with VAPI_WR_FLUSH_ERR; waiting pollers wake up.
 * libaldeiafabric tells the peer (a goodbye message), whose queue pair then fails at once once
 * what arrived before has been taken. */
VAPI_ret_t VAPI_destroy_qp(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp);
/* Why the queue pair is in VAPI_ERR, as text into buf (len bytes, NUL-terminated, cut to
 * fit); "" when it is not. What an error completion's status cannot say: which mailbox or
 * shared segment failed, and how. Set before the first error completion shows. */
VAPI_ret_t EVAPI_query_qp_error(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, char *buf, uint32_t len);
/* Once the queue pair is connected: how many bytes of consecutive sends (blocks of the path
 * mtu) one post list should carry for the library to move them as one transfer, which a writer
 * posts together as it copies a large write. MicroVAPI: what it coalesces into one DECK message
 * towards the peer's route (64 KiB over shared memory, 256 KiB over tcp), whole blocks. */
VAPI_ret_t EVAPI_query_qp_post_bytes(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t *bytes);

/* A queue pair's address on a fabric whose endpoints are not reached by LID and QP number
 * alone (libfabric's endpoint names: an IP address and port, a shared-memory name, an EFA GID
 * and QPN). EVAPI_query_qp_address copies it into buf (*len bytes there; on return the
 * address's length, also when buf is too small: VAPI_EINVAL_PARAM); the bootstrap carries it
 * to the peer, which hands it to EVAPI_set_qp_dest_address before VAPI_modify_qp connects.
 * VAPI_ENOSYS from a library whose queue pairs need no address (MicroVAPI: the DECK id is
 * information 1). Addresses are at most EVAPI_QP_ADDRESS_MAX bytes. */
#define EVAPI_QP_ADDRESS_MAX 256u
VAPI_ret_t EVAPI_query_qp_address(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint8_t *buf, uint32_t *len);
VAPI_ret_t EVAPI_set_qp_dest_address(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const uint8_t *addr,
                                     uint32_t len);

/* The fabric this HCA's queue pairs are on, as "provider;fabric name" (libfabric: "verbs;IB-0xfe80::",
 * "efa;efa", "tcp;ofi_rxm;198.18.0.0/24"), NUL-terminated into buf (len bytes): two processes
 * whose strings are equal can reach each other's queue pairs, so Aldeia offers this route only
 * to a peer that names the same. VAPI_EINVAL_PARAM when buf is too small; VAPI_ENOSYS from a
 * library without fabrics (MicroVAPI: its peers are DECK's). */
VAPI_ret_t EVAPI_query_hca_fabric(VAPI_hca_hndl_t hca, char *buf, uint32_t len);

VAPI_ret_t VAPI_register_mr(VAPI_hca_hndl_t hca, VAPI_pd_hndl_t pd, uint64_t addr, uint64_t size,
                            VAPI_mr_hndl_t *mr, uint32_t *lkey);
VAPI_ret_t VAPI_deregister_mr(VAPI_hca_hndl_t hca, VAPI_mr_hndl_t mr);

/* A send needs the queue pair in VAPI_RTS (VAPI_EINVAL_QP_STATE otherwise). A receive posted to
 * a queue pair in VAPI_ERR is taken and completes with an error (libaldeiafabric:
 * VAPI_WR_FLUSH_ERR; MicroVAPI: the queue pair's failure) behind the completions before it, as
 * on an InfiniBand queue pair: a reader that reposts the buffer it emptied after the peer left
 * still reads what arrived. */
VAPI_ret_t VAPI_post_sr(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const VAPI_sr_desc_t *sr);
VAPI_ret_t EVAPI_post_sr_list(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t num,
                              const VAPI_sr_desc_t *list);
VAPI_ret_t VAPI_post_rr(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, const VAPI_rr_desc_t *rr);
VAPI_ret_t EVAPI_post_rr_list(VAPI_hca_hndl_t hca, VAPI_qp_hndl_t qp, uint32_t num,
                              const VAPI_rr_desc_t *list);

/* Non-blocking: VAPI_OK with one completion, or VAPI_CQ_EMPTY. */
VAPI_ret_t VAPI_poll_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, VAPI_wc_desc_t *wc);
/* Non-blocking: up to max completions into wcs, their number in *count (0 is VAPI_OK). */
VAPI_ret_t EVAPI_poll_cq_many(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, uint32_t max,
                              VAPI_wc_desc_t *wcs, uint32_t *count);
/* Blocks until a completion arrives (VAPI_OK) or timeout_usec passes (VAPI_ETIMEDOUT);
 * timeout_usec 0 waits for ever. Never spins without bound. */
VAPI_ret_t EVAPI_poll_cq_block(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, uint32_t timeout_usec,
                               VAPI_wc_desc_t *wc);

/* ---- completion queues polled in the application's memory -------------------------------
 * As verbs libraries let their users poll a CQ in user space, a CQ can be read without a call:
 * EVAPI_map_cq gives its completions as a ring, and from then on the caller takes them there
 * (and may still call the poll functions above, from the same thread: one consumer at a time).
 * A mapped CQ never grows: a post that would need more completions than it holds fails with
 * VAPI_EAGAIN. The ring lives until VAPI_destroy_cq.
 *
 *   offset   0  uint32 tail   completions written (mod 2^32). The library writes the entry,
 *                             then stores tail with release: read it with acquire.
 *   offset  64  uint32 head   completions taken (mod 2^32). The consumer reads its entries,
 *                             then stores head with release; the library reads it with
 *                             acquire before it reuses an entry.
 *   offset 128  uint32 cap    entries in the ring, a power of two; constant.
 *   offset 192  VAPI_wc_desc_t entries[cap]: completion k is entries[k % cap].
 * tail and head sit on cache lines of their own, so writer and reader do not share one. */
typedef struct {
    uint32_t tail;
    uint8_t  pad0[60];
    uint32_t head;
    uint8_t  pad1[60];
    uint32_t cap;
    uint8_t  pad2[60];
} EVAPI_cq_ring_t;             /* 192 bytes, then the entries */
#define EVAPI_CQ_RING_HEAD_BYTES 192u

VAPI_ret_t EVAPI_map_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, EVAPI_cq_ring_t **ring);
/* Blocks until the CQ holds a completion (VAPI_OK) or timeout_usec passes (VAPI_ETIMEDOUT,
 * also when a queue pair using it was destroyed meanwhile); takes none: for a mapped CQ, whose
 * completions the caller then takes from the ring. timeout_usec 0 waits for ever. */
VAPI_ret_t EVAPI_wait_cq(VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq, uint32_t timeout_usec);

/* ---- the per-message calls without arguments ---------------------------------------------
 * A caller to whom every argument of a call costs passes the arguments of a post or a wait in
 * a call block of its own memory instead (JNA's direct calls, measured on this project's
 * machine: 45 ns with no argument, 60 with one, 97 with three, 116 with four; the Java channel
 * makes one post and one wait per message). A thread binds its block once, with
 * EVAPI_bind_call_block (per library, per thread; NULL unbinds), then writes each call's
 * arguments there and makes the call with none; the library reads the block during the call.
 *
 *   offset  0  uint64 hca
 *   offset  8  uint64 handle   the queue pair (posts) or the CQ (wait)
 *   offset 16  uint64 list     the address of the requests (posts); unused by the wait
 *   offset 24  uint32 count    the number of requests (posts) or timeout_usec (wait)
 *   offset 28  uint32 (unused)
 *
 * With block b bound, EVAPI_post_sr_bound() is EVAPI_post_sr_list(b->hca, b->handle,
 * b->count, b->list), and so on; a thread that bound none gets VAPI_EINVAL_PARAM. */
typedef struct {
    VAPI_hca_hndl_t hca;
    uint64_t        handle;
    uint64_t        list;
    uint32_t        count;
    uint32_t        unused;
} EVAPI_call_t;                  /* 32 bytes */

VAPI_ret_t EVAPI_bind_call_block(const EVAPI_call_t *call);
VAPI_ret_t EVAPI_post_sr_bound(void);
VAPI_ret_t EVAPI_post_rr_bound(void);
VAPI_ret_t EVAPI_wait_cq_bound(void);

#ifdef __cplusplus
}
#endif
#endif /* VAPI_H */
