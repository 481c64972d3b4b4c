/*
 * Optional encryption of the TCP transport (DECK_TCP_ENCRYPTION=on; aldeia.conf
 * deck_tcp_encryption = on): once a connection has proved itself (tcp_auth.c), both sides run
 * TLS 1.3 over it (OpenSSL) with an external pre-shared key made for this connection alone,
 * HMAC-SHA-256(pair key, both nonces), in psk_dhe_ke mode: the ephemeral Diffie-Hellman keeps
 * what was sent secret even from someone who later learns the pair key. No certificates: the
 * key the peers already prove themselves with is the credential.
 *
 * A connection is read by its reader thread and written by senders at the same time, and an
 * OpenSSL connection object must not be used by two threads at once: every SSL call is made
 * under the stream's lock, on a non-blocking socket, and a thread that must wait for the socket
 * waits without the lock (poll), so a reader waiting for data never holds up a sender and the
 * other way round (two peers writing to each other at once cannot deadlock).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include "tcp.h"

#define PSK_LABEL     "DECK tcp tls psk"
#define PSK_IDENTITY  "deck"
#define COALESCE_MAX  16384          /* a frame this small goes out as one TLS record */
/* TLS_AES_128_GCM_SHA256, the cipher of the session that carries the pre-shared key. */
static const unsigned char AES128GCM[2] = { 0x13, 0x01 };

typedef struct tls_stream {
    SSL         *ssl;
    deck_mutex_t lock;
    uint8_t      psk[DECK_KEY_BYTES];
} tls_stream_t;

static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;
static SSL_CTX *client_ctx, *server_ctx;

int tcp_tls_wanted(void)
{
    const char *v = getenv("DECK_TCP_ENCRYPTION");
    return v && (strcasecmp(v, "on") == 0 || strcmp(v, "1") == 0);
}

static SSL_CTX *new_ctx(const SSL_METHOD *method)
{
    SSL_CTX *ctx = SSL_CTX_new(method);
    if (!ctx) return NULL;
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
    /* Suites of the pre-shared key's hash only: a server that chose a SHA-384 suite would drop
     * the key and ask for a certificate there is not. */
    SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256");
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_num_tickets(ctx, 0);       /* no resumption: every connection has its own key */
    return ctx;
}

static void make_contexts(void)
{
    client_ctx = new_ctx(TLS_client_method());
    server_ctx = new_ctx(TLS_server_method());
}

/* The session that carries a stream's pre-shared key to OpenSSL. */
static SSL_SESSION *psk_session(SSL *ssl)
{
    tls_stream_t *t = SSL_get_app_data(ssl);
    const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, AES128GCM);
    SSL_SESSION *s = cipher ? SSL_SESSION_new() : NULL;
    if (s && SSL_SESSION_set1_master_key(s, t->psk, sizeof t->psk) && SSL_SESSION_set_cipher(s, cipher)
        && SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION))
        return s;
    SSL_SESSION_free(s);
    return NULL;
}

static int use_psk(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen, SSL_SESSION **sess)
{
    *sess = psk_session(ssl);
    *id = (const unsigned char *)PSK_IDENTITY;
    *idlen = strlen(PSK_IDENTITY);
    return *sess != NULL;
}

static int find_psk(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess)
{
    *sess = idlen == strlen(PSK_IDENTITY) && memcmp(id, PSK_IDENTITY, idlen) == 0 ? psk_session(ssl) : NULL;
    return 1;                              /* no session: the handshake fails */
}

static void free_stream(tls_stream_t *t)
{
    if (!t) return;
    SSL_free(t->ssl);
    deck_mutex_destroy(&t->lock);
    memset(t->psk, 0, sizeof t->psk);
    free(t);
}

/* OpenSSL writes with write(2), which raises SIGPIPE in the writing thread when the peer has
 * gone (also from SSL_read and the handshake, when they send an alert): held back around every
 * call that may write, and dropped if raised, so a dead peer is an error, not a killed process. */
static void hold_sigpipe(sigset_t *old)
{
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, old);
}

static void release_sigpipe(const sigset_t *old)
{
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    struct timespec now = { 0, 0 };
    if (!sigismember(old, SIGPIPE)) {
        while (sigtimedwait(&pipe_set, NULL, &now) > 0) {}
        pthread_sigmask(SIG_SETMASK, old, NULL);
    }
}

static int tls_failed(const char *origin, const char *step)
{
    char text[256];
    ERR_error_string_n(ERR_get_error(), text, sizeof text);
    ERR_clear_error();
    return deck_fail(DECK_EPROTO, "deck tcp: TLS with %s failed (%s): %s", origin, step, text);
}

