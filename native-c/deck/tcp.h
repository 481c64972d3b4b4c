/*
 * Internals of the TCP transport (tcp_*.c).
 *
 * One connection between two processes carries frames both ways: whichever side needs the other
 * first connects to the other's listener, and the other side uses that connection too (it may
 * not even listen: a dynamic process listens only once a peer on another host needs to reach it,
 * deck_contact_for). Nothing is read from a connection until it is proved (tcp_auth.c): the
 * connecting side and the accepting side each prove with a keyed MAC over both sides' fresh
 * nonces that they hold the key of the pair (static runs: the run key; dynamic runs: the key the
 * bootstrap of the pair's first connection agreed). Until then a connection costs no thread:
 * the listening side's handshakes run in one poll loop with a deadline each and caps
 * (tcp_listen.c). A proved connection gets one reader thread (tcp_conn.c) that checks every
 * frame against this process's limits before it allocates or touches a mailbox
 * (tcp_frames.c); a bad frame ends only its connection.
 *
 * WIRE FORMAT. A frame is a 24-byte header in network byte order, then `len` payload bytes:
 *
 *     0        4        8        12         16                24
 *     +--------+--------+--------+----------+-----------------+----------------+
 *     | type   | src    | index  | reserved | len (64 bits)   | payload (len)  |
 *     +--------+--------+--------+----------+-----------------+----------------+
 *
 * reserved is 0; a frame with anything else there is a bad frame.
 *
 * The handshake, before anything else on a connection (C connects, A accepts):
 *     C -> A  AUTH1  src = C's id, index = A's id,  payload {version, flags, nonce_C[16]}   (24 B)
 *     A -> C  AUTH2  src = A's id, index = C's id,  payload {version, flags, nonce_A[16],
 *                                                            MAC_K("DECK tcp acceptor" ...)} (56 B)
 *     C -> A  AUTH3  src = C's id, index = A's id,  payload {MAC_K("DECK tcp connector" ...)} (32 B)
 * where each MAC covers C's id, A's id, nonce_C and nonce_A (auth.h). flags say whether a side
 * wants the connection encrypted; both must agree.
 * Then, on a proved connection, in either direction:
 *     DATA          index = mailbox, payload = the message (at most the mailbox's limit)
 *     LOOKUP        payload = a mailbox name (1..63 bytes, no NUL); answered on the same
 *                   connection by LOOKUP_REPLY, index = the mailbox index or -1
 *     BARRIER_ARRIVE / BARRIER_RELEASE   static runs: to node 0 / from node 0, no payload
 * src is always the sender's id: a frame whose src is not the proved peer's is a bad frame.
 */
#ifndef DECK_TCP_H
#define DECK_TCP_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "auth.h"
#include "transport.h"

enum tcp_frame_type {
    FRAME_AUTH1 = 1,
    FRAME_AUTH2,
    FRAME_AUTH3,
    FRAME_DATA,
    FRAME_LOOKUP,
    FRAME_LOOKUP_REPLY,
    FRAME_BARRIER_ARRIVE,
    FRAME_BARRIER_RELEASE
};

typedef struct tcp_frame {
    uint32_t type;
    int32_t  src;
    int32_t  index;
    uint64_t len;
    uint32_t reserved;             /* bytes 12..15; 0 in every valid frame */
} tcp_frame_t;

#define TCP_FRAME_BYTES   24
#define TCP_AUTH_VERSION  1
#define TCP_AUTH1_BYTES   (8 + DECK_NONCE_BYTES)
#define TCP_AUTH2_BYTES   (8 + DECK_NONCE_BYTES + DECK_MAC_BYTES)
#define TCP_AUTH3_BYTES   DECK_MAC_BYTES
#define TCP_FLAG_TLS      1u

void tcp_frame_encode(unsigned char h[TCP_FRAME_BYTES], const tcp_frame_t *f);
void tcp_frame_decode(const unsigned char h[TCP_FRAME_BYTES], tcp_frame_t *f);

