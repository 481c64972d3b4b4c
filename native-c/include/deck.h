/*
 * DECK — Distributed Execution and Communication Kernel (see shared/spec/deck.md).
 *
 * Message passing through named mailboxes plus a thin threads wrapper. One API; the network
 * underneath is a transport (a table of functions, deck/transport.h): tcp (sockets; static and
 * dynamic runs), sci (DECK/SCI's shared segments and write-only protocols over POSIX shared
 * memory: static runs on one host) and auto (dynamic runs: sci for each peer on this host,
 * tcp for the others); gm later. No start is collective: deck_init returns without waiting
 * for the other processes, which are reached when first needed.
 *
 * Two ways to start:
 *  - static, as deckrun did: N processes, ids 0..N-1, a nodes file listing where each one
 *    listens ("host", "host:port" or "[v6]:port" per line, line i = node i, '#' comments);
 *    deck_init() reads DECK_ID / DECK_NODES / DECK_FILE from the environment (set by deckrun)
 *    or the options -deck_id N -deck_nodes N -deck_file F from argv (removed from argv);
 *    deck_init_static() takes them as arguments.
 *  - dynamic, for sockets with no configuration: deck_init_dynamic() gives the process a unique
 *    id of its own; peers are learnt one by one with deck_add_peer(id, contact), where contact is
 *    what the peer's deck_contact() returned plus the host it is reached at. With auto, the
 *    contact also names the peer's host (kernel boot id) and shared-memory node; a peer with
 *    the same boot id whose segments this process can map is reached through sci, any other
 *    over tcp; deck_peer_describe() says which and why.
 *
 * Environment:
 *   DECK_TRANSPORT         static runs: "tcp" (default; "auto" means tcp too) or "sci";
 *                          dynamic runs: "auto" (default) or "tcp".
 *   DECK_MSG_BUF_LIMIT     sci: bytes up to which protocol 2 copies; above, protocol 3 (8192).
 *   DECK_MEDBUF_SIZE       sci: protocol-2 buffer per sender and mailbox, >= limit+64 (24768).
 *   DECK_MSEG_SIZE         sci: message segment for big message buffers (64 MiB).
 *   DECK_SPIN_US           sci, tcp: microseconds a waiter polls before blocking; -1 polls
 *                          only (30). Over tcp, a thread whose polls mostly miss stops polling.
 *   DECK_RUN_KEY           sci: run name in segment names (1..24 alnum; default from nodes file;
 *                          dynamic processes use "dyn" and host-local node numbers 0..63).
 *   DECK_CLONE_TIMEOUT_MS  bound on clone's wait for a name and sci's wait for a peer (10000).
 *   DECK_SECRET_FILE       static runs: the run secret, a file of random bytes of mode 0600 and
 *                          this user's (deckrun creates one per run); required.
 *   DECK_AUTH_TIMEOUT_MS   tcp: bound on a connection's handshake (5000).
 *   DECK_POST_TIMEOUT_MS   bound on a post's wait for a peer that takes nothing (a stopped
 *                          process, a partitioned host): then DECK_ETIMEDOUT, and over tcp the
 *                          connection ends (also when sent data stays unacknowledged that long).
 *   DECK_TCP_ENCRYPTION    tcp: "on" runs every connection under TLS 1.3 ("off").
 *   DECK_TCP_WAIT_READS    tcp: "0" leaves every read to the connections' reader threads; by
 *                          default a retriever waiting for its mailbox reads them itself (1).
 *   DECK_TCP_WAIT_SLICE_MS tcp: longest single wait of such a retriever before it looks at its
 *                          mailbox, deadline and peer again (100).
 *   DECK_MSG_MAX           the longest message any mailbox admits (1073741824).
 *
 * Every function returns DECK_OK (0) or a negative DECK_E* code; deck_strerror() names it and
 * deck_last_error() gives the text of the last failure in the calling thread.
 */
