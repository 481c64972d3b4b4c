/*
 * The process's own SIGSEGV and SIGBUS handlers, kept in place while libfabric opens an
 * endpoint.
 *
 * libfabric's shm provider (1.17; efa opens shm endpoints inside too) installs handlers for
 * SIGSEGV, SIGBUS, SIGTERM and SIGINT the first time a process opens an shm endpoint
 * (smr_init_sig_handlers). On the first such signal they unlink the /dev/shm object of every
 * shm endpoint the process has open, put the previous handler back and call it. In a JVM a
 * SIGSEGV is not a crash: HotSpot takes one at safepoint polls and implicit null checks, and a
 * SIGBUS when a mapped file shrinks. So a JVM's first safepoint after its first shm endpoint
 * removed the objects of every endpoint it had open, and a peer that had not mapped one of
 * them yet could not connect to it: "the peer's endpoint closed before this queue pair
 * connected to it (its object ...: No such file or directory; its process lives)", seen under
 * connection churn (the bench's set-up phase) and once in CI.
 *
 * So the two handlers are read before libfabric may install its own (fi_endpoint; fi_enable,
 * where a later libfabric might do it) and put back after: a fault goes to the handler the
 * process chose. SIGTERM and SIGINT keep libfabric's: they end the process, and removing its
 * objects then is what libfabric meant. What is lost: a C program that crashes on a real fault
 * leaves its objects in /dev/shm, where a peer that gives it up removes them (fab_reap.c).
 *
 * One process-wide lock around the whole step: two HCAs opening endpoints at once could
 * otherwise read each other's half-installed handler. A fault in another thread during the
 * microseconds of the first shm endpoint's opening still meets libfabric's handler; that
 * endpoint is not created yet, so only objects of earlier endpoints (none, for the first)
 * could go.
 */
#include <pthread.h>
#include <signal.h>

#include "fab_internal.h"

static const int kept[] = { SIGSEGV, SIGBUS };
#define KEPT (sizeof kept / sizeof kept[0])

static pthread_mutex_t guard = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction saved[KEPT];

void fab_signals_hold(void)
{
    pthread_mutex_lock(&guard);
    for (size_t i = 0; i < KEPT; i++)
        sigaction(kept[i], NULL, &saved[i]);
}

void fab_signals_restore(void)
{
    for (size_t i = 0; i < KEPT; i++)
        sigaction(kept[i], &saved[i], NULL);
    pthread_mutex_unlock(&guard);
}