/* ---- tcp_io.c: a connection's byte stream, plain or TLS (tcp_tls.c) ---- */
typedef struct tcp_io {
    int    fd;
    void  *tls;                    /* SSL *, or NULL: plain */
    size_t write_max;              /* most bytes one plain system call writes; 0: no bound */
} tcp_io_t;

/* Over a path of segments this short (a network's, not loopback's 64 KiB), one system call
 * writes at most TCP_WRITE_MAX bytes (tcp_io_plain). */
#define TCP_WRITE_BOUNDED_MSS (16 * 1024)
#define TCP_WRITE_MAX         (128 * 1024)

/* The stream over the connected plain socket fd: TCP_NODELAY set, its writes bounded for its
 * path (TCP_WRITE_MAX). */
tcp_io_t tcp_io_plain(int fd);

/* 1: read; 0: end of stream; -errno: failure. */
int  tcp_io_read(tcp_io_t *io, void *buf, size_t n);
/* One read of what is there, waiting for something: 1..max bytes read, 0 end, -errno. */
ssize_t tcp_io_read_some(tcp_io_t *io, void *buf, size_t max);
/* Writes every byte of the vector: 0, or the errno of the failure. Never raises SIGPIPE. */
int  tcp_io_writev(tcp_io_t *io, struct iovec *iov, int iovcnt);
/* A frame and its payload in one write (one segment for a small message with TCP_NODELAY). */
int  tcp_io_send_frame(tcp_io_t *io, const tcp_frame_t *f, const void *payload);
/* A frame whose payload is pieces[0..cnt) one after the other (f->len bytes in all), header
 * and pieces in one vectored write: no copy of them into one buffer first. */
int  tcp_io_send_framev(tcp_io_t *io, const tcp_frame_t *f, const struct iovec *pieces, int cnt);
int  tcp_io_read_frame(tcp_io_t *io, tcp_frame_t *f);
/* ---- tcp_inbuf.c: a connection's reads, buffered ---- */
#define TCP_INBUF_BYTES 16384
/* The longest frame the holder (tcp_wait.c) takes in whole and hands on from where it lies: one
 * of tcp's post hint (the longest MicroVAPI sends); longer ones are their reader's. */
#define TCP_HELD_FRAME_MAX (TCP_FRAME_BYTES + DECK_TCP_POST_HINT)
/* The most a buffer grows to: such a frame and the next one's header. */
#define TCP_INBUF_MAX   (TCP_HELD_FRAME_MAX + TCP_FRAME_BYTES)
typedef struct tcp_inbuf {
    tcp_io_t      *io;
    unsigned char *buf;            /* cap bytes; bytes at..end read but not taken */
    size_t         cap;            /* TCP_INBUF_BYTES, grown up to TCP_INBUF_MAX by tcp_inbuf_fill */
    size_t         at, end;
} tcp_inbuf_t;

int  tcp_inbuf_init(tcp_inbuf_t *b, tcp_io_t *io);     /* DECK_OK or DECK_ENOMEM */
void tcp_inbuf_free(tcp_inbuf_t *b);
/* Exactly n bytes of the stream, as tcp_io_read: 1, 0 (end of stream) or -errno. */
int  tcp_inbuf_read(tcp_inbuf_t *b, void *dst, size_t n);
int  tcp_inbuf_read_frame(tcp_inbuf_t *b, tcp_frame_t *f);
/* Whether the buffer holds the next frame whole (1) or not (0); *total: the frame's length
 * with its header once the header is there, else TCP_FRAME_BYTES. Reads nothing. */
int  tcp_inbuf_frame_buffered(const tcp_inbuf_t *b, uint64_t *total);
/* Reads what a plain socket holds now, without waiting, into the buffer: up to the end of the
 * frame being filled, `want` bytes from `at` on, and the next frame's header (growing the
 * buffer up to TCP_INBUF_MAX). Bytes read, 0 at the end of the stream, -EAGAIN when nothing is
 * there, -ENOMEM, or -errno of the failure. */
