/*
 * A proved connection's read side (tcp.h), buffered: one read brings a frame's header and, for
 * a short message, its payload (and often the frames behind it), where reading the header and
 * then the payload cost two system calls per message. A payload of at least half the buffer is
 * read straight into its message, not through the buffer. Whoever holds the connection's
 * read_lock uses it: its reader, or a retriever that reads the connection while it waits
 * (tcp_wait.c), which reads a frame only once all of it is there (tcp_inbuf_frame_ready).
 */
#include <stdlib.h>
#include <string.h>
#include "tcp.h"

int tcp_inbuf_init(tcp_inbuf_t *b, tcp_io_t *io)
{
    b->io = io;
    b->at = b->end = 0;
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
        ssize_t r = tcp_io_read_some(b->io, b->buf, TCP_INBUF_BYTES);
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

int tcp_inbuf_frame_ready(tcp_inbuf_t *b, size_t avail, uint64_t *need)
{
    size_t have = b->end - b->at;
    if (have + avail == 0) return -1;
    if (have < TCP_FRAME_BYTES) {
        *need = TCP_FRAME_BYTES - have;
        if (have + avail < TCP_FRAME_BYTES) return 0;
        /* The header's rest is in the socket: what is here moves to the front and one read
         * brings what is there (it does not wait: `avail` bytes are). */
        memmove(b->buf, b->buf + b->at, have);
        b->at = 0;
        b->end = have;
        size_t want = TCP_INBUF_BYTES - have < avail ? TCP_INBUF_BYTES - have : avail;
        ssize_t r = tcp_io_read_some(b->io, b->buf + have, want);
        if (r <= 0) return 0;               /* its reader reads it again and ends the connection */
        b->end += (size_t)r;
        avail -= (size_t)r;
        have += (size_t)r;
        if (have < TCP_FRAME_BYTES) {
            *need = TCP_FRAME_BYTES - have;
            return 0;
        }
    }
    tcp_frame_t f;
    tcp_frame_decode(b->buf + b->at, &f);
    uint64_t rest = (uint64_t)(have - TCP_FRAME_BYTES);
    *need = f.len > rest ? f.len - rest : 0;
    return *need <= avail ? 1 : 0;
}
