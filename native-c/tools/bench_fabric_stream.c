/*
 * libaldeiafabric's one-way bandwidth, without Java, beside fi_pingpong's on the same
 * provider: two processes (forked), one queue pair each, a stream of SIZE-byte sends (one
 * block each, at most 1 MiB) the way Aldeia's channel sends a long write: every 8th signalled,
 * a send slot reused only once a later signalled send completed, 64 slots; the receiver keeps
 * 16 buffers posted and reposts each as it takes it. Prints GB/s of the median of 5 bursts.
 * Not a test: run it by hand (make bench, then
 *   build/rel/bench_fabric_stream [size [shm|tcp [megabytes per burst]]]
 * with PIN=1 for the two processes on CPUs 0 and 1, PIN=same for both on CPU 0), and compare
 *   fi_pingpong -p shm -e rdm -S 1048576 -I 2000 & fi_pingpong -p shm -e rdm -S 1048576 -I 2000 localhost
 */
#include "bench_clock.h"
#include "fabric_util.h"

#define BURSTS 5

static uint32_t size = 65536;
static uint64_t burst_bytes = 2048ull << 20;

static void send_burst(struct end *e, uint32_t count)
{
    uint32_t done = 0;   /* signalled completions: every 8th send */
    for (uint32_t k = 0; k < count; k++) {
        while (k >= SENDS && done * 8 + SENDS <= k) {
            CHECK(wait_wc(e, e->scq).status == VAPI_SUCCESS);
            done++;
        }
        VAPI_sr_desc_t s = { .id = k, .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)send_buf(e, k), .len = size,
                             .lkey = e->lkey, .comp_type = k % 8 == 7 ? VAPI_SIGNALED : VAPI_UNSIGNALED };
        VAPI_ret_t r;
        while ((r = VAPI_post_sr(e->hca, e->qp, &s)) == VAPI_EAGAIN) {
            CHECK(wait_wc(e, e->scq).status == VAPI_SUCCESS);
            done++;
        }
        VOK(r);
    }
    while (done < count / 8) {
        CHECK(wait_wc(e, e->scq).status == VAPI_SUCCESS);
        done++;
    }
}

static void receive_burst(struct end *e, uint32_t count)
{
    for (uint32_t k = 0; k < count; k++) {
        VAPI_wc_desc_t wc = wait_wc(e, e->rcq);
        CHECK(wc.status == VAPI_SUCCESS && wc.byte_len == size);
        post_recv(e, (uint32_t)wc.id);
    }
}

static void side(int sender)
{
    bench_pin(sender ? 0 : 1);
    struct end e;
    open_end(&e);
    for (uint32_t i = 0; i < RECVS; i++)
        post_recv(&e, i);
    connect_end(&e);
    uint32_t count = (uint32_t)(burst_bytes / size) / 8 * 8;
    double rate[BURSTS];
    for (int b = 0; b < BURSTS; b++) {
        sync_peer();
        double t0 = bench_now_us();
        if (sender)
            send_burst(&e, count);
        else
            receive_burst(&e, count);
        sync_peer();   /* the receiver has every byte */
        rate[b] = (double)count * size / (bench_now_us() - t0) / 1e3;
    }
    if (sender) {
        qsort(rate, BURSTS, sizeof *rate, bench_by_value);
        printf("libaldeiafabric %s, %u B sends: median of %d bursts of %u MiB %.2f GB/s (min %.2f, max %.2f)\n",
               hca_id, size, BURSTS, (unsigned)(burst_bytes >> 20), rate[BURSTS / 2], rate[0], rate[BURSTS - 1]);
    }
    sync_peer();
    close_end(&e);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        size = (uint32_t)strtoul(argv[1], NULL, 10);
    const char *provider = argc > 2 ? argv[2] : "shm";
    if (argc > 3)
        burst_bytes = strtoull(argv[3], NULL, 10) << 20;
    if (size < 1 || size > (1u << 20) || burst_bytes < size * 8ull
        || (strcmp(provider, "shm") != 0 && strcmp(provider, "tcp") != 0)) {
        fprintf(stderr, "usage: %s [size 1..1048576 [shm|tcp [megabytes per burst]]]\n", argv[0]);
        return 2;
    }
    fabric_mtu = size;
    fabric_select(strcmp(provider, "shm") == 0 ? 0 : 1, "");
    run_pair(side);
    return 0;
}