ssize_t tcp_inbuf_fill(tcp_inbuf_t *b, size_t want);
/* The next n bytes when the buffer holds them all (NULL otherwise), and taking them. */
const void *tcp_inbuf_peek(const tcp_inbuf_t *b, size_t n);
void tcp_inbuf_skip(tcp_inbuf_t *b, size_t n);
size_t tcp_inbuf_buffered(const tcp_inbuf_t *b);

/* Wakes a thread blocked on the stream (shutdown); the descriptor stays open. */
void tcp_io_shutdown(tcp_io_t *io);
void tcp_io_close(tcp_io_t *io);

/* ---- tcp_addr.c: addresses, IPv4 and IPv6 alike ---- */
/* A socket address of either family, sized and aligned for both (no casts at the call sites). */
typedef union tcp_sockaddr {
    struct sockaddr         sa;
    struct sockaddr_in      v4;
    struct sockaddr_in6     v6;
    struct sockaddr_storage ss;
} tcp_sockaddr_t;

/* Room for "[v6%scope]:port", and for "node <id> at " before it. */
#define TCP_ADDR_TEXT   80
#define TCP_ORIGIN_TEXT (32 + TCP_ADDR_TEXT)

/* The address of host:port: host is a name, an IPv4 literal or an IPv6 literal (bare or in
 * brackets, with an optional %scope); with `numeric`, only a literal. The first address the
 * resolver gives (its order of preference, RFC 6724). DECK_ECONFIG with `what` in the text. */
int  tcp_resolve(const char *host, int port, int numeric, tcp_sockaddr_t *out, const char *what);
socklen_t tcp_addr_len(const tcp_sockaddr_t *a);
int  tcp_addr_port(const tcp_sockaddr_t *a);
/* Same family and address, and with `ports` the same port. */
int  tcp_addr_same(const tcp_sockaddr_t *a, const tcp_sockaddr_t *b, int ports);
/* The wildcard address of a's family, a's port kept. */
void tcp_addr_any(tcp_sockaddr_t *a);
int  tcp_addr_is_any(const tcp_sockaddr_t *a);
/* An IPv4 peer accepted on a dual-stack listener arrives as ::ffff:a.b.c.d: made AF_INET, so
 * that it is counted and printed as the IPv4 address it is. */
void tcp_addr_unmap(tcp_sockaddr_t *a);
/* "127.0.0.1:40123", "[::1]:40123" */
void tcp_addr_text(const tcp_sockaddr_t *a, char *buf, size_t len);

/* ---- tcp_tls.c: optional encryption (DECK_TCP_ENCRYPTION=on) ---- */
int  tcp_tls_wanted(void);
/* Turns a proved connection into a TLS 1.3 one keyed from the pair key and both nonces (both
 * sides call it with the same arguments; `acceptor` says which side this is). */
int  tcp_tls_start(tcp_io_t *io, int acceptor, const uint8_t key[DECK_KEY_BYTES],
                   const uint8_t nonce_c[DECK_NONCE_BYTES], const uint8_t nonce_a[DECK_NONCE_BYTES],
                   int timeout_ms, const char *origin);
void tcp_tls_free(tcp_io_t *io);

/* ---- tcp_conn.c: proved connections and their reader threads ---- */
struct tcp_peer;

