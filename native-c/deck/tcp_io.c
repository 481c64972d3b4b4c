/*
 * A connection's byte stream (tcp.h): whole reads, whole vectored writes and frames, over the
 * plain socket or, once tcp_tls_start ran, over TLS (tcp_tls.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "tcp.h"

/* The TLS side of the stream, in tcp_tls.c. */
ssize_t tcp_tls_read_some(tcp_io_t *io, void *buf, size_t max);
int tcp_tls_writev(tcp_io_t *io, struct iovec *iov, int iovcnt);

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

void tcp_frame_encode(unsigned char h[TCP_FRAME_BYTES], const tcp_frame_t *f)
{
    uint32_t w[3] = { htonl(f->type), htonl((uint32_t)f->src), htonl((uint32_t)f->index) };
    memcpy(h, w, 12);
    memset(h + 12, 0, 4);
    put64(h + 16, f->len);
}

void tcp_frame_decode(const unsigned char h[TCP_FRAME_BYTES], tcp_frame_t *f)
{
    uint32_t w[3];
    memcpy(w, h, 12);
    f->type = ntohl(w[0]);
    f->src = (int32_t)ntohl(w[1]);
    f->index = (int32_t)ntohl(w[2]);
    uint32_t reserved;
    memcpy(&reserved, h + 12, 4);
    f->reserved = ntohl(reserved);
    f->len = get64(h + 16);
}

/*
 * Over a network path a large frame goes to the kernel in pieces of at most TCP_WRITE_MAX, as
 * the JDK writes a socket (128 KiB per call): one sendmsg of a whole 256 KiB frame holds the
 * socket while it copies, the peer's acknowledgements wait behind it, and the sender's TCP
 * sends in bursts. Measured between two network namespaces over veth (MSS 1448), 1 MiB writes
 * through Aldeia over DECK tcp, medians of 20 x 1 GiB, 4 alternating runs: 3.2-4.3 GB/s
 * unbounded, 4.3-4.8 GB/s at 128 KiB (96 KiB: 4.4, 160 KiB: 3.4, 192 KiB: 2.7); a C sender
 * alone: 2^20-byte sends 3.0 GB/s, 128 KiB sends 6.7-7.2. On loopback (MSS 65483) the bound
 * cost 20% (3.7-3.9 -> 2.5-2.9 GB/s): there a segment holds a whole block and the burst is
 * what the kernel handles best, so loopback's writes stay whole.
 */
tcp_io_t tcp_io_plain(int fd)
{
    int one = 1, mss = 0;
    socklen_t len = sizeof mss;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int bounded = getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) == 0 && mss < TCP_WRITE_BOUNDED_MSS;
    return (tcp_io_t){ .fd = fd, .write_max = bounded ? TCP_WRITE_MAX : 0 };
}

/* The leading pieces of mh.msg_iov[0..left) one call writes: at most IOV_MAX of them and
 * max bytes (0: no bound), the last one shortened to fit; *cut is that piece's whole length
 * (0: none was), for the caller to give back once the call returned. */
static size_t pieces_within(struct msghdr *mh, size_t left, size_t max, size_t *cut)
{
    size_t k = 0, room = max ? max : SIZE_MAX;
    *cut = 0;
    while (k < left && k < IOV_MAX && room > 0) {
        struct iovec *v = &mh->msg_iov[k++];
        if (v->iov_len > room) {
            *cut = v->iov_len;
            v->iov_len = room;
            break;
        }
        room -= v->iov_len;
    }
    return k;
}

static int plain_writev(const tcp_io_t *io, struct iovec *iov, int iovcnt)
{
    struct msghdr mh = { .msg_iov = iov };
    size_t left = (size_t)iovcnt;   /* pieces from mh.msg_iov on */
    while (left > 0) {
        size_t cut;
        mh.msg_iovlen = pieces_within(&mh, left, io->write_max, &cut);
        ssize_t n = sendmsg(io->fd, &mh, MSG_NOSIGNAL);   /* a dead peer gives EPIPE, not SIGPIPE */
        if (cut) mh.msg_iov[mh.msg_iovlen - 1].iov_len = cut;
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        while (left > 0 && (size_t)n >= mh.msg_iov->iov_len) {
            n -= (ssize_t)mh.msg_iov->iov_len;
            mh.msg_iov++;
            left--;
        }
        if (left > 0) {
            mh.msg_iov->iov_base = (char *)mh.msg_iov->iov_base + n;
            mh.msg_iov->iov_len -= (size_t)n;
        }
    }
    return 0;
}

static ssize_t plain_read_some(int fd, void *buf, size_t max)
{
    for (;;) {
        ssize_t r = recv(fd, buf, max, 0);
        if (r >= 0) return r;
        if (errno != EINTR) return -errno;
    }
}

ssize_t tcp_io_read_some(tcp_io_t *io, void *buf, size_t max)
{
    return io->tls ? tcp_tls_read_some(io, buf, max) : plain_read_some(io->fd, buf, max);
}

int tcp_io_read(tcp_io_t *io, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = tcp_io_read_some(io, p, n);
        if (r <= 0) return (int)r;
        p += r;
        n -= (size_t)r;
    }
    return 1;
}

int tcp_io_writev(tcp_io_t *io, struct iovec *iov, int iovcnt)
{
    return io->tls ? tcp_tls_writev(io, iov, iovcnt) : plain_writev(io, iov, iovcnt);
}

int tcp_io_send_frame(tcp_io_t *io, const tcp_frame_t *f, const void *payload)
{
    struct iovec whole = { (void *)payload, payload ? f->len : 0 };
    return tcp_io_send_framev(io, f, &whole, payload && f->len ? 1 : 0);
}

/* Pieces of a usual post (MicroVAPI: its wire head and a block of the send ring) fit on the
 * stack; more take the heap. */
#define FRAME_PIECES_ON_STACK 8

int tcp_io_send_framev(tcp_io_t *io, const tcp_frame_t *f, const struct iovec *pieces, int cnt)
{
    unsigned char h[TCP_FRAME_BYTES];
    tcp_frame_encode(h, f);
    struct iovec small[FRAME_PIECES_ON_STACK + 1];
    struct iovec *v = cnt <= FRAME_PIECES_ON_STACK ? small : malloc(((size_t)cnt + 1) * sizeof *v);
    if (!v) return ENOMEM;
    v[0] = (struct iovec){ h, sizeof h };
    int n = 1;
    for (int i = 0; i < cnt; i++)
        if (pieces[i].iov_len) v[n++] = pieces[i];   /* the writers advance their copy of the vector */
    int err = tcp_io_writev(io, v, n);
    if (v != small) free(v);
    return err;
}

int tcp_io_read_frame(tcp_io_t *io, tcp_frame_t *f)
{
    unsigned char h[TCP_FRAME_BYTES];
    int rc = tcp_io_read(io, h, sizeof h);
    if (rc <= 0) return rc;
    tcp_frame_decode(h, f);
    return 1;
}

void tcp_io_shutdown(tcp_io_t *io)
{
    if (io->fd >= 0) shutdown(io->fd, SHUT_RDWR);
}

void tcp_io_close(tcp_io_t *io)
{
    tcp_tls_free(io);
    if (io->fd >= 0) close(io->fd);
    io->fd = -1;
}
