/* Frames on a TCP socket: header encoding, full reads, full vectored writes. */
#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include "tcp.h"

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) { p[i] = (unsigned char)v; v >>= 8; }
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

static void encode(unsigned char *h, const tcp_frame_t *f)
{
    uint32_t w[4] = { htonl(f->type), htonl((uint32_t)f->src), htonl((uint32_t)f->index), 0 };
    memcpy(h, w, 16);
    put64(h + 16, f->len);
}

int tcp_send_frame(int fd, const tcp_frame_t *f, const void *payload)
{
    unsigned char h[TCP_FRAME_BYTES];
    encode(h, f);
    /* One sendmsg for header and payload: with TCP_NODELAY a small message is one segment. */
    struct iovec iov[2] = { { h, sizeof h }, { (void *)payload, payload ? f->len : 0 } };
    struct msghdr mh = { .msg_iov = iov, .msg_iovlen = payload && f->len ? 2 : 1 };
    while (mh.msg_iovlen > 0) {
        ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);   /* a dead peer gives EPIPE, not SIGPIPE */
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        while (mh.msg_iovlen > 0 && (size_t)n >= mh.msg_iov->iov_len) {
            n -= (ssize_t)mh.msg_iov->iov_len;
            mh.msg_iov++;
            mh.msg_iovlen--;
        }
        if (mh.msg_iovlen > 0) {
            mh.msg_iov->iov_base = (char *)mh.msg_iov->iov_base + n;
            mh.msg_iov->iov_len -= (size_t)n;
        }
    }
    return 0;
}

int tcp_read_full(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);
        if (r == 0) return 0;
        if (r < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        p += r;
        n -= (size_t)r;
    }
    return 1;
}

int tcp_read_frame(int fd, tcp_frame_t *f)
{
    unsigned char h[TCP_FRAME_BYTES];
    int rc = tcp_read_full(fd, h, sizeof h);
    if (rc <= 0) return rc;
    uint32_t w[4];
    memcpy(w, h, 16);
    f->type = ntohl(w[0]);
    f->src = (int32_t)ntohl(w[1]);
    f->index = (int32_t)ntohl(w[2]);
    f->len = get64(h + 16);
    return 1;
}

int tcp_resolve(const char *host, int port, struct sockaddr_in *out, const char *what)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) return deck_fail(DECK_ECONFIG, "%s: cannot resolve host '%s': %s", what, host, gai_strerror(rc));
    memcpy(out, res->ai_addr, sizeof *out);
    out->sin_port = htons((uint16_t)port);
    freeaddrinfo(res);
    return DECK_OK;
}