typedef struct tcp_conn {
    tcp_io_t         io;
    tcp_inbuf_t      in;           /* over io; read under read_lock, by its reader or the role holder */
    deck_mutex_t     read_lock;    /* whole frames: who holds it reads and delivers them in order */
    atomic_int       shared;       /* plain, its read buffer set up: the role holder may read it */
    atomic_int       to_reader;    /* the role holder found a frame not all there: its reader
                                    * reads the rest (waiting for it), not the holder */
    atomic_int       holder_has;   /* in the role holder's snapshot: its reader keeps out; a
                                    * connection that is not (new, or past WAIT_CONNS) its reader reads */
    int              lowat;        /* SO_RCVLOWAT is raised until the frame coming is whole
                                    * (read_lock); back to 1 once it is read */
    struct tcp_peer *peer;
    atomic_int       refs;         /* the reader, the peer (as its send connection), each sender */
    atomic_int       closed;
    atomic_int       ready;        /* frames may go out on it: proved, and encrypted when asked */
    deck_mutex_t     send_lock;    /* whole frames */
    deck_thread_t    reader;
    char             origin[TCP_ORIGIN_TEXT];      /* "node 5 at [::1]:41234", for logs and errors */
    struct tcp_auth_state *tls;    /* accepted, to be encrypted by its reader first; then NULL */
    int              unanswered;   /* lookups asked on it whose answers have not come (peers_lock):
                                    * answers come in order, so only the last is still awaited */
    struct tcp_conn *next;         /* all live connections */
} tcp_conn_t;

/* Takes a proved connection (fd in blocking mode) and starts its reader; DECK_OK or an error
 * (the descriptor is then closed). It becomes the peer's send connection unless it has one:
 * at once, or, when `accept_tls` is given (an accepted connection to encrypt), once its reader
 * has run the TLS handshake. */
struct tcp_auth_state;
int  tcp_conn_start(tcp_io_t io, struct tcp_peer *peer, const char *origin, const struct tcp_auth_state *accept_tls);
void tcp_conn_unref(tcp_conn_t *c);
/* Sends a frame whose payload is pieces[0..cnt) (tcp_io_send_framev); 0 or an errno, after
 * which the connection is ended. */
int  tcp_conn_send(tcp_conn_t *c, const tcp_frame_t *f, const struct iovec *pieces, int cnt);
/* Ends a connection: wakes its reader; the reader ends it for good. */
void tcp_conn_kill(tcp_conn_t *c);
/* Stops every connection and joins every reader (deck_done). */
void tcp_conns_stop(void);
/* Joins the readers that have ended (they cannot join themselves). */
void tcp_conns_reap(void);
int  tcp_conns_live(void);                  /* live connections, for tests */
/* Another live connection of p than c, with a reference; NULL when there is none. */
tcp_conn_t *tcp_conn_other(const struct tcp_peer *p, const tcp_conn_t *c);

/* Reads the next frame of c (waiting for its bytes) and handles it, read_lock held, by its
 * reader or the role holder; 0 when the connection must end. */
int  tcp_conn_read_frame(tcp_conn_t *c);

/* The connections the role holder may read (shared, not closed, not handed to their reader),
 * each with a reference, at most max of them; returns how many (tcp_conn_unref each). */
int  tcp_conns_shared(tcp_conn_t **out, int max);

/* ---- tcp_wait.c: the reading retriever ---- */
/* A retriever about to wait for its mailbox reads the plain connections itself for one wait
 * ("the role": one thread at a time), so that its message reaches it without a hand-off from
 * a reader thread, one wake-up as with a socket read. The readers of the connections it took
 * keep out meanwhile, those of all plain connections for TCP_WAIT_GRACE_US after (the
 * retriever comes back within that in a request/response), reading again once nobody has
 * had the role for that long. */
#define TCP_WAIT_GRACE_US 1000
int  tcp_wait_init(void);               /* DECK_OK or DECK_EIO (no eventfd) */
void tcp_wait_done(void);
/* deck_transport_t.read_waiting and .wake_reading (transport.h). */
int  tcp_read_waiting(const struct timespec *deadline);
/* deck_transport_t.post_hint: DECK_TCP_POST_HINT for every peer. */
unsigned long tcp_post_hint(int node);
void tcp_wake_reading(void);
/* A reader's turn: 1 when it may wait on its connection now, 0 when the connection closed.
 * Parks while the role holder has c, or while the role was released less than the grace ago. */
