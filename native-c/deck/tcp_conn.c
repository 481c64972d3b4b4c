/*
 * Proved connections (tcp.h): each has one reader thread, which reads frames until the stream
 * ends, breaks or brings a bad frame (while a retriever reads its plain connection itself,
 * tcp_wait.c, it keeps out), then ends the connection for good: the peer has left (or
 * broke the protocol), its mailboxes' retrievers are told, the descriptor is closed once the
 * last sender lets go of it. A reader cannot join itself, so ended readers wait on a list for
 * the next thread that passes (a new connection, the handshake loop, deck_done) to join them:
 * threads and descriptors return to what they were without a thread per connection to reap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "tcp.h"

typedef struct ended {
    deck_thread_t  thread;
    struct ended  *next;
} ended_t;

static deck_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static deck_cond_t  conns_cond;            /* a connection ended */
static int          conns_cond_ready;
static tcp_conn_t  *live;
static int          nlive;
static ended_t     *ended;

void tcp_conn_unref(tcp_conn_t *c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1) return;
    tcp_io_close(&c->io);
    deck_mutex_destroy(&c->send_lock);
    deck_mutex_destroy(&c->read_lock);
    free(c);
}

static void unlink_live(tcp_conn_t *c)
{
    for (tcp_conn_t **p = &live; *p; p = &(*p)->next)
        if (*p == c) { *p = c->next; nlive--; return; }
}

/* The reader's last act: the peer is told, the connection leaves the live list. */
static void end_connection(tcp_conn_t *c)
{
    atomic_store(&c->closed, 1);
    tcp_io_shutdown(&c->io);          /* senders blocked in send fail now */
    tcp_peer_lost(c->peer, c);
    ended_t *e = malloc(sizeof *e);   /* if this fails the thread stays unjoined: a leak, not a crash */
    deck_mutex_lock(&conns_lock);
    unlink_live(c);
    if (e) {
        e->thread = pthread_self();   /* c->reader may not be written yet when a reader ends at once */
        e->next = ended;
        ended = e;
    }
    deck_cond_broadcast(&conns_cond);
    deck_mutex_unlock(&conns_lock);
    tcp_conn_unref(c);
}

/* A write that cannot go on for DECK_POST_TIMEOUT_MS (the peer takes nothing: stopped), or
 * data that stays unacknowledged that long (the host is cut off), ends the connection. */
