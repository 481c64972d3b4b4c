/*
 * A peer killed while it holds one of libfabric shm's spin locks (fab_rescue.c): the lock of
 * its own region, which a send to it takes, or the lock of ours, which reads of our own
 * endpoint take (the peer held it sending to us). The peer takes the lock itself and waits;
 * then a thread of the writer's enters libfabric and spins on it (the writer sending, the
 * writer reading, or the keeper progressing an idle queue pair), and another thread kills the
 * peer. The writer must see the queue pair fail within a few seconds, as a TCP writer sees its
 * peer's death; before fab_rescue.c the spin never ended (test_fabric_death_writer hung so in
 * CI, now and then). shm only: libfabric's tcp holds no lock in shared memory.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <rdma/fabric.h>

#include "fab_internal.h"
#include "fab_shm_region.h"
#include "fabric_util.h"

/* Which lock the peer dies holding, and which thread of the writer's spins on it. */
enum mode { PEER_LOCK_SEND, OUR_LOCK_READ, OUR_LOCK_KEEPER, MODES };
static enum mode mode;
static const char *const what[MODES] = {
    "its region's lock, our send spinning", "our region's lock, our read spinning",
    "our region's lock, our keeper spinning" };

static void *killer(void *arg)
{
    (void)arg;
    usleep(400000);   /* a thread of the writer's is inside libfabric by now, spinning (the
                       * keeper looks every 250 ms) */
    CHECK(kill(fabric_child, SIGKILL) == 0);
    return NULL;
}

/* The region head of the shm endpoint whose VAPI address is addr. */
static struct fab_shm_region_head *region_of(const uint8_t *addr)
{
    const char *object;
    long pid = fab_shm_name_pid((const char *)addr + FAB_ADDR_HEAD, &object);
    CHECK(pid > 0);
    struct fab_shm_region_head *head = fab_shm_region_map(object, pid);
    CHECK(head != NULL);   /* libfabric's region layout is one fab_shm_region.h knows */
    return head;
}

static void side(int writer)
{
    struct end e;
    open_and_connect_end(&e);
    sync_peer();   /* both connected: the writer's connect sends, and a held lock would stop it */
    uint8_t addr[EVAPI_QP_ADDRESS_MAX + 1] = { 0 };
    uint32_t len = EVAPI_QP_ADDRESS_MAX;
    VOK(EVAPI_query_qp_address(e.hca, e.qp, addr, &len));
    if (!writer) {
        if (mode != PEER_LOCK_SEND)
            read_all(addr, sizeof addr);   /* the writer's address */
        pthread_spin_lock(&region_of(addr)->lock);
        write_all("L", 1);
        for (;;)
            pause();   /* until killed, holding the lock */
    }
    if (mode != PEER_LOCK_SEND)
        write_all(addr, sizeof addr);
    char locked;
    read_all(&locked, 1);
    double t0 = fabric_now_s();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, killer, NULL) == 0);
    if (mode == OUR_LOCK_KEEPER)
        usleep(600000);   /* the keeper's round progresses the queue pair and spins */
    uint32_t ok = 0, failed = 0, refused = 0;
    if (mode != PEER_LOCK_SEND) {
        /* the peer sent nothing: a receive completes only with the queue pair's failure */
        VAPI_wc_desc_t wc = wait_wc(&e, e.rcq);
        CHECK(wc.status != VAPI_SUCCESS);
        failed++;
    }
    /* sends (the first spins on the peer's lock when it is the peer's) until one fails or is
     * refused */
    for (uint32_t id = 0; !failed && !refused; id++) {
        VAPI_sr_desc_t s = { .id = id, .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)send_buf(&e, id % SENDS),
                             .len = 64, .lkey = e.lkey, .comp_type = VAPI_SIGNALED };
        VAPI_ret_t r = VAPI_post_sr(e.hca, e.qp, &s);
        if (r == VAPI_EINVAL_QP_STATE) {
            refused = 1;
        } else {
            VOK(r);
            VAPI_wc_desc_t wc = wait_wc(&e, e.scq);
            if (wc.status == VAPI_SUCCESS)
                ok++;   /* the peer took it before it died */
            else
                failed++;
        }
        CHECK(fabric_now_s() - t0 < 5.0);
    }
    double took = fabric_now_s() - t0;
    CHECK(pthread_join(t, NULL) == 0);
    char why[256];
    VOK(EVAPI_query_qp_error(e.hca, e.qp, why, sizeof why));
    printf("  peer killed holding %s: %u sends completed, %u failed%s, after %.2f s: %s\n", what[mode], ok,
           failed, refused ? ", then a send refused" : "", took, why);
    CHECK(strstr(why, "the peer's process has ended") != NULL);
    CHECK(took < 5.0);
    CHECK(waitpid(fabric_child, &fabric_child_status, 0) == fabric_child);
    fabric_child = 0;
    close_end(&e);
}

int main(void)
{
    uint32_t v = fi_version();
    if (v < FI_VERSION(1, 17) || v >= FI_VERSION(1, 20)) {
        /* 1.20's shm has no lock in shared memory; before 1.17 its region is laid out otherwise */
        printf("test_fabric_death_locked: skipped, libfabric %u.%u is not one whose shm region "
               "fab_shm_region.h describes (1.17 to 1.19)\n", FI_MAJOR(v), FI_MINOR(v));
        return 0;
    }
    printf("%s\n", fabric_select(0, ",peer_timeout=10000"));   /* shm; the death, not the silence */
    for (mode = 0; mode < MODES; mode++) {
        int status = run_pair_status(side);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    }
    printf("test_fabric_death_locked: ok\n");
    return 0;
}