int  tcp_wait_reader_turn(tcp_conn_t *c);
long tcp_wait_frames_held(void);        /* frames role holders read and delivered, for tests */
long tcp_wait_fills(void);              /* system calls role holders and looks read with, for tests */
long tcp_wait_reader_wakes(void);       /* parked readers' wake-ups, for tests */
/* Waits whose holder polled before it slept (DECK_SPIN_US), and in *hits those whose polls
 * found something; for tests. */
long tcp_wait_spins(long *hits);
/* SO_RCVLOWAT of c back to 1 (read_lock held), before a reader reads: it must not sleep in recv
 * under a mark a holder raised for a frame it then left (the kernel wakes a recv only once the
 * mark's bytes are there, and the rest of a frame already partly taken is fewer). A holder sets
 * the mark anew before each of its polls (tcp_wait.c, await_rest). */
void tcp_wait_lowat_clear(tcp_conn_t *c);
/* Whether the role is held now (a reader that finds it held leaves the bytes to the holder). */
int  tcp_wait_role_held(void);
/* Parked readers look at their turn again (a connection ended or was handed to its reader). */
void tcp_wait_readers_wake(void);

/* ---- tcp_frames.c: what a reader does with each frame ---- */
/* 1: go on; 0: the stream ended or broke (or a bad frame, logged) and the connection must end. */
int  tcp_frame_handle(tcp_conn_t *c, const tcp_frame_t *f);

/* ---- tcp_peers.c: the other processes ---- */
typedef struct tcp_peer {
    int                id;
    int                has_addr;   /* where it listens: static always; dynamic when its contact says */
    tcp_sockaddr_t     addr;
    int                has_key;    /* dynamic: agreed by the bootstrap; static: the run key */
    uint8_t            key[DECK_KEY_BYTES];
    tcp_conn_t        *conn;       /* the connection frames to it go on; NULL: none yet */
    int                connecting; /* a thread is connecting to it */
    int                readers;    /* its proved connections whose reader runs (two, when both
                                    * sides connected at once; each side sends on its first) */
    int                gone;       /* its last connection ended: it has left the run (final) */
    deck_cond_t        changed;    /* conn, connecting or gone changed */
    /* the lookup in progress on conn (one at a time, under lookup_lock) */
    deck_mutex_t       lookup_lock;
    int                lookup_waiting, lookup_answered, lookup_index;
} tcp_peer_t;

/* Everything in a peer (but lookup_lock) is guarded by this lock. */
void tcp_peers_lock(void);
void tcp_peers_unlock(void);

int  tcp_peers_init(int self, int nnodes, const deck_node_addr_t *nodes);  /* nodes NULL: dynamic */
void tcp_peers_done(void);
int  tcp_peers_self(void);
int  tcp_peers_static(void);
int  tcp_peers_nodes(void);                 /* static: N */
tcp_peer_t *tcp_peer_find(int id);
/* The key `id` proves itself with: DECK_OK and *key, or DECK_ENOTFOUND (not known yet). */
int  tcp_peer_key(int id, uint8_t key[DECK_KEY_BYTES]);
int  tcp_peer_add(int id, const tcp_sockaddr_t *addr, const char *host, const uint8_t key[DECK_KEY_BYTES]);
int  tcp_peer_count(void);
int  tcp_peer_at(int i, int *id);
int  tcp_peer_is_gone(int id);
/* A proved connection c of p ended (its reader has queued everything c brought). When it was
 * p's last, p has left the run; else frames to p go on another of its connections. */
void tcp_peer_lost(tcp_peer_t *p, tcp_conn_t *c);
/* The connection to send on, with a reference (tcp_conn_unref): connects to the peer's
 * listener, or waits up to wait_ms for the peer to connect when it does not listen. */
