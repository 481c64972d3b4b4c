/*
 * libaldeiafabric and a peer that goes away or stops, over shm and tcp, with peer_timeout =
 * 1000 ms:
 *  - two idle queue pairs stay connected for three peer timeouts (their keepers exchange
 *    keepalives while no application thread calls in), then still carry a block;
 *  - a peer killed with SIGKILL: the survivor's blocked receive ends with an error
 *    completion, and its queue pair says why, within a few seconds, also with a peer_timeout
 *    of 10 s (shm: the pid has ended; tcp: the peer's endpoint refuses connections);
 *  - a peer stopped with SIGSTOP: the same after about peer_timeout (a stopped process cannot
 *    be told from a hung one), as DECK's peers;
 *  - what the dead peer's shm endpoint left in /dev/shm is gone once the survivor gave it up
 *    (the stopped peer's once it has been killed and the survivor destroyed its queue pair).
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "fabric_util.h"

static void idle_then_send(int sender)
{
    struct end e;
    open_and_connect_end(&e);
    usleep(3000 * 1000);   /* three peer timeouts with nobody calling in */
    if (sender) {
        uint32_t completions = 0;
        send_block(&e, 1, 2, &completions);
        CHECK(wait_wc(&e, e.scq).status == VAPI_SUCCESS);
    } else {
        VAPI_wc_desc_t wc = wait_wc(&e, e.rcq);
        CHECK(wc.status == VAPI_SUCCESS && wc.byte_len == block_len(1));
    }
    sync_peer();
    close_end(&e);
}

/* Entries in /dev/shm that process pid's shm endpoints left ("<pid>:<uid>:<n>"): only its,
 * since other programs on the machine may open and close theirs meanwhile. */
static int shm_objects_of(pid_t pid)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%d:", (int)pid);
    DIR *d = opendir("/dev/shm");
    CHECK(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

static pid_t peer_pid;   /* the child survivor() killed */

static int peer_signal;
static double deadline_s;   /* a survivor must see the death within this */

/* The parent waits in a receive while its child is killed or stopped. */
static void survivor(int sender)
{
    struct end e;
    open_and_connect_end(&e);
    sync_peer();
    if (!sender) {
        for (;;)
            pause();   /* until the parent's signal */
    }
    double t0 = fabric_now_s();
    peer_pid = fabric_child;
    CHECK(kill(fabric_child, peer_signal) == 0);
    VAPI_wc_desc_t wc = wait_wc(&e, e.rcq);
    double took = fabric_now_s() - t0;
    char why[256];
    VOK(EVAPI_query_qp_error(e.hca, e.qp, why, sizeof why));
    printf("  peer %s: receive ended with status %u after %.2f s: %s\n", strsignal(peer_signal), wc.status, took,
           why);
    CHECK(wc.status != VAPI_SUCCESS);
    CHECK(why[0] != '\0');
    CHECK(took < deadline_s);
    if (peer_signal != SIGKILL)
        CHECK(kill(fabric_child, SIGKILL) == 0);
    /* reaped here, as a peer JVM is by its own parent: a zombie's pid still counts as alive */
    CHECK(waitpid(fabric_child, &fabric_child_status, 0) == fabric_child);
    fabric_child = 0;
    close_end(&e);
}

int main(void)
{
    for (int i = 0; i < FABRIC_PROVIDERS; i++) {
        printf("%s\n", fabric_select(i, ",peer_timeout=1000"));
        deadline_s = 5.0;
        run_pair(idle_then_send);
        peer_signal = SIGKILL;
        int status = run_pair_status(survivor);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        CHECK(shm_objects_of(peer_pid) == 0);
        peer_signal = SIGSTOP;
        status = run_pair_status(survivor);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        CHECK(shm_objects_of(peer_pid) == 0);
    }
    /* A killed peer is seen long before a peer_timeout of 10 s: over shm its pid has ended,
     * over tcp its endpoint refuses the probe (fab_probe.c), as a TCP socket sees a reset.
     * Within 2 s (PeerFaultTest's bound), and a half second more for the sanitizers. */
    for (int i = 0; i < FABRIC_PROVIDERS; i++) {
        printf("%s\n", fabric_select(i, ",peer_timeout=10000"));
        deadline_s = 2.5;
        peer_signal = SIGKILL;
        int status = run_pair_status(survivor);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    }
    printf("test_fabric_death: ok\n");
    return 0;
}
