/*
 * A writer whose peer dies: libaldeiafabric, over shm and tcp, 64 KiB blocks, peer_timeout =
 * 1000 ms. The peer is killed (SIGKILL: no goodbye) either after posting its receives and
 * taking nothing (the writer's sends beyond them wait for credit) or in the middle of a flowing
 * stream (the writer's last sends are in libfabric, which cancels no send: before a failed
 * queue pair ended them itself, the writer's wait for their completions never ended). Either
 * way the writer's wait for what it posted must end, and a writer that goes on must get an
 * error completion or a refused post, within a few seconds, as a TCP writer does.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "fabric_util.h"

/* Whether the peer takes blocks until it is killed, or posts its receives and takes nothing. */
static int flowing;

static void writer(int sender)
{
    struct end e;
    open_and_connect_end(&e);
    sync_peer();
    if (!sender) {
        if (!flowing)
            for (;;)
                pause();   /* until the parent's signal */
        for (;;) {       /* takes every block and posts its buffer again, until killed */
            VAPI_wc_desc_t wc = wait_wc(&e, e.rcq);
            CHECK(wc.status == VAPI_SUCCESS);
            post_recv(&e, (uint32_t)wc.id);
        }
    }
    /* every 8th send signalled; a slot is reused once a later signalled send completed */
    uint32_t posted = 0, done = 0;
    for (;; posted++) {
        if (flowing && posted == 4096)
            break;   /* the stream has flowed for a while: the kill comes mid-stream */
        while (flowing && posted >= done + SENDS) {
            VAPI_wc_desc_t wc = wait_wc(&e, e.scq);
            CHECK(wc.status == VAPI_SUCCESS);
            done = (uint32_t)wc.id + 1;
        }
        uint8_t *b = send_buf(&e, posted % SENDS);
        memset(b, (int)posted, MTU);
        VAPI_sr_desc_t s = { .id = posted, .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)b, .len = MTU,
                             .lkey = e.lkey, .comp_type = posted % 8 == 7 ? VAPI_SIGNALED : VAPI_UNSIGNALED };
        VAPI_ret_t r = VAPI_post_sr(e.hca, e.qp, &s);
        if (r == VAPI_EAGAIN && !flowing)
            break;
        VOK(r);
    }
    printf("  %u sends posted, %u completed before the kill\n", posted, done);
    CHECK(posted > done + RECVS);   /* some wait for credit the dead peer will never give */
    double t0 = fabric_now_s();
    CHECK(kill(fabric_child, SIGKILL) == 0);
    uint32_t ok = 0, failed = 0;
    /* what was posted completes, well (the peer took it before it died) or not: no hang */
    while (ok + failed < (posted - done) / 8) {
        VAPI_wc_desc_t wc = wait_wc(&e, e.scq);   /* a hang is a failure (POLL_USEC) */
        if (wc.status == VAPI_SUCCESS)
            ok++;
        else
            failed++;
    }
    /* and a writer that goes on learns that the peer is gone: a send fails, or is refused
     * once the queue pair has failed */
    int refused = 0;
    while (!failed && !refused) {
        uint8_t *b = send_buf(&e, posted % SENDS);
        VAPI_sr_desc_t s = { .id = posted++, .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)b, .len = MTU,
                             .lkey = e.lkey, .comp_type = VAPI_SIGNALED };
        VAPI_ret_t r = VAPI_post_sr(e.hca, e.qp, &s);
        if (r == VAPI_EINVAL_QP_STATE) {
            refused = 1;
        } else {
            CHECK(r == VAPI_OK || r == VAPI_EAGAIN);
            VAPI_wc_desc_t wc = wait_wc(&e, e.scq);
            if (wc.status == VAPI_SUCCESS)
                ok++;
            else
                failed++;
        }
        CHECK(fabric_now_s() - t0 < 5.0);
    }
    double took = fabric_now_s() - t0;
    char why[256];
    VOK(EVAPI_query_qp_error(e.hca, e.qp, why, sizeof why));
    printf("  peer killed: %u sends completed, %u with an error%s, after %.2f s: %s\n", ok, failed,
           refused ? ", then a send refused" : "", took, why);
    CHECK(why[0] != '\0');
    CHECK(took < 5.0);
    CHECK(waitpid(fabric_child, &fabric_child_status, 0) == fabric_child);
    fabric_child = 0;
    close_end(&e);
}

int main(void)
{
    fabric_mtu = 65536;   /* Aldeia's blocks: providers send them by rendezvous */
    for (int i = 0; i < FABRIC_PROVIDERS; i++) {
        printf("%s\n", fabric_select(i, ",peer_timeout=1000"));
        for (flowing = 0; flowing < 2; flowing++) {
            int status = run_pair_status(writer);
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        }
    }
    printf("test_fabric_death_writer: ok\n");
    return 0;
}
