/*
 * A proved connection's read side (tcp.h), buffered. Whoever holds the connection's read_lock
 * uses it: its reader, or a retriever that reads the connection while it waits (tcp_wait.c).
 *
 * Its reader reads as before: one read brings a frame's header and, for a short message, its
 * payload (and often the frames behind it), where reading the header and then the payload cost
 * two system calls per message; a payload of at least half of TCP_INBUF_BYTES is read straight
 * into its message, not through the buffer.
 *
 * The retriever never waits for a peer's bytes: it takes in what the socket holds, up to the
 * end of the frame it is filling and the next frame's header (short frames: as many as
 * TCP_INBUF_BYTES hold), in one recv that does not wait (tcp_inbuf_fill), and handles the
 * frames that are whole in the buffer, each where it lies (tcp_inbuf_peek). For that the
 * buffer grows to hold the frame it is filling and the next one's header, up to TCP_INBUF_MAX;
 * a longer frame is its reader's (TCP_HELD_FRAME_MAX).
 *
 *   buf                at             end                      cap
 *   | taken            | read, not taken | free                  |
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "tcp.h"

int tcp_inbuf_init(tcp_inbuf_t *b, tcp_io_t *io)
{
    b->io = io;
    b->at = b->end = 0;
    b->cap = TCP_INBUF_BYTES;
    b->buf = malloc(TCP_INBUF_BYTES);
    return b->buf ? DECK_OK : DECK_ENOMEM;
}

void tcp_inbuf_free(tcp_inbuf_t *b)
{
    free(b->buf);
    b->buf = NULL;
}

int tcp_inbuf_read(tcp_inbuf_t *b, void *dst, size_t n)
{
    char *p = dst;
    for (;;) {
        size_t have = b->end - b->at, take = have < n ? have : n;
        if (take) memcpy(p, b->buf + b->at, take);
        b->at += take;
        p += take;
        n -= take;
        if (n == 0) return 1;
        b->at = b->end = 0;                        /* all taken */
        if (n >= TCP_INBUF_BYTES / 2) return tcp_io_read(b->io, p, n);
        ssize_t r = tcp_io_read_some(b->io, b->buf, b->cap);
        if (r <= 0) return (int)r;
        b->end = (size_t)r;
    }
}

int tcp_inbuf_read_frame(tcp_inbuf_t *b, tcp_frame_t *f)
{
    unsigned char h[TCP_FRAME_BYTES];
    int rc = tcp_inbuf_read(b, h, sizeof h);
    if (rc > 0) tcp_frame_decode(h, f);
    return rc;
}

size_t tcp_inbuf_buffered(const tcp_inbuf_t *b) { return b->end - b->at; }

int tcp_inbuf_frame_buffered(const tcp_inbuf_t *b, uint64_t *total)
{
    size_t have = b->end - b->at;
    *total = TCP_FRAME_BYTES;
    if (have < TCP_FRAME_BYTES) return 0;
    tcp_frame_t f;
    tcp_frame_decode(b->buf + b->at, &f);
    /* A length past what any buffer holds is no frame the holder takes: its reader reads it
     * (and tcp_frames.c refuses it). Saturated, not wrapped. */
    *total = f.len > UINT64_MAX - TCP_FRAME_BYTES ? UINT64_MAX : TCP_FRAME_BYTES + f.len;
    return have >= *total;
}

/* Room for `want` bytes from `at` on: what is there moves to the front when the free end is
 * too short, and the buffer grows when even its whole length is. */
static int make_room(tcp_inbuf_t *b, size_t want)
{
    size_t have = b->end - b->at;
    if (b->cap - b->at >= want && b->end < b->cap) return 1;
    if (have) memmove(b->buf, b->buf + b->at, have);
    b->at = 0;
    b->end = have;
    if (b->cap >= want && b->end < b->cap) return 1;
    size_t cap = b->cap * 2 > want ? b->cap * 2 : want;
    if (cap > TCP_INBUF_MAX) cap = TCP_INBUF_MAX;
    if (cap <= b->end) return 0;
    unsigned char *grown = realloc(b->buf, cap);
    if (!grown) return 0;
    b->buf = grown;
    b->cap = cap;
    return 1;
}

ssize_t tcp_inbuf_fill(tcp_inbuf_t *b, size_t want)
{
    /* The rest of the frame and the next one's header, so that the next fill knows how much
     * to take; or, for short frames, as many as TCP_INBUF_BYTES holds. Taking in more than
     * that would take part of the next long frame, which its retrieve could not then have where
     * it lies (one message a retrieve) and which would be copied into a queued message. */
    size_t have = b->end - b->at, upto = want + TCP_FRAME_BYTES;
    if (upto < TCP_INBUF_BYTES) upto = TCP_INBUF_BYTES;
    if (upto > TCP_INBUF_MAX) upto = TCP_INBUF_MAX;
    if (!make_room(b, upto)) return -ENOMEM;
    size_t max = upto - have < b->cap - b->end ? upto - have : b->cap - b->end;
    for (;;) {
        ssize_t r = recv(b->io->fd, b->buf + b->end, max, MSG_DONTWAIT);
        if (r > 0) b->end += (size_t)r;
        if (r >= 0) return r;
        if (errno != EINTR) return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}

const void *tcp_inbuf_peek(const tcp_inbuf_t *b, size_t n)
{
    return b->end - b->at >= n ? b->buf + b->at : NULL;
}

void tcp_inbuf_skip(tcp_inbuf_t *b, size_t n)
{
    b->at += n;
    if (b->at == b->end) b->at = b->end = 0;
}
