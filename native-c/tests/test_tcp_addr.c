/*
 * The addresses of DECK tcp, IPv4 and IPv6 alike: tcp_resolve on literals of both families (bare,
 * in brackets, in Java's long form, scoped, IPv4-mapped) and on names, its refusals (a name where
 * only a literal will do, unbalanced brackets, a name that does not resolve), how addresses
 * compare and print; and the nodes-file lines "host", "host:port", "v4:port", "[v6]" and
 * "[v6]:port", with every malformed form refused by a DECK_ECONFIG that names the line.
 */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util_deck.h"
#include "../deck/internal.h"
#include "../deck/tcp.h"

static void check_text(const char *host, int port, int family, const char *text)
{
    tcp_sockaddr_t a;
    char buf[TCP_ADDR_TEXT];
    CHECK_OK(tcp_resolve(host, port, 1, &a, "test"));
    tcp_addr_unmap(&a);
    CHECK(a.sa.sa_family == family);
    CHECK(tcp_addr_port(&a) == port);
    tcp_addr_text(&a, buf, sizeof buf);
    if (strcmp(buf, text) != 0) fprintf(stderr, "%s printed as %s, not %s\n", host, buf, text);
    CHECK(strcmp(buf, text) == 0);
}

static void refused(const char *host, int numeric, const char *why)
{
    tcp_sockaddr_t a;
    CHECK_RC(tcp_resolve(host, 1, numeric, &a, "test"), DECK_ECONFIG);
    if (!strstr(deck_last_error(), why)) fprintf(stderr, "'%s': %s\n", host, deck_last_error());
    CHECK(strstr(deck_last_error(), why) != NULL);
}

static void resolving(void)
{
    check_text("127.0.0.1", 5, AF_INET, "127.0.0.1:5");
    check_text("::1", 6, AF_INET6, "[::1]:6");
    check_text("[::1]", 7, AF_INET6, "[::1]:7");
    check_text("0:0:0:0:0:0:0:1", 8, AF_INET6, "[::1]:8");          /* Inet6Address.getHostAddress */
    check_text("::ffff:10.1.2.3", 9, AF_INET, "10.1.2.3:9");         /* what a dual-stack accept gives */
    char scoped[32];
    snprintf(scoped, sizeof scoped, "[fe80::1%%%u]:10", if_nametoindex("lo"));
    check_text("fe80::1%lo", 10, AF_INET6, scoped);

    tcp_sockaddr_t a, b, c;
    CHECK_OK(tcp_resolve("localhost", 11, 0, &a, "test"));
    CHECK(a.sa.sa_family == AF_INET ? a.v4.sin_addr.s_addr == htonl(INADDR_LOOPBACK) : IN6_IS_ADDR_LOOPBACK(&a.v6.sin6_addr));
    CHECK_OK(tcp_resolve("::1", 1, 1, &a, "test"));
    CHECK_OK(tcp_resolve("0::1", 2, 1, &b, "test"));
    CHECK_OK(tcp_resolve("127.0.0.1", 1, 1, &c, "test"));
    CHECK(tcp_addr_same(&a, &b, 0) && !tcp_addr_same(&a, &b, 1));
    CHECK(!tcp_addr_same(&a, &c, 0));                                /* one host, two families */
    CHECK(!tcp_addr_is_any(&a) && !tcp_addr_is_any(&c));
    tcp_addr_any(&a);
    tcp_addr_any(&c);
    CHECK(tcp_addr_is_any(&a) && a.sa.sa_family == AF_INET6 && tcp_addr_port(&a) == 1);
    CHECK(tcp_addr_is_any(&c) && c.sa.sa_family == AF_INET && tcp_addr_port(&c) == 1);

    refused("localhost", 1, "not an IPv4 or IPv6 address");
    refused("[::1", 0, "[address]");
    refused("[]", 0, "[address]");
    refused("no-such-host.invalid", 0, "cannot resolve host 'no-such-host.invalid'");
    printf("PASS resolving v4 and v6 literals and names\n");
}

/* The nodes file of `lines` (n nodes): its entries, or the error (rc). */
static int read_nodes(const char *lines, int n, deck_node_addr_t **nodes)
{
    char path[] = "/tmp/deck_test_nodes_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, lines, strlen(lines)) == (ssize_t)strlen(lines));
    close(fd);
    int rc = deck_nodes_read(path, n, nodes);
    unlink(path);
    return rc;
}

static void node_is(const deck_node_addr_t *node, const char *host, int port)
{
    if (strcmp(node->host, host) != 0 || node->port != port) fprintf(stderr, "read %s port %d\n", node->host, node->port);
    CHECK(strcmp(node->host, host) == 0 && node->port == port);
}

static void nodes_files(void)
{
    deck_node_addr_t *nodes;
    CHECK_OK(read_nodes("10.0.0.1:7000\n[::1]:7001\n[fe80::1%lo]   # scoped, default port\n"
                        "localhost\nhost.example:7004\n[2001:db8::5]:65535\n"
                        "[0:0:0:0:0:0:0:1]:7006   # as DeckLauncher writes Java's ::1\n", 7, &nodes));
    node_is(&nodes[0], "10.0.0.1", 7000);
    node_is(&nodes[1], "::1", 7001);
    node_is(&nodes[2], "fe80::1%lo", DECK_DEFAULT_BASE_PORT + 2);
    node_is(&nodes[3], "localhost", DECK_DEFAULT_BASE_PORT + 3);
    node_is(&nodes[4], "host.example", 7004);
    node_is(&nodes[5], "2001:db8::5", 65535);
    node_is(&nodes[6], "0:0:0:0:0:0:0:1", 7006);
    free(nodes);

    static const struct { const char *line, *why; } bad[] = {
        { "::1:5\n", "an IPv6 address takes brackets" },
        { "::1\n", "an IPv6 address takes brackets" },
        { "[::1\n", "is written [address] or [address]:port" },
        { "[::1]x\n", "is written [address] or [address]:port" },
        { "[::1]]:5\n", "is written [address] or [address]:port" },
        { "[::1]:\n", "bad port ''" },
        { "[::1]:0\n", "bad port '0'" },
        { "[::1]:70000\n", "bad port '70000'" },
        { "[::1]:5x\n", "bad port '5x'" },
        { "[]:5\n", "bad host ''" },
        { "[a[b]:5\n", "bad host 'a[b'" },
        { "host:\n", "bad port ''" },
        { "a]b:5\n", "bad host 'a]b'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_RC(read_nodes(bad[i].line, 1, &nodes), DECK_ECONFIG);
        const char *e = deck_last_error();
        if (!strstr(e, bad[i].why) || !strstr(e, "line 1")) fprintf(stderr, "'%s': %s\n", bad[i].line, e);
        CHECK(strstr(e, bad[i].why) && strstr(e, "line 1"));
    }
    printf("PASS nodes files with host, host:port, v4:port, [v6] and [v6]:port\n");
}

int main(void)
{
    resolving();
    nodes_files();
    printf("PASS test_tcp_addr\n");
    return 0;
}
