/*
 * Attacks on a live DECK tcp connection (shared/spec/security.md). Node 1 streams numbered
 * messages to a mailbox of node 0 watched for it, while this process, the attacker, goes at
 * node 0's port: as a stranger (garbage, an HTTP request, a silent and a half-sent handshake,
 * impersonating node 1 without the run key, a flood of connections) and as a member that holds
 * the run key but breaks the rules (a message for a mailbox that admits node 1 only, oversized
 * and negative-index frames, unknown types, reserved bytes set, a false source, a name with a NUL, an answer nobody
 * asked for). Each attack must end only the attacker's connection, at once or at the handshake
 * deadline; node 0 checks that the stream arrived whole and in order, and reports that its
 * handshakes, connections and descriptors are back to what they were.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include "util_deck.h"
#include "../deck/tcp.h"

#define MESSAGES 3000
/* The run's nodes: 0 (the victim receiver), 1 (its sender), and one id for each connection the
 * attacker makes as a member: a node whose connection node 0 ended has left the run for good,
 * so each member attack comes as another node. */
#define NODES 16
#define AUTH_MS  400

/* ---- node 0: the victim receiver; answers "stats" on its control pipe ---- */

typedef struct { int in, out; } pipes_t;

static void *serve_stats(void *arg)
{
    pipes_t *p = arg;
    char cmd[16];
    while (read(p->in, cmd, sizeof cmd) > 0) {
        char line[96];
        int n = snprintf(line, sizeof line, "%d %d %d\n", tcp_listen_pending(), tcp_conns_live(), util_open_fds());
        CHECK(write(p->out, line, (size_t)n) == n);
    }
    return NULL;
}

static int node0(const char *nodes, pipes_t *ctl)
{
    CHECK_OK(deck_init_static(0, NODES, nodes));
    deck_mbox_t victim, open;
    deck_msg_t m;
    CHECK_OK(deck_mbox_create(&open, "open"));        /* any member may post, 4 KiB at most */
    CHECK_OK(deck_mbox_limit(&open, 4096));
    CHECK_OK(deck_mbox_create(&victim, "victim"));
    CHECK_OK(deck_mbox_watch(&victim, 1));
    CHECK_OK(deck_mbox_limit(&victim, 4096));
    CHECK_OK(deck_msg_create(&m, 4096));
    pthread_t stats;
    CHECK(pthread_create(&stats, NULL, serve_stats, ctl) == 0);
    for (int i = 0; i < MESSAGES; i++) {
        int got;
        CHECK_OK(deck_mbox_retrv(&victim, &m));
        CHECK(m.len == 100);
        CHECK_OK(deck_msg_unpack(&m, DECK_INT, &got, 1));
        if (got != i) fprintf(stderr, "message %d arrived as number %d\n", i, got);
        CHECK(got == i);
        for (unsigned long k = sizeof got; k < m.len; k++) CHECK(m.buf[k] == (char)(i + (int)k));
    }
    pthread_join(stats, NULL);                 /* the attacker closes the pipe when done */
    CHECK_OK(deck_msg_destroy(&m));
    CHECK_OK(deck_mbox_destroy(&victim));
    CHECK_OK(deck_mbox_destroy(&open));
    CHECK_OK(deck_done());
    return 0;
}

/* ---- node 1: the victim sender ---- */

static int node1(const char *nodes, int hold)
{
    CHECK_OK(deck_init_static(1, NODES, nodes));
    deck_mbox_t victim;
    deck_msg_t m;
    CHECK_OK(deck_mbox_clone_at(&victim, 0, "victim"));
    CHECK_OK(deck_msg_create(&m, 100));
    for (int i = 0; i < MESSAGES; i++) {
        CHECK_OK(deck_msg_clear(&m));
        CHECK_OK(deck_msg_pack(&m, DECK_INT, &i, 1));
        for (unsigned long k = sizeof i; k < 100; k++) m.buf[k] = (char)(i + (int)k);
        CHECK_OK(deck_msg_setlength(&m, 100));
        CHECK_OK(deck_mbox_post(&victim, &m));
        if (i % 20 == 0) util_sleep_ms(10);   /* the stream goes on during the attacks */
    }
    CHECK_OK(deck_msg_destroy(&m));
    CHECK_OK(deck_mbox_destroy(&victim));
    char c;
    while (read(hold, &c, 1) > 0) {}          /* its connection stays until the attacks are over */
    CHECK_OK(deck_done());
    return 0;
}

