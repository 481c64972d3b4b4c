/*
 * A plain connection's writes (deck/tcp_io.c): over a path of network-sized segments one
 * system call writes at most TCP_WRITE_MAX bytes, over loopback's 64 KiB segments a frame goes
 * whole; either way every byte of a vector arrives once and in order, whatever the pieces'
 * sizes against the bound (a piece cut by it, a piece that ends on it, many small ones).
 * Loopback stands for a network path by clamping the connection's MSS (TCP_MAXSEG before
 * connecting), as a 1500-byte MTU would.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "util_deck.h"
#include "../deck/tcp.h"

#define NETWORK_MSS 1400

/* A connected loopback pair; mss > 0 clamps both ends' segments to it. */
static void connected_pair(int mss, int *client, int *server)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(ls >= 0);
    if (mss > 0) CHECK(setsockopt(ls, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss) == 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(ls, 1) == 0);
    CHECK(getsockname(ls, (struct sockaddr *)&a, &len) == 0);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(c >= 0);
    if (mss > 0) CHECK(setsockopt(c, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss) == 0);
    CHECK(connect(c, (struct sockaddr *)&a, sizeof a) == 0);
    int s = accept(ls, NULL, NULL);
    CHECK(s >= 0);
    close(ls);
    *client = c;
    *server = s;
}

static int nodelay(int fd)
{
    int on = 0;
    socklen_t len = sizeof on;
    CHECK(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &len) == 0);
    return on;
}

static void test_bound_follows_the_path(void)
{
    int c, s;
    connected_pair(0, &c, &s);
    tcp_io_t lo_c = tcp_io_plain(c), lo_s = tcp_io_plain(s);
    CHECK(lo_c.write_max == 0 && lo_s.write_max == 0);   /* loopback: frames go whole */
    CHECK(nodelay(c) && nodelay(s) && lo_c.tls == NULL);
    close(c);
    close(s);
    connected_pair(NETWORK_MSS, &c, &s);
    tcp_io_t net_c = tcp_io_plain(c), net_s = tcp_io_plain(s);
    CHECK(net_c.write_max == TCP_WRITE_MAX && net_s.write_max == TCP_WRITE_MAX);
    CHECK(nodelay(c) && nodelay(s));
    close(c);
    close(s);
}

/* ---- a vector written whole, read back in order ---- */

static const size_t PIECES[] = {
    24, 16, 4, 60000, 4, 60000,          /* a frame's header, then blocks with their lengths */
    TCP_WRITE_MAX - 24 - 16 - 4 - 60000 - 4 - 60000,   /* ends exactly on the bound */
    1, 300001, 7,                        /* one cut twice by it, then a tail */
    TCP_WRITE_MAX, TCP_WRITE_MAX + 1, 3,
};
#define NPIECES (sizeof PIECES / sizeof PIECES[0])

static uint8_t byte_at(size_t i) { return (uint8_t)(i * 31 + (i >> 9) + 5); }

struct writer {
    tcp_io_t io;
    uint8_t *data;
    int rc;
};

static void *write_vector(void *arg)
{
    struct writer *w = arg;
    struct iovec iov[NPIECES];
    size_t at = 0;
    for (size_t i = 0; i < NPIECES; i++) {
        iov[i] = (struct iovec){ .iov_base = w->data + at, .iov_len = PIECES[i] };
        at += PIECES[i];
    }
    w->rc = tcp_io_writev(&w->io, iov, (int)NPIECES);
    if (w->rc) shutdown(w->io.fd, SHUT_WR);   /* the reader sees the end, not a hang */
    return NULL;
}

static void test_vector_arrives_whole(int mss)
{
    int c, s;
    connected_pair(mss, &c, &s);
    size_t total = 0;
    for (size_t i = 0; i < NPIECES; i++) total += PIECES[i];
    struct writer w = { .io = tcp_io_plain(c), .data = malloc(total) };
    CHECK(w.data != NULL);
    for (size_t i = 0; i < total; i++) w.data[i] = byte_at(i);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, write_vector, &w) == 0);
    uint8_t *got = malloc(total);
    CHECK(got != NULL);
    tcp_io_t in = tcp_io_plain(s);
    CHECK(tcp_io_read(&in, got, total) == 1);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(w.rc == 0);
    for (size_t i = 0; i < total; i++)
        if (got[i] != byte_at(i)) {
            fprintf(stderr, "byte %zu of %zu differs (mss %d)\n", i, total, mss);
            CHECK(0);
        }
    char extra;
    close(c);
    CHECK(recv(s, &extra, 1, 0) == 0);   /* nothing beyond the vector */
    close(s);
    free(got);
    free(w.data);
}

int main(void)
{
    test_bound_follows_the_path();
    test_vector_arrives_whole(0);
    test_vector_arrives_whole(NETWORK_MSS);
    printf("tcp io: bound by the path's segments, vectors whole and in order\n");
    return 0;
}
