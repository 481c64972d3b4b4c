/*
 * Whether a tcp peer still listens, once its queue pair's sends have been refused for a while.
 *
 * Over libfabric's tcp (through ofi_rxm), a peer whose process was killed leaves nothing this
 * library is told: rxm sees its connection reset, and every later send to it tries to connect
 * anew, is refused (ECONNREFUSED, logged by rxm at warn level) and returns FI_EAGAIN, again and
 * again, with no error completion. The queue pair then failed only at peer_timeout (10 s by
 * default), where a TCP socket sees its peer's reset at once (issue 13; PeerFaultTest's 2 s
 * bounds).
 *
 * So when every send has been refused for REFUSED_NS and nothing has come from the peer for
 * SILENT_NS (a live peer's keeper sends a keepalive every FAB_KEEPALIVE_MAX_NS at most, on its
 * rounds), the keeper connects to the peer's address: over tcp it is the TCP socket the peer's
 * endpoint listens on (only tcp is probed: over verbs the address is an RDMA CM one, which no
 * TCP connect may judge). Refused means no endpoint listens there any more, the peer's process
 * ended or closed it, and the queue pair fails. Anything else (accepted, no answer within
 * PROBE_MS, an address that is no IPv4 or IPv6 socket address) leaves it to peer_timeout. A
 * stopped or hung peer still has its listening socket, whose backlog the kernel answers: it is
 * given its peer_timeout, as before. The probe's connection is closed at once; the peer's
 * provider, which reads a connection request header from it, logs that it could not and drops
 * it. At most one probe a second per such queue pair, from the keeper, never with the queue
 * pair's lock held.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fab_internal.h"

/* A killed peer is seen within 2 s (PeerFaultTest): this side's first send to it, at worst a
 * keepalive FAB_KEEPALIVE_MAX_NS after its last send and a keeper round late, is refused by
 * 1.25 s, and the probe comes REFUSED_NS and a keeper round later, by 1.75 s (the peer's last
 * keepalive is SILENT_NS old by then: a live peer's comes a keepalive and a round apart at
 * most). These times only pace the probe: a live peer is never failed by them, its listening
 * socket accepts the connect. */
#define KEEPER_ROUND_NS ((uint64_t)FAB_KEEPER_PERIOD_MS * 1000000u)
#define REFUSED_NS      KEEPER_ROUND_NS
#define SILENT_NS       (FAB_KEEPALIVE_MAX_NS + KEEPER_ROUND_NS)
#define PROBE_EVERY_NS  1000000000ull
#define PROBE_MS        200

/* 1 when a TCP connect to the socket address addr (len bytes) is refused; 0 otherwise. */
static int refuses(const uint8_t *addr, size_t len)
{
    struct sockaddr_storage sa;
    if (len > sizeof sa)
        return 0;
    memcpy(&sa, addr, len);
    if (!((sa.ss_family == AF_INET && len == sizeof(struct sockaddr_in))
          || (sa.ss_family == AF_INET6 && len == sizeof(struct sockaddr_in6))))
        return 0;
    int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    int err = connect(fd, (struct sockaddr *)&sa, (socklen_t)len) == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        socklen_t l = sizeof err;
        if (poll(&p, 1, PROBE_MS) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0)
            err = 0;
    }
    close(fd);
    return err == ECONNREFUSED;
}

void fab_probe_locked(struct fab_qp *qp, uint64_t now_ns)
{
    if (!qp->hca->tcp_core || (qp->state != VAPI_RTR && qp->state != VAPI_RTS) || qp->peer_left || !qp->refused_ns
        || fab_ns_since(now_ns, qp->refused_ns) < (int64_t)REFUSED_NS
        || fab_ns_since(now_ns, qp->heard_ns) < (int64_t)SILENT_NS
        || fab_ns_since(now_ns, qp->probed_ns) < (int64_t)PROBE_EVERY_NS)
        return;
    qp->probed_ns = now_ns;
    uint8_t addr[EVAPI_QP_ADDRESS_MAX];
    size_t len = qp->peer_addr_len - FAB_ADDR_HEAD;
    memcpy(addr, qp->peer_addr + FAB_ADDR_HEAD, len);
    pthread_mutex_unlock(&qp->lock);
    int refused = refuses(addr, len);
    pthread_mutex_lock(&qp->lock);
    if (refused && qp->state != VAPI_ERR && !qp->peer_left) {
        qp->peer_silent = 1;   /* no goodbye to send it */
        fab_qp_fail_locked(qp, VAPI_REM_ABORT_ERR, "the peer's endpoint refuses connections: its process "
                           "ended or closed it");
    }
}
