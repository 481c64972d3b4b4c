/*
 * A process's own SIGSEGV and SIGBUS handlers stay in place when it opens shm endpoints
 * (fab_signals.c). libfabric's shm installs handlers that, on the first such signal, unlink
 * the /dev/shm object of every open endpoint: in a JVM, which takes SIGSEGV at safepoints, a
 * peer then could not connect to an endpoint opened before the JVM's first safepoint. Here the
 * process installs handlers of its own (as HotSpot does at start), opens two endpoints, raises
 * both signals, and requires that its handlers ran, once each, and that the endpoints' objects
 * are still there for a peer to map.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fab_internal.h"
#include "fabric_util.h"

static volatile sig_atomic_t taken[NSIG];

static void handler(int sig, siginfo_t *info, void *context)
{
    (void)info;
    (void)context;
    taken[sig]++;
}

static void install(int sig)
{
    struct sigaction a = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO };
    sigemptyset(&a.sa_mask);
    CHECK(sigaction(sig, &a, NULL) == 0);
}

static int ours(int sig)
{
    struct sigaction now;
    CHECK(sigaction(sig, NULL, &now) == 0);
    return (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == handler;
}

/* Whether the /dev/shm object behind e's shm endpoint is there. */
static int object_there(struct end *e)
{
    uint8_t addr[EVAPI_QP_ADDRESS_MAX + 1] = { 0 };
    uint32_t len = EVAPI_QP_ADDRESS_MAX;
    VOK(EVAPI_query_qp_address(e->hca, e->qp, addr, &len));
    const char *object;
    CHECK(fab_shm_name_pid((const char *)addr + FAB_ADDR_HEAD, &object) == getpid());
    int fd = shm_open(object, O_RDONLY, 0);
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

int main(void)
{
    printf("%s\n", fabric_select(0, ""));   /* shm */
    install(SIGSEGV);
    install(SIGBUS);
    struct end a, b;
    open_end(&a);
    open_end(&b);
    CHECK(ours(SIGSEGV) && ours(SIGBUS));
    CHECK(object_there(&a) && object_there(&b));
    raise(SIGSEGV);
    raise(SIGBUS);
    CHECK(taken[SIGSEGV] == 1 && taken[SIGBUS] == 1);
    CHECK(object_there(&a) && object_there(&b));   /* a peer can still map both */
    close_end(&b);
    close_end(&a);
    CHECK(ours(SIGSEGV) && ours(SIGBUS));
    printf("test_fabric_signals: ok\n");
    return 0;
}