int tcp_tls_start(tcp_io_t *io, int acceptor, const uint8_t key[DECK_KEY_BYTES], const uint8_t nonce_c[DECK_NONCE_BYTES],
                  const uint8_t nonce_a[DECK_NONCE_BYTES], int timeout_ms, const char *origin)
{
    pthread_once(&ctx_once, make_contexts);
    SSL_CTX *ctx = acceptor ? server_ctx : client_ctx;
    tls_stream_t *t = calloc(1, sizeof *t);
    if (!ctx || !t) { free(t); return deck_fail(DECK_ENOMEM, "deck tcp: no TLS context for %s", origin); }
    deck_mutex_init(&t->lock);
    deck_auth_mac(key, PSK_LABEL, t->psk, 2, nonce_c, (size_t)DECK_NONCE_BYTES, nonce_a, (size_t)DECK_NONCE_BYTES);
    if (!(t->ssl = SSL_new(ctx)) || !SSL_set_fd(t->ssl, io->fd)) {
        free_stream(t);
        return tls_failed(origin, "setting up");
    }
    SSL_set_app_data(t->ssl, t);
    if (acceptor) SSL_set_psk_find_session_callback(t->ssl, find_psk);
    else SSL_set_psk_use_session_callback(t->ssl, use_psk);
    /* The handshake blocks, bounded by the socket's timeouts. */
    struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 }, none = { 0, 0 };
    setsockopt(io->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(io->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sigset_t old;
    hold_sigpipe(&old);
    int ok = (acceptor ? SSL_accept(t->ssl) : SSL_connect(t->ssl)) == 1;
    release_sigpipe(&old);
    setsockopt(io->fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
    setsockopt(io->fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
    if (!ok) {
        free_stream(t);
        return tls_failed(origin, "handshake");
    }
    fcntl(io->fd, F_SETFL, fcntl(io->fd, F_GETFL) | O_NONBLOCK);
    io->tls = t;
    return DECK_OK;
}

void tcp_tls_free(tcp_io_t *io)
{
    free_stream(io->tls);
    io->tls = NULL;
}

/* Waits, without the lock, until the socket can do what OpenSSL asked for (timeout_ms: -1 for
 * ever); 0 or -errno (-ETIMEDOUT). */
static int await(int fd, int err, int timeout_ms)
{
    struct pollfd p = { fd, err == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, 0 };
    int r;
    while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {}
    if (r < 0) return -errno;
    if (r == 0) return -ETIMEDOUT;
    return p.revents & (POLLERR | POLLNVAL) ? -EPIPE : 0;
}

/* One SSL_read into `in` or SSL_write from `out` (the other NULL) under the stream's lock: a
 * TLS connection is one state machine for both directions. Returns the call's result and its
 * SSL error in *err (SSL_ERROR_NONE when it moved bytes), errno as the call left it. */
static int ssl_step(tls_stream_t *t, void *in, const void *out, size_t n, int *err)
{
    int len = n > INT32_MAX ? INT32_MAX : (int)n;
    deck_mutex_lock(&t->lock);
    errno = 0;
    int r = in ? SSL_read(t->ssl, in, len) : SSL_write(t->ssl, out, len);
    *err = r > 0 ? SSL_ERROR_NONE : SSL_get_error(t->ssl, r);
    if (*err != SSL_ERROR_NONE) ERR_clear_error();
    int saved = errno;
    deck_mutex_unlock(&t->lock);
    errno = saved;
    return r;
}

ssize_t tcp_tls_read_some(tcp_io_t *io, void *buf, size_t max)
{
    tls_stream_t *t = io->tls;
    sigset_t old;
    hold_sigpipe(&old);
    ssize_t rc;
    for (;;) {
        int err, r = ssl_step(t, buf, NULL, max, &err);
        if (r > 0) { rc = r; break; }
        if (err == SSL_ERROR_ZERO_RETURN) { rc = 0; break; }
        if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) { rc = errno ? -errno : 0; break; }
        if ((rc = await(io->fd, err, -1)) != 0) break;   /* reads wait for ever: idle is fine */
    }
    release_sigpipe(&old);
    return rc;
}

/* One buffer, written whole. */
static int write_all(tcp_io_t *io, const char *p, size_t n)
{
    tls_stream_t *t = io->tls;
    sigset_t old;
    hold_sigpipe(&old);
    int rc = 0;
    while (n > 0 && rc == 0) {
        int err, r = ssl_step(t, NULL, p, n, &err);
        if (r > 0) { p += r; n -= (size_t)r; continue; }
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) rc = -await(io->fd, SSL_ERROR_WANT_WRITE, deck_post_timeout_ms());
        else rc = errno ? errno : EPIPE;
    }
    release_sigpipe(&old);
    return rc;
}

int tcp_tls_writev(tcp_io_t *io, struct iovec *iov, int iovcnt)
{
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++) total += iov[i].iov_len;
    if (total <= COALESCE_MAX) {              /* header and a small payload: one record */
        char one[COALESCE_MAX];
        size_t used = 0;
        for (int i = 0; i < iovcnt; i++) {
            memcpy(one + used, iov[i].iov_base, iov[i].iov_len);
            used += iov[i].iov_len;
        }
        return write_all(io, one, used);
    }
    for (int i = 0; i < iovcnt; i++) {
        int rc = write_all(io, iov[i].iov_base, iov[i].iov_len);
        if (rc) return rc;
    }
    return 0;
}