#ifndef DECK_H
#define DECK_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- result codes ---------------------------------------------------------------------- */
#define DECK_OK         0
#define DECK_EINVAL    (-1)   /* bad argument */
#define DECK_ENOMEM    (-2)   /* allocation failed */
#define DECK_ESTATE    (-3)   /* not initialised / already initialised / wrong mailbox kind */
#define DECK_ENOTFOUND (-4)   /* mailbox name or peer unknown */
#define DECK_EEXIST    (-5)   /* mailbox name already in use */
#define DECK_EIO       (-6)   /* transport failure (socket error, short write ...) */
#define DECK_EPEER     (-7)   /* the peer a mailbox waits on has gone away */
#define DECK_ETRUNC    (-8)   /* incoming message larger than the receiving message */
#define DECK_ERANGE    (-9)   /* pack past the message size / unpack past the packed data */
#define DECK_ECONFIG   (-10)  /* nodes file or environment is wrong */
#define DECK_ETIMEDOUT (-11)  /* a bounded wait ran out */
#define DECK_ECLOSED   (-12)  /* the mailbox was destroyed while waiting */
#define DECK_EPROTO    (-13)  /* a peer broke the protocol: a bad frame, an impossible value in a
                               * shared segment, a failed proof; that connection ends */

const char *deck_strerror(int code);
/* Human-readable text of the last failure in this thread (what, where, errno text). */
const char *deck_last_error(void);

/* Where DECK's few log lines go (a connection ended for a bad frame, a failed handshake): one
 * line each, without a newline; at most 20 a second, then a count of the ones left out.
 * NULL (the default): standard error. A binding sets its logger here. */
typedef void (*deck_log_fn)(const char *line);
void deck_set_log(deck_log_fn fn);

/* ---- environment --------------------------------------------------------------------- */
#define DECK_MAX_NODES        4096
#define DECK_MBOX_NAME_MAX    64      /* including the terminating NUL */
#define DECK_CONTACT_MAX      256

int deck_init(int *argc, char ***argv);
int deck_init_static(int id, int nnodes, const char *nodes_file);
/* The run secret file static inits read from now on instead of DECK_SECRET_FILE (NULL or "":
 * DECK_SECRET_FILE again), for a program that starts a static run without deckrun. */
int deck_set_secret_file(const char *path);
int deck_init_dynamic(void);
int deck_done(void);
int deck_node(void);          /* this process's id */
int deck_numnodes(void);      /* static: N; dynamic: 1 + peers added so far */
int deck_barrier(void);       /* static mode: every process of the run */
int deck_is_initialized(void);

/* Who may reach this process. A static run proves every connection with the run secret
 * (DECK_SECRET_FILE, created by deckrun: a file of random bytes, mode 0600); a dynamic run with a
 * key per pair of processes, agreed by the bootstrap that introduced them (deck_add_peer). */
#define DECK_KEY_BYTES 32

/* Dynamic mode: what this process tells a peer it connects to: "shm=<boot id>.<node>.<nonce>"
 * when it offers shared memory (auto), else "tcp" (it does not listen: the peer is reached over
 * the connection it opens to the peer). */
int deck_contact(char *buf, size_t len);
/* Dynamic mode: what this process tells the peer whose contact (deck_contact's: "tcp" or
 * "shm=...", else DECK_EINVAL) is `peer_contact` and whose bootstrap arrived on this host's address
 * `local_addr`: its shared memory when that peer will be reached through it, else "port=N" of a
 * tcp port on local_addr, bound now if needed and listened on once a peer reached over tcp is
 * added (a process whose peers are all on its host listens on nothing). */
int deck_contact_for(const char *peer_contact, const char *local_addr, char *buf, size_t len);
/* Addresses here (local_addr, host) are names or literals of either family; an IPv6 literal may
 * be bare or in brackets and carry a %scope.
 * Dynamic mode: makes peer `id` reachable at `host` with the contact it published, proving
 * itself (and this process to it) with `key` on every connection. A second call for `id` must
 * give the same key (DECK_EEXIST otherwise: another process claims that id). */
int deck_add_peer(int id, const char *host, const char *contact, const unsigned char key[DECK_KEY_BYTES]);
/* The key this process and `id` prove themselves with: the run key in a static run (for every
 * node, this one too), the key given to deck_add_peer in a dynamic one. DECK_OK, or
 * DECK_ENOTFOUND when `id` was never introduced (or is this process, in a dynamic run). */
