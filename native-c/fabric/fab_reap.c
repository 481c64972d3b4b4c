/*
 * What a dead peer leaves behind on libfabric's shm provider. Each shm endpoint is a 16 MiB
 * POSIX shared-memory object that its own process unlinks when it closes the endpoint; a
 * process killed (SIGKILL, a JVM that crashed) never does, and the object stays in /dev/shm
 * until reboot. The peer's address is that object's name behind a prefix,
 * "fi_shm://<pid>:<n>:<m>" for the object "<pid>:<n>:<m>" (libfabric 1.17), so a queue pair
 * that has given its peer up can remove the object once the pid it names is gone, as DECK's
 * sci transport removes a dead peer's segments. Nothing else is touched: another name shape,
 * another provider, a live pid.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fab_internal.h"

#define SHM_PREFIX "fi_shm://"

void fab_reap_dead_peer(const struct fab_qp *qp)
{
    const char *name = (const char *)qp->peer_addr + FAB_ADDR_HEAD;
    size_t plen = strlen(SHM_PREFIX);
    if (strncmp(name, SHM_PREFIX, plen) != 0)
        return;
    const char *object = name + plen;
    char *end;
    errno = 0;
    long pid = strtol(object, &end, 10);
    if (errno || end == object || *end != ':' || pid <= 0 || strchr(object, '/'))
        return;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        return;   /* alive (or not ours to judge): it closes its own endpoint */
    shm_unlink(object);
}
