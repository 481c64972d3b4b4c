/*
 * Sleeping until a queue pair has something to progress. libfabric's wait object for a CQ
 * (FI_WAIT_FD) is a descriptor that poll() reports readable when the CQ may hold completions,
 * once fi_trywait said the caller may sleep (it fails while completions or provider work are
 * pending, which the caller then progresses first). A CQ's eventfd joins them: another thread
 * may read this CQ's completions off the provider first and push them here.
 *
 * A provider without wait objects (shm, efa) leaves no way to sleep until data comes: then
 * the caller sleeps a slice and progresses between slices, a bounded latency for a reader that
 * found nothing, never a spin (fab_cq.c says how long a slice is).
 */
#include <errno.h>
#include <poll.h>

#include <rdma/fi_eq.h>

#include "fab_internal.h"

void fab_wait(struct fab_qp **qps, int n, int wake_fd, uint64_t timeout_ns, uint64_t slice_ns)
{
    struct pollfd fds[n + 1];
    struct fid *fids[n > 0 ? n : 1];
    int nfds = 0, nfids = 0, waitless = 0;
    for (int i = 0; i < n; i++) {
        /* fi_trywait progresses the endpoint: not one whose peer has not joined (fab_internal.h) */
        if (qps[i]->wait_fd < 0 || !qps[i]->cq || !qps[i]->joined) {
            waitless = 1;
            continue;
        }
        fids[nfids++] = &qps[i]->cq->fid;
        fds[nfds++] = (struct pollfd){ .fd = qps[i]->wait_fd, .events = POLLIN };
    }
    if (nfids > 0 && fi_trywait(qps[0]->hca->fabric, fids, nfids) != FI_SUCCESS)
        return;   /* something to progress already */
    fds[nfds++] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
    if (waitless && timeout_ns > slice_ns)
        timeout_ns = slice_ns;
    struct timespec t = { .tv_sec = (time_t)(timeout_ns / 1000000000u), .tv_nsec = (long)(timeout_ns % 1000000000u) };
    while (ppoll(fds, (nfds_t)nfds, &t, NULL) < 0 && errno == EINTR)
        ;
}
