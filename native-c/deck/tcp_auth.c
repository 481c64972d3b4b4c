/*
 * The handshake that proves a TCP connection (tcp.h, WIRE FORMAT): each side proves with a MAC
 * over both ids and both fresh nonces that it holds the pair's key, so neither a stranger that
 * connects nor one that answers on a port a peer used to listen on can join, and a proof cannot
 * be replayed on another connection. The key never travels.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <arpa/inet.h>
#include "tcp.h"

#define LABEL_ACCEPTOR  "DECK tcp acceptor"
#define LABEL_CONNECTOR "DECK tcp connector"

int tcp_auth_timeout_ms(void) { return deck_env_int("DECK_AUTH_TIMEOUT_MS", 5000); }

static uint32_t my_flags(void) { return tcp_tls_wanted() ? TCP_FLAG_TLS : 0; }

static void put32(uint8_t *p, uint32_t v) { uint32_t n = htonl(v); memcpy(p, &n, 4); }
static uint32_t get32(const uint8_t *p) { uint32_t n; memcpy(&n, p, 4); return ntohl(n); }

/* MAC of one side: label, connector id, acceptor id, both nonces. */
static void prove(const uint8_t key[DECK_KEY_BYTES], const char *label, int32_t connector, int32_t acceptor,
                  const uint8_t *nonce_c, const uint8_t *nonce_a, uint8_t out[DECK_MAC_BYTES])
{
    uint8_t ids[8];
    put32(ids, (uint32_t)connector);
    put32(ids + 4, (uint32_t)acceptor);
    deck_auth_mac(key, label, out, 3, ids, sizeof ids, nonce_c, (size_t)DECK_NONCE_BYTES,
                  nonce_a, (size_t)DECK_NONCE_BYTES);
}

static const char *flag_text(uint32_t flags) { return flags & TCP_FLAG_TLS ? "encrypted" : "unencrypted"; }

