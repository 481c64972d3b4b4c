/*
 * DECK tcp over IPv6: which families a listener accepts (the IPv6 wildcard both, dual stack; an
 * IPv4 wildcard or an IPv6 address its own family only), and static runs whose nodes file names
 * "[::1]:port" and "localhost:port" (whichever family the resolver prefers for the name) passing
 * messages of every size both ways, with a barrier. Skipped, saying so, on a host without IPv6 on
 * loopback.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "util_deck.h"
#include "../deck/tcp.h"

/* Whether a plain TCP connect to host:port is accepted. */
static int connects(const char *host, int port)
{
    tcp_sockaddr_t a;
    CHECK_OK(tcp_resolve(host, port, 1, &a, "test"));
    int fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    int ok = connect(fd, &a.sa, tcp_addr_len(&a)) == 0;
    close(fd);
    return ok;
}

/* Listens on listen_host and checks which of 127.0.0.1 and ::1 get through to it. */
static void listener_accepts(const char *listen_host, int v4, int v6)
{
    tcp_sockaddr_t a;
    int port;
    CHECK_OK(tcp_resolve(listen_host, 0, 1, &a, "test"));
    CHECK_OK(tcp_listen_open(&a, &port, 1, "test"));
    if (connects("127.0.0.1", port) != v4 || connects("::1", port) != v6)
        fprintf(stderr, "a listener on %s: IPv4 %s, IPv6 %s\n", listen_host, v4 ? "expected" : "unexpected",
                v6 ? "expected" : "unexpected");
    CHECK(connects("127.0.0.1", port) == v4);
    CHECK(connects("::1", port) == v6);
    tcp_listen_stop();
}

static void listeners(void)
{
    listener_accepts("::", 1, 1);
    listener_accepts("0.0.0.0", 1, 0);
    listener_accepts("::1", 0, 1);
    listener_accepts("127.0.0.1", 1, 0);
    printf("PASS listeners: the IPv6 wildcard is dual stack, every other address its own family\n");
}

#define ROUNDS 40

/* Node 0 sends messages from 0 bytes to 1 MiB to node 1, which sends each back. */
static int echo_node(int id, int n, void *arg)
{
    deck_mbox_t own, other;
    deck_msg_t m;
    CHECK_OK(deck_mbox_create(&own, id == 0 ? "v6-zero" : "v6-one"));
    CHECK_OK(deck_mbox_clone(&other, id == 0 ? "v6-one" : "v6-zero"));
    CHECK_OK(deck_msg_create(&m, 1 << 20));
    for (int r = 0; r < ROUNDS; r++) {
        unsigned long len = r == ROUNDS - 1 ? 1UL << 20 : (unsigned long)r * r * 97;
        if (id == 0) {
            for (unsigned long k = 0; k < len; k++) m.buf[k] = (char)(k * 7 + (unsigned long)r);
            CHECK_OK(deck_msg_setlength(&m, len));
            CHECK_OK(deck_mbox_post(&other, &m));
        }
        CHECK_OK(deck_msg_clear(&m));
        CHECK_OK(deck_mbox_retrv(&own, &m));
        CHECK(m.len == len);
        for (unsigned long k = 0; k < len; k++)
            if (m.buf[k] != (char)(k * 7 + (unsigned long)r)) CHECK(!"payload byte differs");
        if (id == 1) CHECK_OK(deck_mbox_post(&other, &m));
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&own));
    CHECK_OK(deck_mbox_destroy(&other));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

int main(void)
{
    if (!util_have_ipv6_loopback()) {
        printf("SKIP test_tcp_ipv6: this host has no IPv6 on loopback (::1 cannot be bound)\n");
        return 0;
    }
    listeners();
    int failed = 0;
    util_nodes_host("::1");
    failed |= util_run_test_on("tcp", "static tcp run over [::1]", 2, echo_node, NULL);
    util_nodes_host("localhost");
    failed |= util_run_test_on("tcp", "static tcp run over localhost", 2, echo_node, NULL);
    printf("%s test_tcp_ipv6\n", failed ? "FAIL" : "PASS");
    return failed;
}