int  tcp_peer_conn(int id, int wait_ms, const char *what, tcp_conn_t **out);
/* Sends one frame to `id`, its payload pieces[0..cnt) (tcp_conn_send). */
int  tcp_peer_send(int id, const tcp_frame_t *f, const struct iovec *pieces, int cnt, int wait_ms, const char *what);
/* Asks `id` for its mailbox `name` on the peer's connection (waiting up to connect_wait_ms for
 * one): DECK_OK and *index, DECK_ENOTFOUND (not there, or not reachable yet), DECK_EPEER. */
int  tcp_peer_lookup(int id, const char *name, int connect_wait_ms, int *index);
/* A LOOKUP_REPLY arrived on c: 1 when a lookup was asked on c and is not answered yet (the
 * answer goes to its asker, unless the asker gave up or asked again since), 0 when nobody
 * asked. */
int  tcp_peer_answer(tcp_conn_t *c, int index);

/* ---- tcp_auth.c: the handshake ---- */
typedef struct tcp_auth_state {       /* the accepting side, step by step (tcp_listen.c) */
    int32_t claimed;                  /* the id AUTH1 claims */
    uint32_t flags;
    uint8_t nonce_c[DECK_NONCE_BYTES], nonce_a[DECK_NONCE_BYTES], key[DECK_KEY_BYTES];
} tcp_auth_state_t;

/* Connecting side, blocking, bounded by timeout_ms: proves itself on fd to peer `id`. */
int  tcp_auth_connect(tcp_io_t *io, int id, const uint8_t key[DECK_KEY_BYTES], int timeout_ms, const char *origin);
/* Accepting side: checks AUTH1 (header and payload); DECK_OK with s->claimed and s->nonce_c,
 * or an error saying what was wrong. */
int  tcp_auth_check1(const tcp_frame_t *f, const uint8_t *payload, tcp_auth_state_t *s);
/* Accepting side, once the claimed peer's key is known: the AUTH2 frame to send (header and
 * payload, TCP_FRAME_BYTES + TCP_AUTH2_BYTES bytes). */
int  tcp_auth_answer(tcp_auth_state_t *s, const uint8_t key[DECK_KEY_BYTES], unsigned char *out);
/* Accepting side: checks AUTH3. */
int  tcp_auth_check3(const tcp_auth_state_t *s, const tcp_frame_t *f, const uint8_t *payload);
int  tcp_auth_timeout_ms(void);

/* ---- tcp_listen.c: listeners and the handshakes of incoming connections ---- */
/* Takes address:port (port 0: any) for a listener unless one is taken on that address; the
 * IPv6 wildcard accepts IPv4 too (dual stack), any other address only its own family;
 * *bound_port says which. With `now` it listens at once, starting the handshake loop with the
 * first listener. Without, the port is only bound (reserved; connections to it are refused) until
 * tcp_listen_start: a dynamic process tells a peer its port in the bootstrap, before the peer has
 * proved itself, and opens it once a peer has (deck_add_peer), so a stranger's HELLO opens nothing. */
int  tcp_listen_open(const tcp_sockaddr_t *addr, int *bound_port, int now, const char *what);
/* Listens on every port bound but not listening yet (all of them, whichever bootstrap a port
 * was bound for: one listener per local address, shared by every peer that came there). */
int  tcp_listen_start(void);
/* deck_add_peer's checks and record, without tcp_listen_start: the auto transport opens the
 * ports only for a peer it reaches over tcp (tcp_transport.c describes the contact). */
int  tcp_introduce(int id, const char *host, const char *contact, const uint8_t *key);
void tcp_listen_stop(void);
/* A key was added: handshakes waiting for it go on. */
void tcp_listen_keys_changed(void);
int  tcp_listen_pending(void);             /* handshakes in progress, for tests */

/* ---- tcp_barrier.c ---- */
void tcp_barrier_init(int self, int nnodes);
void tcp_barrier_done(void);
void tcp_barrier_on_frame(const tcp_frame_t *f);
void tcp_barrier_wake(void);
int  tcp_barrier(void);

/* ---- limits ---- */
#define TCP_NAME_MAX (DECK_MBOX_NAME_MAX - 1)

#endif
