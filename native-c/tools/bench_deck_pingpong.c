/*
 * DECK's own one-way latency: two processes (forked, DECK static run of two nodes over sci or
 * tcp), a mailbox each, a ping-pong of SIZE-byte messages with deck_mbox_post and
 * deck_mbox_retrv; prints the median, p99 and mean one-way time. The floor under MicroVAPI
 * (tools/bench_microvapi_pingpong.c) and the Java channel: on this 2-core machine, pinned, 64 B
 * over sci takes 0.17-0.18 us where UCX's tag_lat takes 0.10-0.45 us. Not a test: run it by hand
 * (make bench, then
 *   build/rel/bench_deck_pingpong [size [sci|tcp [iterations]]]
 * with PIN=1 for node 0 on CPU 0 and node 1 on CPU 1, PIN=same for both on CPU 0).
 */
#include "bench_util.h"

#define MAX_SIZE (1u << 20)
#define WARMUP   10000

static unsigned long size = 64;
static int iterations = 400000;

static int node(int id, int n, void *arg)
{
    (void)n;
    (void)arg;
    bench_pin(id);
    char name[16];
    deck_mbox_t own, peer;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, MAX_SIZE));
    snprintf(name, sizeof name, "pp-%d", id);
    CHECK_OK(deck_mbox_create(&own, name));
    snprintf(name, sizeof name, "pp-%d", 1 - id);
    CHECK_OK(deck_mbox_clone(&peer, name));
    double *round_trip = malloc((size_t)iterations * sizeof *round_trip);
    CHECK(round_trip != NULL);
    memset(m.buf, 7, size);
    for (int k = 0; k < WARMUP + iterations; k++) {
        double t0 = bench_now_us();
        if (id == 1) {
            m.len = size;
            CHECK_OK(deck_mbox_post(&peer, &m));
            CHECK_OK(deck_mbox_retrv(&own, &m));
            CHECK(m.len == size);
            if (k >= WARMUP)
                round_trip[k - WARMUP] = bench_now_us() - t0;
        } else {
            CHECK_OK(deck_mbox_retrv(&own, &m));
            CHECK(m.len == size);
            CHECK_OK(deck_mbox_post(&peer, &m));
        }
    }
    if (id == 1) {
        char what[96];
        snprintf(what, sizeof what, "DECK ping-pong over %s, %lu B", getenv("DECK_TRANSPORT"), size);
        bench_report(what, round_trip, iterations);
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&peer));
    CHECK_OK(deck_mbox_destroy(&own));
    CHECK_OK(deck_msg_destroy(&m));
    free(round_trip);
    return 0;
}

int main(int argc, char **argv)
{
    return bench_main(argc, argv, &size, &iterations, MAX_SIZE, node);
}