int deck_peer_key(int id, unsigned char key[DECK_KEY_BYTES]);
/* 1 once process `id` is known to be gone (its tcp connection ended, or its shared-memory
 * owner record shows it dead: a /proc read, so ask it now and then, not per message); 0 while
 * it lives or was never reached. */
int deck_peer_gone(int id);
/* Removes the shared segments that processes of this user left when they were killed (DECK
 * does so at every deck_init and deck_done; a long-lived process calls this now and then so
 * that nothing of a killed peer outlives a minute). Returns how many went; 0 without sci. */
int deck_reclaim(void);
/* How peer `id` is reached, e.g. "sci (same host, shared memory node 3)" or "tcp (another
 * host)"; a static run names its transport. */
int deck_peer_describe(int id, char *buf, size_t len);

/* ---- messages -------------------------------------------------------------------------- */
/* Packing stores raw native bytes in order, no type tags, as DECK did: the receiver must
 * unpack the same types in the same order. DECK_STRING is stored as a 4-byte length and the
 * bytes with their NUL; DECK_MSG as an 8-byte length and the other message's packed data;
 * DECK_POINTER as the pointer's 8 bytes (meaningful only inside the sending process). */
enum deck_type {
    DECK_CHAR = 1, DECK_UCHAR, DECK_SHORT, DECK_USHORT, DECK_INT, DECK_UINT,
    DECK_LONG, DECK_ULONG, DECK_FLOAT, DECK_DOUBLE, DECK_POINTER, DECK_STRING, DECK_MSG
};

typedef struct deck_msg {
    char          *buf;     /* data area, `size` bytes */
    unsigned long  size;    /* capacity */
    unsigned long  len;     /* bytes packed (or received) */
    unsigned long  pos;     /* unpack cursor */
    void          *impl;    /* transport-private (e.g. a buffer in a shared segment) */
    int            src;     /* after a retrieve: the DECK id of the process that posted it, as
                             * the transport knows it (a proved tcp connection, a shared-memory
                             * area bound by a process the bootstrap introduced); -1 when it
                             * cannot say (a sci sender no bootstrap introduced) */
} deck_msg_t;

int deck_msg_create(deck_msg_t *m, unsigned long size);
int deck_msg_pack(deck_msg_t *m, int type, const void *datum, int n);
int deck_msg_unpack(deck_msg_t *m, int type, void *datum, int n);
int deck_msg_clear(deck_msg_t *m);     /* len = pos = 0 */
int deck_msg_reset(deck_msg_t *m);     /* pos = 0 */
int deck_msg_getbuffer(deck_msg_t *m, void **buffer);
int deck_msg_setlength(deck_msg_t *m, unsigned long len); /* after filling getbuffer directly */
int deck_msg_destroy(deck_msg_t *m);

/* ---- mailboxes ------------------------------------------------------------------------- */
/* Ordering: messages from one sending process to one mailbox arrive in the order posted;
 * from different senders in any order. Posts to a mailbox nobody is retrieving from yet are
 * never lost. tcp queues them at the receiver, so they never hold up the sender or other
 * mailboxes; sci, like DECK/SCI, has bounded buffers per sender and mailbox (64 small
 * messages, DECK_MEDBUF_SIZE bytes of medium ones) and a protocol-3 post waits for the
 * receiver's retrieve, so an sci post can wait until the receiver takes something. */
enum deck_mbox_kind { DECK_MBOX_NONE = 0, DECK_MBOX_CREATED = 1, DECK_MBOX_CLONED = 2 };

typedef struct deck_mbox {
    int   kind;                       /* enum deck_mbox_kind */
    int   node;                       /* owner process */
    int   index;                      /* owner-local mailbox number */
    char  name[DECK_MBOX_NAME_MAX];
    void *impl;                       /* transport-private */
} deck_mbox_t;

int deck_mbox_create(deck_mbox_t *mb, const char *name);
/* Resolves `name` through the name service; waits (bounded, DECK_CLONE_TIMEOUT_MS env,
 * default 10000) for the owner to create it. */
int deck_mbox_clone(deck_mbox_t *mb, const char *name);
/* The same, asking process `node` only: a process that stops or dies never delays the clone
 * of another process's mailbox. */
