/* Addresses of the TCP transport, IPv4 and IPv6 alike: resolving, comparing, printing. */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "tcp.h"

int tcp_resolve(const char *host, int port, int numeric, tcp_sockaddr_t *out, const char *what)
{
    /* "[v6]" is how a nodes file or a URL writes an IPv6 literal: the resolver wants it bare. */
    char bare[256];
    size_t n = strlen(host);
    if (host[0] == '[') {
        if (n < 3 || host[n - 1] != ']' || n - 2 >= sizeof bare)
            return deck_fail(DECK_ECONFIG, "%s: bad host '%s': an IPv6 address in brackets is [address]", what, host);
        memcpy(bare, host + 1, n - 2);
        bare[n - 2] = '\0';
        host = bare;
    }
    /* AF_UNSPEC without AI_ADDRCONFIG: ::1 must resolve on a host whose only IPv6 is loopback. */
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = numeric ? AI_NUMERICHOST : 0 }, *res;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0)
        return deck_fail(DECK_ECONFIG, "%s: cannot resolve host '%s': %s", what, host,
                         numeric && rc == EAI_NONAME ? "not an IPv4 or IPv6 address" : gai_strerror(rc));
    memset(out, 0, sizeof *out);
    memcpy(out, res->ai_addr, res->ai_addrlen <= sizeof *out ? res->ai_addrlen : sizeof *out);
    freeaddrinfo(res);
    if (out->sa.sa_family == AF_INET6) out->v6.sin6_port = htons((uint16_t)port);
    else out->v4.sin_port = htons((uint16_t)port);
    return DECK_OK;
}

socklen_t tcp_addr_len(const tcp_sockaddr_t *a)
{
    return a->sa.sa_family == AF_INET6 ? sizeof a->v6 : sizeof a->v4;
}

int tcp_addr_port(const tcp_sockaddr_t *a)
{
    return ntohs(a->sa.sa_family == AF_INET6 ? a->v6.sin6_port : a->v4.sin_port);
}

int tcp_addr_same(const tcp_sockaddr_t *a, const tcp_sockaddr_t *b, int ports)
{
    if (a->sa.sa_family != b->sa.sa_family || (ports && tcp_addr_port(a) != tcp_addr_port(b))) return 0;
    if (a->sa.sa_family == AF_INET6)
        return memcmp(&a->v6.sin6_addr, &b->v6.sin6_addr, sizeof a->v6.sin6_addr) == 0
               && a->v6.sin6_scope_id == b->v6.sin6_scope_id;
    return a->v4.sin_addr.s_addr == b->v4.sin_addr.s_addr;
}

void tcp_addr_any(tcp_sockaddr_t *a)
{
    if (a->sa.sa_family == AF_INET6) {
        a->v6.sin6_addr = in6addr_any;
        a->v6.sin6_scope_id = 0;
        a->v6.sin6_flowinfo = 0;
    } else {
        a->v4.sin_addr.s_addr = htonl(INADDR_ANY);
    }
}

int tcp_addr_is_any(const tcp_sockaddr_t *a)
{
    return a->sa.sa_family == AF_INET6 ? IN6_IS_ADDR_UNSPECIFIED(&a->v6.sin6_addr)
                                       : a->v4.sin_addr.s_addr == htonl(INADDR_ANY);
}

void tcp_addr_unmap(tcp_sockaddr_t *a)
{
    if (a->sa.sa_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&a->v6.sin6_addr)) return;
    struct sockaddr_in v4 = { .sin_family = AF_INET, .sin_port = a->v6.sin6_port };
    memcpy(&v4.sin_addr, &a->v6.sin6_addr.s6_addr[12], sizeof v4.sin_addr);
    memset(a, 0, sizeof *a);
    a->v4 = v4;
}

void tcp_addr_text(const tcp_sockaddr_t *a, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (a->sa.sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &a->v6.sin6_addr, ip, sizeof ip);
        if (a->v6.sin6_scope_id)
            snprintf(buf, len, "[%s%%%u]:%d", ip, (unsigned)a->v6.sin6_scope_id, tcp_addr_port(a));
        else
            snprintf(buf, len, "[%s]:%d", ip, tcp_addr_port(a));
    } else {
        inet_ntop(AF_INET, &a->v4.sin_addr, ip, sizeof ip);
        snprintf(buf, len, "%s:%d", ip, tcp_addr_port(a));
    }
}
