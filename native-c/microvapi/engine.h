/*
 * The engine's parts (engine.c: the mailbox, the receive turn and thread, start and stop;
 * engine_table.c: the queue pair table and the posts' message buffers; engine_send.c: the send
 * thread and the control messages it sends; engine_peers.c: the peer processes and their
 * liveness) share this state. Lock order: eng.lock, then a queue pair's locks, then a CQ's.
 */
#ifndef MV_ENGINE_H
#define MV_ENGINE_H

#include "mv_internal.h"

/* How long readers may be away before the receive thread retrieves in their place. */
#define MV_RECV_GRACE_NS (2 * 1000000ull)
/* Messages one drain dispatches before it leaves the rest to the receive thread. */
#define MV_DRAIN_MAX 64
/* How often the receive thread looks at the peers' lives. */
#define MV_LIVENESS_MS 200
/* Control messages waiting to be sent; beyond this they are dropped (a reset is a courtesy, a
 * lost ping or pong is sent again a quarter timeout later). */
#define MV_CONTROLS_MAX 64
/* How often the receive thread removes killed processes' segments. */
#define MV_RECLAIM_MS 20000
#define MV_PEER_TIMEOUT_DEFAULT_MS 10000

struct mv_peer {
    struct mv_peer *next;
    uint32_t        id;
    deck_mbox_t     mb;
    uint32_t        refs;          /* connected queue pairs, plus users in a post */
    int             gone;          /* given up by the liveness check */
    int             failed;        /* a post to it failed: give it up at the next check */
    uint64_t        ping_ns;       /* when the last ping went */
    uint64_t        heard_ns;      /* its last message (mv_coarse_ns: may lag vapi_now_ns by a tick) */
    char            why[96];       /* why it was given up */
};

struct mv_control {
    int      id;
    uint32_t kind, dest_qp, src_qp;
};

struct mv_engine {
    pthread_mutex_t lock;
    pthread_cond_t  recv_cv;       /* the receive thread: the turn, readers, stopping */
    pthread_cond_t  send_cv;       /* the send thread: work, stopping */
    pthread_cond_t  unpinned;      /* a queue pair's pins fell to 0 */
    unsigned        users;         /* open HCAs */
    int             stopping;
    deck_mbox_t     mb, self;      /* ours, and a clone of it for tokens */
    int             mb_open, self_open;
    deck_msg_t      msg;           /* the turn holder's */
    deck_msg_t      token;
    /* keyed wake-ups: the mailbox has a doorbell; a reader polls before it sleeps */
    int             keyed, polling;
    int             keyed_readers;     /* readers inside a keyed wait (cq.c) */
    int             marked;            /* the doorbell's poller mark is set (mv_engine_polling_take) */
    unsigned        mark_shown;        /* the mark last stored on the doorbell (key + 1, 0: none) */
    int             other_waiters;     /* threads blocked on a CQ that is not a reader's (writers) */
    /* the receive turn */
    int             busy, busy_daemon, kick_pending;
    struct mv_qp   *dispatched;    /* pinned by the turn holder's dispatch, unpinned as the turn ends */
    int             daemon_long_sleep;   /* the receive thread sleeps until its liveness check */
    uint32_t        pollers;
    uint64_t        activity_ns;
    struct mv_cq  **waiting;       /* CQs of readers inside a blocking poll, in arrival order */
    uint32_t        nwaiting, cap_waiting;
    /* threads */
    pthread_t       recv_thread, send_thread;
    int             recv_running, send_running;
    /* queue pairs */
    struct mv_qp  **slots;         /* MV_QP_SLOTS, allocated with the engine */
    uint32_t        high;          /* slots below this may be used */
    uint32_t        next_free;     /* where the search for a free slot starts */
    struct mv_peer *peers;
    struct mv_qp   *send_head, *send_tail;
    struct mv_control controls[MV_CONTROLS_MAX];   /* a FIFO ring */
    uint32_t        control_head, ncontrols;
    uint64_t        timeout_ns;    /* the peer timeout */
};

extern struct mv_engine eng;

/* engine.c */
void mv_eng_kick_locked(void);          /* ends the turn holder's retrieve with a token */

/* engine_table.c */
void mv_eng_unpin(struct mv_qp *qp);
/* The connected queue pair `dest_qp` whose peer is process `src` and its queue pair `src_qp`,
 * pinned; NULL if there is none. With `unconnected`, also one not connected yet. *heard: 1 when
 * it noted that src was heard from (a connected queue pair's peer), as mv_eng_heard does. */
struct mv_qp *mv_eng_pin_for(uint32_t dest_qp, int src, uint32_t src_qp, int unconnected, int *heard);
void mv_eng_unschedule_locked(struct mv_qp *qp);

/* engine_send.c */
void mv_eng_schedule_control_locked(int id, uint32_t kind, uint32_t dest_qp, uint32_t src_qp);
void *mv_eng_send_thread(void *arg);

/* engine_peers.c */
void mv_eng_heard(int src, int ping);   /* a message came from src (a ping gets a pong) */
void mv_eng_check_peers(void);          /* fails the queue pairs of peers given up */
void mv_eng_peers_free(void);           /* at stop */

#endif