int deck_mbox_clone_at(deck_mbox_t *mb, int node, const char *name);
int deck_mbox_post(deck_mbox_t *mb, deck_msg_t *msg);
int deck_mbox_retrv(deck_mbox_t *mb, deck_msg_t *msg);
/* retrv with a bound: timeout_ms < 0 waits for ever, 0 only looks, DECK_POLL polls for the
 * transport's polling window (sci: DECK_SPIN_US; -1 there: 100 ms) and never sleeps (tcp: a
 * look). DECK_ETIMEDOUT if none. */
#define DECK_POLL (-2)
int deck_mbox_retrv_timed(deck_mbox_t *mb, deck_msg_t *msg, int timeout_ms);
/* retrv_timed that hands the message to fn(msg, arg) instead of leaving it in a message of the
 * caller's: in place where the transport can (sci's protocol 2: in the shared segment; tcp: in
 * the connection's buffer, when the retrieving thread read the frame itself while nothing was
 * queued before it, else the queued copy a reader made; both still bounded by scratch->size;
 * one copy fewer), else retrieved into `scratch` first. The message lives only during fn, which must not
 * retrieve from or destroy the mailbox. In place, the sender can still write into it while fn
 * reads: fn reads each value it relies on (a length) once and checks it where it uses it, and
 * copies what must stay. Same results as retrv_timed; fn is called only on DECK_OK. */
typedef void (*deck_msg_fn)(const deck_msg_t *msg, void *arg);
int deck_mbox_retrv_apply(deck_mbox_t *mb, deck_msg_t *scratch, int timeout_ms, deck_msg_fn fn, void *arg);
/* A created mailbox that expects messages from one process only: once that process is known
 * to be gone and the queue is empty, retrieves fail with DECK_EPEER instead of waiting. It
 * admits messages from that process only: another's post is a protocol violation that ends the
 * connection it came on (tcp) or the retrieve (sci, which then names the segment). */
int deck_mbox_watch(deck_mbox_t *mb, int node);
/* For deck_mbox_watch: a mailbox that admits no other process until it is watched for one (a
 * queue pair's mailbox, created before its bootstrap has named the peer). */
#define DECK_NOBODY (-2)
/* The longest message a created mailbox admits (default DECK_MSG_MAX, 1 GiB): a longer one is a
 * protocol violation, refused before anything is allocated for it. */
int deck_mbox_limit(deck_mbox_t *mb, unsigned long max_len);
int deck_mbox_destroy(deck_mbox_t *mb);

/* ---- keyed wake-ups (mbox_keys.c) --------------------------------------------------------
 * For a process whose threads wait for different messages of one created mailbox: a sender
 * posts with a key (its receiver's choice, e.g. a connection number; any key >= 0, taken
 * modulo DECK_MBOX_KEYS everywhere), and a thread waits for the rings of its key without retrieving, then
 * retrieves with a look (deck_mbox_retrv_timed, 0) and hands on what is not its own, ringing
 * that thread's key (deck_mbox_key_ring). A keyed post whose key nobody waits for wakes the
 * plain waiters (DECK_KEY_ANY) instead, so a process keeps one plain waiter to take messages
 * nobody waits for. Keys share DECK_MBOX_KEYS slots: a waiter may be woken for another's key.
 * A waiter reads the mailbox's bell (seen) BEFORE it looks at what it waits for, and waits with
 * that value: a ring after the read returns at once, so no wake-up is lost. On transports
 * without a doorbell (tcp) the calls fail with DECK_ESTATE and the post is a plain post. The
 * owner destroys the mailbox only once none of its threads waits or rings on it any more. */
#define DECK_MBOX_KEYS 23
#define DECK_KEY_ANY   (-1)
int deck_mbox_post_keyed(deck_mbox_t *mb, deck_msg_t *msg, int key);
/* deck_mbox_post_keyed of the message made of iov[0..cnt) one after the other (1..DECK_GATHER_MAX
 * pieces, which may be empty), without copying them together first: a shared-memory transport
 * copies each piece straight into the receiver's memory. The receiver sees one message. */
