/*
 * libaldeiafabric's own one-way latency, without Java, beside fi_pingpong's on the same
 * provider: two processes (forked, joined by a socketpair for the addresses), one queue pair
 * each, a ping-pong of SIZE-byte sends (at most 4096) the way Aldeia's channel does it: sends
 * unsignalled but every 16th, their completions taken without waiting, receives waited for
 * with EVAPI_poll_cq_block (it progresses for 20 us, then sleeps). Prints the median, p99 and
 * mean one-way time. Not a test: run it by hand (make bench, then
 *   build/rel/bench_fabric_pingpong [size [shm|tcp [iterations]]]
 * with PIN=1 for the two processes on CPUs 0 and 1, PIN=same for both on CPU 0), and compare
 *   fi_pingpong -p shm -e rdm -S 64 -I 20000 & fi_pingpong -p shm -e rdm -S 64 -I 20000 localhost
 */
#include "bench_clock.h"
#include "fabric_util.h"

#define WARMUP 1000

static unsigned long size = 64;
static int iterations = 100000;

static void send_one(struct end *e, uint32_t k)
{
    VAPI_sr_desc_t s = { .id = k, .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)send_buf(e, k),
                         .len = (uint32_t)size, .lkey = e->lkey,
                         .comp_type = k % 16 == 15 ? VAPI_SIGNALED : VAPI_UNSIGNALED };
    VOK(VAPI_post_sr(e->hca, e->qp, &s));
    VAPI_wc_desc_t wcs[4];
    uint32_t n;
    VOK(EVAPI_poll_cq_many(e->hca, e->scq, 4, wcs, &n));
    for (uint32_t i = 0; i < n; i++)
        CHECK(wcs[i].status == VAPI_SUCCESS);
}

static void receive_one(struct end *e)
{
    VAPI_wc_desc_t wc = wait_wc(e, e->rcq);
    CHECK(wc.status == VAPI_SUCCESS && wc.byte_len == size);
    post_recv(e, (uint32_t)wc.id);
}

static void side(int first)
{
    bench_pin(first ? 0 : 1);
    struct end e;
    open_end(&e);
    for (uint32_t i = 0; i < RECVS; i++)
        post_recv(&e, i);
    connect_end(&e);
    double *rt = malloc(sizeof *rt * (size_t)iterations);
    CHECK(rt);
    for (int k = 0; k < WARMUP + iterations; k++) {
        double t0 = bench_now_us();
        if (first) {
            send_one(&e, (uint32_t)k);
            receive_one(&e);
        } else {
            receive_one(&e);
            send_one(&e, (uint32_t)k);
        }
        if (k >= WARMUP)
            rt[k - WARMUP] = bench_now_us() - t0;
    }
    if (first) {
        char what[128];
        snprintf(what, sizeof what, "libaldeiafabric %s, %lu B", hca_id, size);
        bench_report(what, rt, iterations);
    }
    free(rt);
    sync_peer();
    close_end(&e);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        size = strtoul(argv[1], NULL, 10);
    const char *provider = argc > 2 ? argv[2] : "shm";
    if (argc > 3)
        iterations = atoi(argv[3]);
    if (size > MTU || iterations < 1 || (strcmp(provider, "shm") != 0 && strcmp(provider, "tcp") != 0)) {
        fprintf(stderr, "usage: %s [size <= %u [shm|tcp [iterations > 0]]]\n", argv[0], MTU);
        return 2;
    }
    fabric_select(strcmp(provider, "shm") == 0 ? 0 : 1, "");
    run_pair(side);
    return 0;
}
