/*
 * Fuzz target: the reader of a proved DECK tcp connection (tcp_conn.c's reader loop over
 * tcp_inbuf_read_frame and tcp_frames.c's tcp_frame_handle): everything node 1, once it has proved
 * itself with the run key, may send node 0. The input is the byte stream node 1 sends.
 *
 * The process is node 0 of a static tcp run of 2 nodes, started once in this process, with
 * three mailboxes: "watched" (deck_mbox_watch for node 1, deck_mbox_limit 4096), "open" (any
 * process, limit 65536) and "nobody" (watched for DECK_NOBODY: admits no other process);
 * DECK_MSG_MAX is 1 MiB. Their indexes are slot | 1 << 16: 0x10000, 0x10001, 0x10002.
 *
 * Per input: a socketpair stands for the connection; the input is written into node 1's end,
 * which then shuts down its writing side (end of stream after the input). On node 0's end a
 * connection record (no reader thread: tcp_conn_start is not called) is read frame by frame as
 * the reader does until the stream ends or a frame ends the connection. Node 1's end keeps
 * reading what node 0 answers (lookup replies), as a live peer would, so a stream of many
 * lookups never fills the socket buffer and blocks node 0. Then the mailboxes are drained.
 * When node 0 answered anything, the input runs a second time with node 1's end closed
 * altogether once the input is written: node 0's first answer then fails (EPIPE, no SIGPIPE)
 * and ends the connection.
 *
 * Checked besides crashes, leaks and hangs: every answer is a LOOKUP_REPLY from node 0 without
 * payload naming a mailbox of this process or -1; every message queued is within its
 * mailbox's limit, none reaches the mailbox that admits nobody; a drained mailbox reports
 * DECK_ETIMEDOUT (nothing left, the peer not gone).
 */
#include <fcntl.h>
#include "fuzz_util.h"
#include "../deck/tcp.h"

#define STREAM_MAX (64 * 1024)           /* bytes of an input sent; fits the socket buffer */

static deck_mbox_t watched, open_mb, nobody;
static deck_msg_t msg;
static tcp_peer_t *peer1;

static void done(void)
{
    deck_msg_destroy(&msg);
    deck_mbox_destroy(&watched);
    deck_mbox_destroy(&open_mb);
    deck_mbox_destroy(&nobody);
    deck_done();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    setenv("DECK_MSG_MAX", "1048576", 1);
    unsetenv("DECK_TCP_ENCRYPTION");
    fuzz_start_static("tcp", 2);
    if (deck_mbox_create(&watched, "watched") || deck_mbox_watch(&watched, 1) || deck_mbox_limit(&watched, 4096)
        || deck_mbox_create(&open_mb, "open") || deck_mbox_limit(&open_mb, 65536)
        || deck_mbox_create(&nobody, "nobody") || deck_mbox_watch(&nobody, DECK_NOBODY)
        || deck_msg_create(&msg, 65536))
        fuzz_die("mailboxes of the fuzz run");
    if (watched.index != 0x10000 || open_mb.index != 0x10001 || nobody.index != 0x10002)
        fuzz_die("mailbox indexes 0x%x 0x%x 0x%x, the seeds expect 0x10000 0x10001 0x10002", watched.index,
                 open_mb.index, nobody.index);
    if (!(peer1 = tcp_peer_find(1))) fuzz_die("tcp_peer_find(1)");
    atexit(done);
    return 0;
}

/* Reads and checks what node 0 sent node 1 so far; returns how many whole frames. */
static int read_answers(int fd, unsigned char *partial, size_t *have)
{
    for (int frames = 0;; frames++) {
        ssize_t r;
        do {
            r = recv(fd, partial + *have, TCP_FRAME_BYTES - *have, MSG_DONTWAIT);
            if (r <= 0) return frames;
            *have += (size_t)r;
        } while (*have < TCP_FRAME_BYTES);
        *have = 0;
        tcp_frame_t f;
        tcp_frame_decode(partial, &f);
        if (f.type != FRAME_LOOKUP_REPLY || f.src != 0 || f.len != 0
            || (f.index != -1 && f.index != watched.index && f.index != open_mb.index && f.index != nobody.index))
            fuzz_die("node 0 answered with frame type %u src %d index %d len %llu", f.type, f.src, f.index,
                     (unsigned long long)f.len);
    }
}

static void drain(deck_mbox_t *mb, unsigned long limit)
{
    int rc;
    while ((rc = deck_mbox_retrv_timed(mb, &msg, 0)) == DECK_OK)
        if (msg.len > limit) fuzz_die("mailbox '%s' (limit %lu) held a message of %lu bytes", mb->name, limit, msg.len);
    if (rc != DECK_ETIMEDOUT) fuzz_die("draining mailbox '%s' ended with %d (%s)", mb->name, rc, deck_strerror(rc));
}

/* One connection carrying the stream; returns how many answers node 0 sent. */
static int run_stream(const uint8_t *data, size_t size, int hang_up)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) fuzz_die("socketpair: %s", strerror(errno));
    /* sv[1] is node 1's end: the stream, then end of stream. */
    for (size_t sent = 0; sent < size;) {
        ssize_t n = send(sv[1], data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n <= 0) fuzz_die("writing %zu bytes into a socketpair: %s", size, n < 0 ? strerror(errno) : "0");
        sent += (size_t)n;
    }
    shutdown(sv[1], SHUT_WR);
    if (hang_up) {
        close(sv[1]);
        sv[1] = -1;
    }

    tcp_conn_t *c = calloc(1, sizeof *c);
    if (!c) fuzz_die("out of memory");
    c->io = (tcp_io_t){ .fd = sv[0], .tls = NULL };
    c->peer = peer1;
    atomic_init(&c->refs, 1);
    atomic_init(&c->closed, 0);
    deck_mutex_init(&c->send_lock);
    snprintf(c->origin, sizeof c->origin, "node 1 at fuzz input");
    if (tcp_inbuf_init(&c->in, &c->io)) fuzz_die("out of memory");

    unsigned char partial[TCP_FRAME_BYTES];
    size_t have = 0;
    int answers = 0;
    tcp_frame_t f;
    long t0 = fuzz_now_ms();
    while (!atomic_load(&c->closed) && tcp_inbuf_read_frame(&c->in, &f) > 0) {
        int go = tcp_frame_handle(c, &f);
        if (sv[1] >= 0) answers += read_answers(sv[1], partial, &have);
        if (!go) break;
    }
    if (fuzz_now_ms() - t0 > 1000) fuzz_die("reading %zu bytes took %ld ms", size, fuzz_now_ms() - t0);

    drain(&watched, 4096);
    drain(&open_mb, 65536);
    if (deck_mbox_retrv_timed(&nobody, &msg, 0) != DECK_ETIMEDOUT) fuzz_die("the mailbox that admits nobody got a message");
    tcp_inbuf_free(&c->in);
    deck_mutex_destroy(&c->send_lock);
    close(sv[0]);
    if (sv[1] >= 0) close(sv[1]);
    free(c);
    return answers;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > STREAM_MAX) size = STREAM_MAX;
    if (run_stream(data, size, 0) > 0) run_stream(data, size, 1);
    return 0;
}