/* ---- the attacker ---- */

static tcp_sockaddr_t target;
static pipes_t ctl;                           /* to and from node 0 */

static void stats(int *pending, int *live, int *fds)
{
    CHECK(write(ctl.out, "stats", 5) == 5);
    char line[96];
    ssize_t n = read(ctl.in, line, sizeof line - 1);
    CHECK(n > 0);
    line[n] = '\0';
    CHECK(sscanf(line, "%d %d %d", pending, live, fds) == 3);
}

/* Waits (bounded) until node 0 has no handshake pending and `live` connections. */
static void expect_settled(int live_want, int fds_want, const char *after)
{
    int pending = -1, live = -1, fds = -1;
    for (int tries = 0; tries < 100; tries++) {
        stats(&pending, &live, &fds);
        if (pending == 0 && live == live_want && (fds_want < 0 || fds == fds_want)) return;
        util_sleep_ms(20);
    }
    fprintf(stderr, "after %s: node 0 has %d handshakes pending, %d connections, %d descriptors (want 0, %d, %d)\n",
            after, pending, live, fds, live_want, fds_want);
    CHECK(!"node 0 did not return to its baseline");
}

static int dial(void)
{
    int fd = socket(target.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    CHECK(connect(fd, &target.sa, tcp_addr_len(&target)) == 0);
    int one = 1;                      /* a frame right after the handshake goes out at once, as DECK's do */
    CHECK(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0);
    return fd;
}

/* Milliseconds until node 0 closes fd (reading and dropping whatever it sends); -1 if not
 * within limit_ms. */
static long closed_within(int fd, int limit_ms)
{
    long t0 = util_now_ms();
    char buf[256];
    for (;;) {
        long left = limit_ms - (util_now_ms() - t0);
        if (left <= 0) return -1;
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll(&p, 1, (int)left) <= 0) continue;
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET)) return util_now_ms() - t0;
    }
}