#define DECK_GATHER_MAX 1024
int deck_mbox_postv_keyed(deck_mbox_t *mb, const struct iovec *iov, int cnt, int key);
/* deck_mbox_postv_keyed (key >= 0), except that when nobody sleeps on key the plain waiters are
 * not woken: the message waits for the next retrieve (a waiter's look before it sleeps, the
 * plain waiter's next wake-up), as a TCP FIN waits in the kernel for its reader. For what nobody
 * needs at once (MicroVAPI: an end of stream): a wake-up of a process's receive thread costs
 * both CPUs more than the message. A post that must wait for room wakes the receiver all the
 * same, so quiet messages never hold up their sender. On tcp a plain post. */
int deck_mbox_postv_quiet(deck_mbox_t *mb, const struct iovec *iov, int cnt, int key);
/* The longest message a post to mb's owner moves as one transfer (DECK_OK and *bytes): a
 * program that posts a stream of data coalesces up to it. Over tcp, DECK_TCP_POST_HINT bytes: a
 * frame goes with one system call and its receiver reads it whole, so per byte a few large
 * frames cost less than many small ones (the kernel's send path, on loopback and between
 * network namespaces the receiver's too, is the bottleneck of a stream); over sci,
 * DECK_MSG_BUF_LIMIT, the longest message its eager protocol takes. */
#define DECK_TCP_POST_HINT (256ul * 1024 + 1024)
int deck_mbox_post_hint(deck_mbox_t *mb, unsigned long *bytes);
int deck_mbox_key_seen(deck_mbox_t *mb, uint32_t *seen);
/* Blocks while the bell is still `seen`, at most timeout_ms (spurious returns allowed), woken by
 * rings of `key` and plain rings; DECK_KEY_ANY also by keyed rings nobody waits for. */
int deck_mbox_key_wait(deck_mbox_t *mb, int key, uint32_t seen, int timeout_ms);
/* The process's one poller (a thread that polls the mailbox with deck_mbox_retrv_timed and
 * DECK_POLL between its waits, and is back for its next message within microseconds) says it
 * looks for `key` from now on, until it calls this with DECK_KEY_ANY: a keyed post for that key
 * wakes nobody then unless the poller sleeps on it, where it would wake the plain waiters while
 * the poller is away between two waits. Whoever clears the mark must look (or have the plain
 * waiter look) at the mailbox: what came meanwhile woke nobody. */
int deck_mbox_key_poller(deck_mbox_t *mb, int key);
/* A hand-on within this process: wakes the waiters of `key` (none: nobody); DECK_KEY_ANY wakes
 * the plain waiters. */
int deck_mbox_key_ring(deck_mbox_t *mb, int key);

/* ---- threads (thin wrapper over Pthreads) ---------------------------------------------- */
typedef pthread_t       deck_thread_t;
typedef pthread_mutex_t deck_mutex_t;
typedef pthread_cond_t  deck_cond_t;
typedef sem_t           deck_sema_t;

int deck_thread_create(deck_thread_t *t, void *(*fn)(void *), void *arg);
int deck_thread_join(deck_thread_t t, void **result);
int deck_mutex_init(deck_mutex_t *m);
int deck_mutex_lock(deck_mutex_t *m);
int deck_mutex_unlock(deck_mutex_t *m);
int deck_mutex_destroy(deck_mutex_t *m);
int deck_cond_init(deck_cond_t *c);
int deck_cond_wait(deck_cond_t *c, deck_mutex_t *m);
int deck_cond_timedwait_ms(deck_cond_t *c, deck_mutex_t *m, int timeout_ms);
int deck_cond_signal(deck_cond_t *c);
int deck_cond_broadcast(deck_cond_t *c);
int deck_cond_destroy(deck_cond_t *c);
int deck_sema_init(deck_sema_t *s, unsigned value);
int deck_sema_wait(deck_sema_t *s);
int deck_sema_post(deck_sema_t *s);
int deck_sema_destroy(deck_sema_t *s);

/* Sizes for bindings (JNA) that allocate these structures themselves. */
size_t deck_sizeof_msg(void);
size_t deck_sizeof_mbox(void);

#ifdef __cplusplus
}
#endif
#endif /* DECK_H */