static void bound_sends(tcp_conn_t *c)
{
    int ms = deck_post_timeout_ms();
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
    unsigned int user = (unsigned int)ms;
    if (!c->io.tls) setsockopt(c->io.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(c->io.fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user, sizeof user);
}

/* The first proved connection of a peer is the one frames to it go on. */
static void install(tcp_conn_t *c)
{
    tcp_peer_t *peer = c->peer;
    tcp_peers_lock();
    if (!peer->conn && !peer->gone && !atomic_load(&c->closed)) {
        atomic_fetch_add(&c->refs, 1);
        peer->conn = c;
        deck_cond_broadcast(&peer->changed);
    }
    tcp_peers_unlock();
}

/* An accepted connection to encrypt: the handshake runs here, not in the handshake loop, so a
 * slow one holds up no other connection. */
static int encrypt_accepted(tcp_conn_t *c)
{
    tcp_auth_state_t *s = c->tls;
    c->tls = NULL;
    int rc = tcp_tls_start(&c->io, 1, s->key, s->nonce_c, s->nonce_a, tcp_auth_timeout_ms(), c->origin);
    memset(s, 0, sizeof *s);
    free(s);
    if (rc) {
        deck_log("%s", deck_last_error());
        return 0;
    }
    atomic_store(&c->ready, 1);
    install(c);
    return 1;
}

int tcp_conn_read_frame(tcp_conn_t *c)
{
    tcp_frame_t f;
    return tcp_inbuf_read_frame(&c->in, &f) > 0 && tcp_frame_handle(c, &f);
}

/* One turn of a reader: a plain connection's waits its turn (tcp_wait.c: a retriever may be
 * reading it), then it reads (waiting for it) and handles a frame and the ones behind it in the
 * buffer, under the read lock; a retriever that finds the lock held leaves the connection to
 * it. 0 when the connection must end. */
static int reader_step(tcp_conn_t *c, int plain)
{
    if (plain && !tcp_wait_reader_turn(c)) return 0;
    deck_mutex_lock(&c->read_lock);
    tcp_wait_lowat_clear(c);        /* a holder may have left it raised for this frame */
    int ok = tcp_conn_read_frame(c);
    atomic_store(&c->to_reader, 0);
    while (ok && tcp_inbuf_buffered(&c->in) > 0) ok = tcp_conn_read_frame(c);
    deck_mutex_unlock(&c->read_lock);
    if (plain && tcp_wait_role_held()) tcp_wake_reading();   /* the holder skipped c meanwhile */
    return ok && !atomic_load(&c->closed);
}

static void *reader_main(void *arg)
{
    tcp_conn_t *c = arg;
    pthread_setname_np(pthread_self(), "deck-tcp-read");   /* for top -H, perf, gdb */
    if (c->tls && !encrypt_accepted(c)) atomic_store(&c->closed, 1);
    if (tcp_inbuf_init(&c->in, &c->io)) {
        deck_log("tcp connection from %s: no memory for its read buffer; connection closed", c->origin);
        atomic_store(&c->closed, 1);
    }
    int plain = !c->io.tls;
    atomic_store(&c->shared, plain);
    while (!atomic_load(&c->closed) && reader_step(c, plain)) {}
    /* Under the read lock: frames a retriever took from c are delivered before c ends, so
     * nobody hears that the peer left before its last message. */
    deck_mutex_lock(&c->read_lock);
    atomic_store(&c->shared, 0);
    tcp_inbuf_free(&c->in);
    deck_mutex_unlock(&c->read_lock);
    end_connection(c);
    return NULL;
}

void tcp_conns_reap(void)
{
    deck_mutex_lock(&conns_lock);
    ended_t *list = ended;
    ended = NULL;
    deck_mutex_unlock(&conns_lock);
    while (list) {
        ended_t *next = list->next;
        deck_thread_join(list->thread, NULL);
        free(list);
        list = next;
    }
}

int tcp_conn_start(tcp_io_t io, tcp_peer_t *peer, const char *origin, const tcp_auth_state_t *accept_tls)
{
    tcp_conns_reap();
    tcp_conn_t *c = calloc(1, sizeof *c);
    if (!c) {
        tcp_io_close(&io);
        return deck_fail(DECK_ENOMEM, "deck tcp: out of memory for the connection of %s", origin);
    }
    c->io = io;
    c->peer = peer;
    bound_sends(c);
    atomic_init(&c->refs, 1);                 /* this function's until it returns; the reader's below */
    atomic_init(&c->closed, 0);
    atomic_init(&c->ready, !accept_tls);      /* an accepted one to encrypt is ready once it is */
    deck_mutex_init(&c->send_lock);
    deck_mutex_init(&c->read_lock);
    atomic_init(&c->shared, 0);
    atomic_init(&c->to_reader, 0);
    atomic_init(&c->holder_has, 0);
    c->lowat = 1;
    snprintf(c->origin, sizeof c->origin, "%s", origin);
    if (accept_tls && !(c->tls = malloc(sizeof *c->tls))) {
        tcp_conn_unref(c);
        return deck_fail(DECK_ENOMEM, "deck tcp: out of memory for the connection of %s", origin);
    }
    if (accept_tls) *c->tls = *accept_tls;
    tcp_peers_lock();
    int gone = peer->gone;                    /* final: what it sends now would come after its end */
    if (!gone) peer->readers++;               /* before the reader can end: tcp_peer_lost counts down */
    tcp_peers_unlock();
    if (gone) {
        free(c->tls);
        tcp_conn_unref(c);
        return deck_fail(DECK_EPEER, "deck tcp: node %d has left the run; its new connection (%s) is refused",
                         peer->id, origin);
    }
    deck_mutex_lock(&conns_lock);
    if (!conns_cond_ready) {
        deck_cond_init(&conns_cond);
        conns_cond_ready = 1;
    }
    atomic_fetch_add(&c->refs, 1);            /* the reader's */
    int rc = deck_thread_create(&c->reader, reader_main, c);
    if (rc == DECK_OK) {
        c->next = live;
        live = c;
        nlive++;
    }
    deck_mutex_unlock(&conns_lock);
    if (rc) {
        tcp_peers_lock();
        peer->readers--;
        tcp_peers_unlock();
        free(c->tls);
        tcp_conn_unref(c);                    /* the reader that did not start */
        tcp_conn_unref(c);
        return deck_fail(DECK_ENOMEM, "deck tcp: no thread for the connection of %s", origin);
    }
    if (!accept_tls) install(c);   /* the reader may have ended already: our reference keeps c */
    tcp_conn_unref(c);
    return DECK_OK;
}

int tcp_conn_send(tcp_conn_t *c, const tcp_frame_t *f, const struct iovec *pieces, int cnt)
{
    if (atomic_load(&c->closed)) return EPIPE;
    deck_mutex_lock(&c->send_lock);
    int err = tcp_io_send_framev(&c->io, f, pieces, cnt);
    deck_mutex_unlock(&c->send_lock);
    if (err) tcp_conn_kill(c);
    return err;
}

void tcp_conn_kill(tcp_conn_t *c)
{
    atomic_store(&c->closed, 1);
    tcp_io_shutdown(&c->io);
    tcp_wait_readers_wake();          /* its reader may be parked (tcp_wait.c) */
}

int tcp_conns_shared(tcp_conn_t **out, int max)
{
    int n = 0;
    deck_mutex_lock(&conns_lock);
    for (tcp_conn_t *c = live; c && n < max; c = c->next)
        if (atomic_load(&c->shared) && atomic_load(&c->ready) && !atomic_load(&c->closed)
            && !atomic_load(&c->to_reader)) {
            atomic_fetch_add(&c->refs, 1);
            out[n++] = c;
        }
    deck_mutex_unlock(&conns_lock);
    return n;
}

void tcp_conns_stop(void)
{
    deck_mutex_lock(&conns_lock);
    for (tcp_conn_t *c = live; c; c = c->next) tcp_conn_kill(c);
    while (nlive > 0) deck_cond_wait(&conns_cond, &conns_lock);
    deck_mutex_unlock(&conns_lock);
    tcp_conns_reap();
}

tcp_conn_t *tcp_conn_other(const struct tcp_peer *p, const tcp_conn_t *c)
{
    tcp_conn_t *found = NULL;
    deck_mutex_lock(&conns_lock);
    for (tcp_conn_t *o = live; o && !found; o = o->next)
        if (o != c && o->peer == p && !atomic_load(&o->closed) && atomic_load(&o->ready)) found = o;
    if (found) atomic_fetch_add(&found->refs, 1);
    deck_mutex_unlock(&conns_lock);
    return found;
}

int tcp_conns_live(void)
{
    deck_mutex_lock(&conns_lock);
    int n = nlive;
    deck_mutex_unlock(&conns_lock);
    return n;
}