static void send_all(int fd, const void *buf, size_t n)
{
    CHECK(send(fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n);
}

static void send_frame(int fd, uint32_t type, int32_t src, int32_t index, uint64_t len, const void *payload, size_t n)
{
    unsigned char h[TCP_FRAME_BYTES];
    tcp_frame_t f = { .type = type, .src = src, .index = index, .len = len };
    tcp_frame_encode(h, &f);
    send_all(fd, h, sizeof h);
    if (n) send_all(fd, payload, n);
}

static void attack(const char *name, int fd, int expect_ms)
{
    long ms = closed_within(fd, expect_ms);
    if (ms < 0) fprintf(stderr, "attack '%s': connection still open after %d ms\n", name, expect_ms);
    CHECK(ms >= 0);
    close(fd);
    printf("  %-58s closed after %ld ms\n", name, ms);
}

static deck_node_addr_t *addrs;
static int next_member = 2;

/* A connection that proves itself, with the run key, as a member of the run not seen before
 * (tcp_peers_self() says which). */
static int member(void)
{
    CHECK(next_member < NODES);
    tcp_peers_done();
    CHECK_OK(tcp_peers_init(next_member++, NODES, addrs));   /* the handshake claims this id */
    int fd = dial();
    tcp_io_t io = { .fd = fd };
    CHECK_OK(tcp_auth_connect(&io, 0, deck_auth_run_key(), 2000, "node 0"));
    return fd;
}

static void attack_as_stranger(void)
{
    int fd = dial();
    const char *http = "GET / HTTP/1.1\r\nHost: node0\r\n\r\n";
    send_all(fd, http, strlen(http));
    attack("an HTTP request", fd, 1000);

    fd = dial();
    unsigned char junk[TCP_FRAME_BYTES + TCP_AUTH1_BYTES];
    memset(junk, 0xff, sizeof junk);
    send_all(fd, junk, sizeof junk);
    attack("48 bytes of 0xff", fd, 1000);

    fd = dial();
    attack("a silent connection", fd, AUTH_MS + 1000);

    fd = dial();
    send_all(fd, junk, 10);
    attack("a handshake sent half", fd, AUTH_MS + 1000);

    /* Claims to be node 1, the victim's own sender, but cannot prove it. */
    fd = dial();
    unsigned char hello[TCP_AUTH1_BYTES] = { 0 }, answer[TCP_FRAME_BYTES + TCP_AUTH2_BYTES], forged[DECK_MAC_BYTES];
    hello[3] = TCP_AUTH_VERSION;
    send_frame(fd, FRAME_AUTH1, 1, 0, TCP_AUTH1_BYTES, hello, sizeof hello);
    CHECK(recv(fd, answer, sizeof answer, MSG_WAITALL) == (ssize_t)sizeof answer);   /* node 0's proof */
    memset(forged, 0x5a, sizeof forged);
    send_frame(fd, FRAME_AUTH3, 1, 0, TCP_AUTH3_BYTES, forged, sizeof forged);
    attack("impersonating node 1 with a forged proof", fd, 1000);

    /* Node 0 must prove itself too: with a wrong key the connecting side gives up. */
    fd = dial();
    tcp_io_t io = { .fd = fd };
    unsigned char wrong[DECK_KEY_BYTES];
    memset(wrong, 7, sizeof wrong);
    CHECK_RC(tcp_auth_connect(&io, 0, wrong, 2000, "node 0"), DECK_EPROTO);
    printf("  %-58s refused: %s\n", "connecting with a wrong key", deck_last_error());
    close(fd);

    /* A member whose encryption setting differs is refused, and told why in the log. */
    fd = dial();
    io = (tcp_io_t){ .fd = fd };
    setenv("DECK_TCP_ENCRYPTION", "on", 1);
    CHECK_RC(tcp_auth_connect(&io, 0, deck_auth_run_key(), 2000, "node 0"), DECK_EPROTO);
    unsetenv("DECK_TCP_ENCRYPTION");
    printf("  %-58s refused: %s\n", "a member asking for TLS from one that runs without", deck_last_error());
    close(fd);

    /* A flood: far more connections than node 0 keeps handshakes for one address. */
    enum { FLOOD = 300 };
    int fds[FLOOD];
    for (int i = 0; i < FLOOD; i++) fds[i] = dial();
    util_sleep_ms(200);
    int pending, live, open;
    stats(&pending, &live, &open);
    printf("  %-58s node 0 keeps %d handshakes\n", "300 silent connections at once", pending);
    CHECK(pending <= 32);
    for (int i = 0; i < FLOOD; i++) close(fds[i]);
}

/* The index of node 0's mailbox `name`, asked on a member's connection fd. */
static int lookup(int fd, const char *name)
{
    unsigned char reply[TCP_FRAME_BYTES];
    send_frame(fd, FRAME_LOOKUP, tcp_peers_self(), 0, strlen(name), name, strlen(name));
    CHECK(recv(fd, reply, sizeof reply, MSG_WAITALL) == (ssize_t)sizeof reply);
    tcp_frame_t f;
    tcp_frame_decode(reply, &f);
    CHECK(f.type == FRAME_LOOKUP_REPLY && f.index > 0);
    return f.index;
}

static void attack_as_member(void)
{
    int fd = member();
    int victim = lookup(fd, "victim"), open = lookup(fd, "open");
    char payload[100] = "injected";
    send_frame(fd, FRAME_DATA, tcp_peers_self(), victim, sizeof payload, payload, sizeof payload);
    attack("member: a message for a mailbox that admits node 1 only", fd, 1000);

    fd = member();
    send_frame(fd, FRAME_DATA, tcp_peers_self(), open, 4097, NULL, 0);
    attack("member: 4097 bytes for a mailbox that admits 4096", fd, 1000);

    fd = member();
    send_frame(fd, FRAME_DATA, tcp_peers_self(), 0x7fff0000, 1ull << 40, NULL, 0);
    attack("member: a message of 2^40 bytes", fd, 1000);

    fd = member();
    send_frame(fd, FRAME_DATA, tcp_peers_self(), -5, 8, payload, 8);
    attack("member: a negative mailbox index", fd, 1000);

    fd = member();
    send_frame(fd, 99, tcp_peers_self(), 0, 0, NULL, 0);
    attack("member: frame type 99", fd, 1000);

    fd = member();
    unsigned char h[TCP_FRAME_BYTES];
    tcp_frame_t reserved = { .type = FRAME_DATA, .src = tcp_peers_self(), .index = open, .len = 8 };
    tcp_frame_encode(h, &reserved);
    h[13] = 1;                                       /* bytes 12..15 are reserved, 0 */
    send_all(fd, h, sizeof h);
    send_all(fd, payload, 8);
    attack("member: a frame with its reserved bytes set", fd, 1000);

    fd = member();
    send_frame(fd, FRAME_DATA, 1, victim, 8, payload, 8);
    attack("member: a frame claiming to come from node 1", fd, 1000);

    fd = member();
    send_frame(fd, FRAME_LOOKUP, tcp_peers_self(), 0, 6, "vi\0tim", 6);
    attack("member: a mailbox name with a NUL byte", fd, 1000);

    fd = member();
    send_frame(fd, FRAME_LOOKUP_REPLY, tcp_peers_self(), 3, 0, NULL, 0);
    attack("member: a lookup answer nobody asked for", fd, 1000);

    fd = member();
    send_frame(fd, FRAME_AUTH1, tcp_peers_self(), 0, TCP_AUTH1_BYTES, payload, TCP_AUTH1_BYTES);
    attack("member: a second handshake on a proved connection", fd, 1000);

    /* Node 2's connection was ended above: it has left the run, and comes back in vain (what it
     * sent now would arrive after its mailboxes' watchers were told it had gone). */
    next_member = 2;
    fd = member();
    attack("member: a node that has left, connecting again", fd, 1000);
}

int main(void)
{
    char nodes[64];
    util_nodes_file(NODES, nodes, sizeof nodes);
    setenv("DECK_AUTH_TIMEOUT_MS", "400", 1);
    setenv("DECK_TRANSPORT", "tcp", 1);
    int to0[2], from0[2];
    CHECK(pipe(to0) == 0 && pipe(from0) == 0);
    fflush(NULL);
    pid_t p0 = fork();
    CHECK(p0 >= 0);
    if (p0 == 0) {
        alarm(60);
        close(to0[1]);
        close(from0[0]);
        pipes_t mine = { to0[0], from0[1] };
        exit(node0(nodes, &mine));
    }
    close(to0[0]);
    close(from0[1]);
    ctl = (pipes_t){ from0[0], to0[1] };
    int hold[2];
    CHECK(pipe(hold) == 0);
    pid_t p1 = fork();
    CHECK(p1 >= 0);
    if (p1 == 0) {
        alarm(60);
        close(hold[1]);
        close(ctl.in);
        close(ctl.out);
        exit(node1(nodes, hold[0]));
    }
    close(hold[0]);

    CHECK_OK(deck_auth_load_run_secret());
    CHECK_OK(deck_nodes_read(nodes, NODES, &addrs));
    CHECK_OK(tcp_resolve(addrs[0].host, addrs[0].port, 0, &target, "test"));
    CHECK_OK(tcp_peers_init(next_member, NODES, addrs));      /* a stranger's claims need an id too */
    int pending, live, baseline;
    do {
        util_sleep_ms(20);
        stats(&pending, &live, &baseline);
    } while (live < 1);                        /* node 1's connection is up: the stream runs */
    printf("node 0: %d connection, %d descriptors before the attacks\n", live, baseline);
    attack_as_stranger();
    expect_settled(1, baseline, "the strangers' attacks");
    attack_as_member();
    expect_settled(1, baseline, "the members' attacks");
    stats(&pending, &live, &baseline);
    printf("node 0: %d handshakes pending, %d connection, %d descriptors after the attacks\n", pending, live, baseline);
    close(ctl.out);                            /* node 0 may end once its stream is complete */
    close(hold[1]);                            /* and node 1 after it */
    int ok = 1, status;
    CHECK(waitpid(p1, &status, 0) == p1);
    ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
    CHECK(waitpid(p0, &status, 0) == p0);
    ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
    tcp_peers_done();
    free(addrs);
    deck_auth_clear();
    unlink(nodes);
    printf("%s test_tcp_attacks (the stream of %d messages arrived whole and in order)\n", ok ? "PASS" : "FAIL", MESSAGES);
    return !ok;
}