static void set_timeouts(int fd, int ms)
{
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int read_failed(int rc, const char *origin, const char *what)
{
    if (rc == -EAGAIN || rc == -EWOULDBLOCK)
        return deck_fail(DECK_ETIMEDOUT, "deck tcp: %s did not send %s in time", origin, what);
    if (rc == 0)
        return deck_fail(DECK_EPROTO, "deck tcp: %s closed the connection instead of sending %s: it does not "
                         "know this process under this key (another run, or a peer that has restarted?)", origin, what);
    return deck_fail_errno(DECK_EIO, -rc, "deck tcp: reading %s from %s", what, origin);
}

int tcp_auth_connect(tcp_io_t *io, int id, const uint8_t key[DECK_KEY_BYTES], int timeout_ms, const char *origin)
{
    int self = tcp_peers_self();
    uint8_t hello[TCP_AUTH1_BYTES], answer[TCP_AUTH2_BYTES], mac[DECK_MAC_BYTES];
    put32(hello, TCP_AUTH_VERSION);
    put32(hello + 4, my_flags());
    int rc = deck_auth_random(hello + 8, DECK_NONCE_BYTES);
    if (rc) return rc;
    set_timeouts(io->fd, timeout_ms);
    tcp_frame_t f = { .type = FRAME_AUTH1, .src = self, .index = id, .len = TCP_AUTH1_BYTES };
    int err = tcp_io_send_frame(io, &f, hello);
    if (err) return deck_fail_errno(DECK_EIO, err, "deck tcp: greeting %s", origin);
    if ((rc = tcp_io_read_frame(io, &f)) <= 0) return read_failed(rc, origin, "its proof");
    if (f.type != FRAME_AUTH2 || f.src != id || f.index != self || f.len != TCP_AUTH2_BYTES || f.reserved)
        return deck_fail(DECK_EPROTO, "deck tcp: %s answered the handshake with frame type %u, src %d, index %d, "
                         "%llu bytes: not a DECK process of this run", origin, f.type, f.src, f.index,
                         (unsigned long long)f.len);
    if ((rc = tcp_io_read(io, answer, sizeof answer)) <= 0) return read_failed(rc, origin, "its proof");
    if (get32(answer) != TCP_AUTH_VERSION)
        return deck_fail(DECK_EPROTO, "deck tcp: %s speaks handshake version %u, this process %d", origin,
                         get32(answer), TCP_AUTH_VERSION);
    if (get32(answer + 4) != my_flags())
        return deck_fail(DECK_ECONFIG, "deck tcp: %s runs %s (deck_tcp_encryption), this process %s", origin,
                         flag_text(get32(answer + 4)), flag_text(my_flags()));
    const uint8_t *nonce_a = answer + 8;
    prove(key, LABEL_ACCEPTOR, self, id, hello + 8, nonce_a, mac);
    if (!deck_auth_mac_equal(mac, nonce_a + DECK_NONCE_BYTES))
        return deck_fail(DECK_EPROTO, "deck tcp: %s failed to prove it is node %d (wrong key): not the process "
                         "this one was introduced to", origin, id);
    prove(key, LABEL_CONNECTOR, self, id, hello + 8, nonce_a, mac);
    f = (tcp_frame_t){ .type = FRAME_AUTH3, .src = self, .index = id, .len = TCP_AUTH3_BYTES };
    if ((err = tcp_io_send_frame(io, &f, mac))) return deck_fail_errno(DECK_EIO, err, "deck tcp: proving to %s", origin);
    set_timeouts(io->fd, 0);
    return tcp_tls_wanted() ? tcp_tls_start(io, 0, key, hello + 8, nonce_a, timeout_ms, origin) : DECK_OK;
}

int tcp_auth_check1(const tcp_frame_t *f, const uint8_t *payload, tcp_auth_state_t *s)
{
    int self = tcp_peers_self();
    if (f->type != FRAME_AUTH1 || f->len != TCP_AUTH1_BYTES || f->reserved)
        return deck_fail(DECK_EPROTO, "sent frame type %u of %llu bytes instead of a DECK handshake", f->type,
                         (unsigned long long)f->len);
    if (f->index != self)
        return deck_fail(DECK_EPROTO, "asked for node %d, this process is node %d", f->index, self);
    if (f->src < 0 || f->src == self || (tcp_peers_static() && f->src >= tcp_peers_nodes()))
        return deck_fail(DECK_EPROTO, "claimed to be node %d, which is not another process of this run", f->src);
    if (get32(payload) != TCP_AUTH_VERSION)
        return deck_fail(DECK_EPROTO, "speaks handshake version %u, this process %d", get32(payload), TCP_AUTH_VERSION);
    s->flags = get32(payload + 4);
    if (s->flags != my_flags())
        return deck_fail(DECK_ECONFIG, "runs %s (deck_tcp_encryption), this process %s", flag_text(s->flags),
                         flag_text(my_flags()));
    s->claimed = f->src;
    memcpy(s->nonce_c, payload + 8, DECK_NONCE_BYTES);
    return DECK_OK;
}

int tcp_auth_answer(tcp_auth_state_t *s, const uint8_t key[DECK_KEY_BYTES], unsigned char *out)
{
    int rc = deck_auth_random(s->nonce_a, DECK_NONCE_BYTES);
    if (rc) return rc;
    memcpy(s->key, key, DECK_KEY_BYTES);
    tcp_frame_t f = { .type = FRAME_AUTH2, .src = tcp_peers_self(), .index = s->claimed, .len = TCP_AUTH2_BYTES };
    tcp_frame_encode(out, &f);
    uint8_t *p = out + TCP_FRAME_BYTES;
    put32(p, TCP_AUTH_VERSION);
    put32(p + 4, my_flags());
    memcpy(p + 8, s->nonce_a, DECK_NONCE_BYTES);
    prove(key, LABEL_ACCEPTOR, s->claimed, tcp_peers_self(), s->nonce_c, s->nonce_a, p + 8 + DECK_NONCE_BYTES);
    return DECK_OK;
}

int tcp_auth_check3(const tcp_auth_state_t *s, const tcp_frame_t *f, const uint8_t *payload)
{
    if (f->type != FRAME_AUTH3 || f->src != s->claimed || f->index != tcp_peers_self() || f->len != TCP_AUTH3_BYTES
        || f->reserved)
        return deck_fail(DECK_EPROTO, "sent frame type %u of %llu bytes instead of its proof", f->type,
                         (unsigned long long)f->len);
    uint8_t mac[DECK_MAC_BYTES];
    prove(s->key, LABEL_CONNECTOR, s->claimed, tcp_peers_self(), s->nonce_c, s->nonce_a, mac);
    if (!deck_auth_mac_equal(mac, payload))
        return deck_fail(DECK_EPROTO, "failed to prove it is node %d (wrong key)", s->claimed);
    return DECK_OK;
}
