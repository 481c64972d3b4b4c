/*
 * MicroVAPI's own one-way latency, without Java: two processes (forked, DECK static run of two
 * nodes over sci or tcp), one queue pair each, a ping-pong of SIZE-byte sends; prints the
 * median, p99 and mean one-way time. What the Java channel adds is the difference to the same
 * size in ./aldeia bench. Not a test: run it by hand (make bench, then
 *   build/rel/bench_microvapi_pingpong [size [sci|tcp [iterations]]]
 * with PIN=1 for node 0 on CPU 0 and node 1 on CPU 1, PIN=same for both on CPU 0).
 */
#include "bench_util.h"
#include "util_vapi.h"

#define BUFFERS 16
#define MTU     65536u
#define WARMUP  1000

static unsigned long size = 64;
static int iterations = 200000;

static void send_one(struct conn *c, uint64_t id, const char *buf)
{
    VAPI_wc_desc_t wc;
    VAPI_sr_desc_t sr = { .id = id, .opcode = VAPI_SEND, .comp_type = VAPI_SIGNALED,
                          .addr = (uintptr_t)buf, .len = size };
    VOK(VAPI_post_sr(c->hca, c->qp, &sr));
    VOK(EVAPI_poll_cq_block(c->hca, c->scq, 0, &wc));
}

static void receive_one(struct conn *c, VAPI_rr_desc_t *rr)
{
    VAPI_wc_desc_t wc;
    VOK(EVAPI_poll_cq_block(c->hca, c->rcq, 0, &wc));
    CHECK(wc.status == VAPI_SUCCESS && wc.byte_len == size && wc.id < BUFFERS);
    VOK(VAPI_post_rr(c->hca, c->qp, &rr[wc.id]));
}

static int node(int id, int n, void *arg)
{
    (void)n;
    (void)arg;
    bench_pin(id);
    struct conn c;
    open_conn_on(&c, "microvapi:mtu=65536", 64, BUFFERS);
    uint32_t peer_qp, peer_id;
    exchange(id, &c, &peer_qp, &peer_id);
    connect_conn(&c, peer_qp, peer_id, 0, MTU);
    char *out = calloc(1, MTU), *in = malloc((size_t)BUFFERS * MTU);
    double *round_trip = malloc((size_t)iterations * sizeof *round_trip);
    CHECK(out && in && round_trip);
    VAPI_rr_desc_t rr[BUFFERS];
    for (int i = 0; i < BUFFERS; i++)
        rr[i] = (VAPI_rr_desc_t){ .id = (uint64_t)i, .opcode = VAPI_RECEIVE,
                                  .addr = (uintptr_t)(in + (size_t)i * MTU), .len = MTU };
    VOK(EVAPI_post_rr_list(c.hca, c.qp, BUFFERS, rr));
    for (int k = 0; k < WARMUP + iterations; k++) {
        double t0 = bench_now_us();
        if (id == 1) {
            send_one(&c, (uint64_t)k, out);
            receive_one(&c, rr);
            if (k >= WARMUP)
                round_trip[k - WARMUP] = bench_now_us() - t0;
        } else {
            receive_one(&c, rr);
            send_one(&c, (uint64_t)k, out);
        }
    }
    if (id == 1) {
        char what[96];
        snprintf(what, sizeof what, "MicroVAPI ping-pong over %s, %lu B", getenv("DECK_TRANSPORT"), size);
        bench_report(what, round_trip, iterations);
    }
    CHECK_OK(deck_barrier());
    close_qp(&c);
    close_rest(&c);
    free(out);
    free(in);
    free(round_trip);
    return 0;
}

int main(int argc, char **argv)
{
    return bench_main(argc, argv, &size, &iterations, MTU, node);
}
