/* IPv4 addresses of the TCP transport: resolving host names, printing addresses. */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "tcp.h"

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

void tcp_addr_text(const struct sockaddr_in *a, char *buf, size_t len)
{
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
    snprintf(buf, len, "%s:%d", ip, ntohs(a->sin_port));
}
