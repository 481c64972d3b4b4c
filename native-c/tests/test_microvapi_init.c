/*
 * MicroVAPI in one process: the init string, HCA reference counting and DECK ownership,
 * PD/MR/CQ life cycles, completion-queue polling and timeouts, QP states and tear-down,
 * and the error codes and texts for bad handles and arguments.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util_deck.h"
#include "vapi.h"

/* Checks that a VAPI call returns `want`; on failure names the call and EVAPI_last_error. */
#define VCHECK(call, want) do { VAPI_ret_t r_ = (call); if (r_ != (want)) { \
        fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d\n  last error: %s\n", \
                __FILE__, __LINE__, #call, r_, VAPI_strerror(r_), (want), EVAPI_last_error()); \
        exit(1); } } while (0)
#define VOK(call) VCHECK(call, VAPI_OK)
/* The last error names what was wrong. */
#define ERROR_MENTIONS(text) do { if (!strstr(EVAPI_last_error(), (text))) { \
        fprintf(stderr, "%s:%d: last error \"%s\" does not mention \"%s\"\n", __FILE__, \
                __LINE__, EVAPI_last_error(), (text)); exit(1); } } while (0)

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void bad_init_strings(void)
{
    static const struct { const char *id, *key; } bad[] = {
        { "microvapi:mtu=0", "mtu" },
        { "microvapi:mtu=1048577", "mtu" },
        { "microvapi:mtu=12x", "mtu" },
        { "microvapi:mtu=512,mtu=1024", "mtu" },
        { "microvapi:colour=blue", "colour" },
        { "microvapi:deck=maybe", "deck" },
        { "microvapi:deck=dynamic,deck_id=0", "deck" },
        { "microvapi:deck_id=0", "deck_nodes" },
        { "microvapi:deck_nodes=2", "deck_id" },
        { "microvapi:deck_id=2,deck_nodes=2", "deck_id" },
        { "microvapi:deck_id=-1,deck_nodes=2", "deck_id" },
        { "microvapi:deck_transport=t c", "deck_transport" },
        { "microvapi:deck_msg_buf_limit=abc", "deck_msg_buf_limit" },
        { "microvapi:deck_msg_buf_limit=0", "deck_msg_buf_limit" },
        { "microvapi:deck_medbuf_size=-5", "deck_medbuf_size" },
        { "microvapi:deck_mseg_size=12x", "deck_mseg_size" },
        { "microvapi:deck_mseg_size=", "deck_mseg_size" },
        { "microvapi:deck_spin_us=-2", "deck_spin_us" },
        { "microvapi:deck_spin_us=--1", "deck_spin_us" },
        { "microvapi:deck_spin_us=1,deck_spin_us=2", "deck_spin_us" },
        { "microvapi:mtu", "key=value" },
        { "InfiniHost0", "microvapi:" },
        { "microvapi:mtu=512,deck_id=0,deck_nodes=1,deck_file=/nonexistent/nodes", "deck_file" },
    };
    VAPI_hca_hndl_t hca = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        VAPI_ret_t r = EVAPI_get_hca_hndl(bad[i].id, &hca);
        if (r == VAPI_OK) {
            fprintf(stderr, "'%s' was accepted\n", bad[i].id);
            exit(1);
        }
        ERROR_MENTIONS(bad[i].key);
        ERROR_MENTIONS("EVAPI_get_hca_hndl");
        CHECK(!deck_is_initialized());   /* nothing was brought up */
    }
    VCHECK(EVAPI_get_hca_hndl("microvapi:bogus=1", &hca), VAPI_EINVAL_PARAM);
    VCHECK(EVAPI_get_hca_hndl(NULL, &hca), VAPI_EINVAL_PARAM);
    VCHECK(EVAPI_get_hca_hndl("microvapi:deck=dynamic", NULL), VAPI_EINVAL_PARAM);
    CHECK(strcmp(VAPI_strerror(VAPI_EINVAL_PARAM), VAPI_strerror(VAPI_EGEN)) != 0);
}

/* Two opens share one DECK that MicroVAPI started; the last release shuts it down. */
static void hca_reference_counting(void)
{
    VAPI_hca_hndl_t a, b;
    VAPI_hca_port_t port;
    VOK(EVAPI_get_hca_hndl("microvapi:mtu=512,deck=dynamic", &a));
    CHECK(deck_is_initialized());
    VOK(EVAPI_get_hca_hndl("microvapi:mtu=2048", &b));
    CHECK(a != b && a != 0 && b != 0);
    VOK(VAPI_query_hca_port_prop(a, 1, &port));
    CHECK(port.lid == (deck_node() & 0xffff) && port.state == 4 && port.max_mtu == 512);
    VOK(VAPI_query_hca_port_prop(b, 1, &port));
    CHECK(port.max_mtu == 2048);
    VCHECK(VAPI_query_hca_port_prop(a, 2, &port), VAPI_EINVAL_PARAM);
    ERROR_MENTIONS("port 2");
    VCHECK(VAPI_query_hca_port_prop(a, 1, NULL), VAPI_EINVAL_PARAM);

    VOK(EVAPI_release_hca_hndl(a));
    CHECK(deck_is_initialized());
    VCHECK(VAPI_query_hca_port_prop(a, 1, &port), VAPI_EINVAL_HCA_HNDL);
    VCHECK(EVAPI_release_hca_hndl(a), VAPI_EINVAL_HCA_HNDL);
    VCHECK(VAPI_query_hca_port_prop(12345, 1, &port), VAPI_EINVAL_HCA_HNDL);
    VOK(EVAPI_release_hca_hndl(b));
    CHECK(!deck_is_initialized());
}

static void expect_env(const char *name, const char *want)
{
    const char *got = getenv(name);
    if (want ? !got || strcmp(got, want) : got != NULL) {
        fprintf(stderr, "%s is '%s', expected '%s'\n", name, got ? got : "(unset)",
                want ? want : "(unset)");
        exit(1);
    }
}

static void unset_deck_tuning(void)
{
    static const char *const vars[] = { "DECK_MSG_BUF_LIMIT", "DECK_MEDBUF_SIZE",
                                        "DECK_MSEG_SIZE", "DECK_SPIN_US" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

/* The shared-memory transport's settings reach DECK's environment when MicroVAPI starts it
 * (tcp, used here, reads only the spin time); -1 is a valid spin time (pure polling). */
static void deck_tuning_keys(void)
{
    unset_deck_tuning();
    VAPI_hca_hndl_t hca;
    VOK(EVAPI_get_hca_hndl("microvapi:deck=dynamic,deck_msg_buf_limit=4096,"
                           "deck_medbuf_size=8256,deck_mseg_size=1048576,deck_spin_us=-1", &hca));
    expect_env("DECK_MSG_BUF_LIMIT", "4096");
    expect_env("DECK_MEDBUF_SIZE", "8256");
    expect_env("DECK_MSEG_SIZE", "1048576");
    expect_env("DECK_SPIN_US", "-1");
    VOK(EVAPI_release_hca_hndl(hca));
    CHECK(!deck_is_initialized());
    unset_deck_tuning();
}

/* A DECK someone else started is reused and left running, with its own settings. */
static void shared_deck_is_left_running(void)
{
    CHECK_OK(deck_init_dynamic());
    VAPI_hca_hndl_t hca;
    VOK(EVAPI_get_hca_hndl("microvapi:deck_spin_us=50", &hca));
    expect_env("DECK_SPIN_US", NULL);
    VOK(EVAPI_release_hca_hndl(hca));
    CHECK(deck_is_initialized());
    CHECK_OK(deck_done());
}

/* Static mode from the init string, as DECK's launcher did: a one-node run. */
static void static_deck_from_init_string(void)
{
    char nodes[64], id[160];
    util_nodes_file(1, nodes, sizeof nodes);
    snprintf(id, sizeof id, "microvapi:mtu=4096,deck_id=0,deck_nodes=1,deck_file=%s", nodes);
    VAPI_hca_hndl_t hca;
    VAPI_hca_port_t port;
    VOK(EVAPI_get_hca_hndl(id, &hca));
    CHECK(deck_node() == 0 && deck_numnodes() == 1);
    VOK(VAPI_query_hca_port_prop(hca, 1, &port));
    CHECK(port.lid == 0 && port.max_mtu == 4096);
    /* DECK is up as node 0: a second open must not claim another id. */
    snprintf(id, sizeof id, "microvapi:deck_id=1,deck_nodes=2,deck_file=%s", nodes);
    VAPI_hca_hndl_t other;
    VCHECK(EVAPI_get_hca_hndl(id, &other), VAPI_EINVAL_PARAM);
    ERROR_MENTIONS("deck_id");
    VOK(EVAPI_release_hca_hndl(hca));
    CHECK(!deck_is_initialized());
    unlink(nodes);
}

static void pd_mr_lifecycle(VAPI_hca_hndl_t hca, VAPI_hca_hndl_t other)
{
    static char region[4096];
    VAPI_pd_hndl_t pd;
    VAPI_mr_hndl_t mr, mr2;
    uint32_t lkey, lkey2;
    VOK(VAPI_alloc_pd(hca, &pd));
    CHECK(pd != 0);
    VCHECK(VAPI_alloc_pd(hca, NULL), VAPI_EINVAL_PARAM);
    VCHECK(VAPI_alloc_pd(0, &pd), VAPI_EINVAL_HCA_HNDL);
    VOK(VAPI_register_mr(hca, pd, (uintptr_t)region, sizeof region, &mr, &lkey));
    VOK(VAPI_register_mr(hca, pd, (uintptr_t)region, 16, &mr2, &lkey2));
    CHECK(mr != 0 && lkey != 0 && lkey2 != lkey && mr2 != mr);
    VCHECK(VAPI_register_mr(hca, pd, 0, 16, &mr, &lkey), VAPI_EINVAL_PARAM);
    VCHECK(VAPI_register_mr(hca, pd, (uintptr_t)region, 16, NULL, &lkey), VAPI_EINVAL_PARAM);
    VCHECK(VAPI_register_mr(other, pd, (uintptr_t)region, 16, &mr, &lkey), VAPI_EINVAL_PARAM);
    ERROR_MENTIONS("protection domain");
    VCHECK(VAPI_dealloc_pd(hca, pd), VAPI_EGEN);        /* regions still registered */
    ERROR_MENTIONS("still used by 2");
    VCHECK(EVAPI_release_hca_hndl(hca), VAPI_EGEN);     /* objects still allocated */
    VOK(VAPI_deregister_mr(hca, mr2));
    VCHECK(VAPI_deregister_mr(hca, mr2), VAPI_EINVAL_PARAM);
    VCHECK(VAPI_deregister_mr(hca, pd), VAPI_EINVAL_PARAM);  /* a PD is not an MR */
    VOK(VAPI_deregister_mr(hca, mr));
    VOK(VAPI_dealloc_pd(hca, pd));
    VCHECK(VAPI_dealloc_pd(hca, pd), VAPI_EINVAL_PARAM);
}

static void cq_polling(VAPI_hca_hndl_t hca, VAPI_hca_hndl_t other)
{
    VAPI_cq_hndl_t cq;
    uint32_t n, count = 99;
    VAPI_wc_desc_t wc[4];
    VOK(VAPI_create_cq(hca, 64, &cq, &n));
    CHECK(cq != 0 && n >= 64);
    VCHECK(VAPI_create_cq(hca, 0, &cq, &n), VAPI_EINVAL_PARAM);
    VCHECK(VAPI_poll_cq(hca, cq, wc), VAPI_CQ_EMPTY);
    VOK(EVAPI_poll_cq_many(hca, cq, 4, wc, &count));
    CHECK(count == 0);
    VCHECK(VAPI_poll_cq(hca, cq + 1, wc), VAPI_EINVAL_CQ_HNDL);
    VCHECK(VAPI_poll_cq(other, cq, wc), VAPI_EINVAL_CQ_HNDL);  /* belongs to another HCA */
    VCHECK(VAPI_poll_cq(hca, cq, NULL), VAPI_EINVAL_PARAM);

    /* A blocking poll times out on time, and sleeps meanwhile instead of spinning. */
    long t0 = util_now_ms();
    double cpu0 = cpu_seconds();
    VCHECK(EVAPI_poll_cq_block(hca, cq, 300000, wc), VAPI_ETIMEDOUT);
    long waited = util_now_ms() - t0;
    double cpu = cpu_seconds() - cpu0;
    CHECK(waited >= 290 && waited < 3000);
    CHECK(cpu < 0.1);
    VOK(VAPI_destroy_cq(hca, cq));
    VCHECK(VAPI_destroy_cq(hca, cq), VAPI_EINVAL_CQ_HNDL);
}

struct waiter {
    VAPI_hca_hndl_t hca;
    VAPI_cq_hndl_t  cq;
    VAPI_ret_t      ret;
};

static void *wait_forever(void *arg)
{
    struct waiter *w = arg;
    VAPI_wc_desc_t wc;
    w->ret = EVAPI_poll_cq_block(w->hca, w->cq, 0, &wc);
    return NULL;
}

static void start_waiter(pthread_t *t, struct waiter *w, VAPI_hca_hndl_t hca, VAPI_cq_hndl_t cq)
{
    *w = (struct waiter){ .hca = hca, .cq = cq, .ret = 99 };
    CHECK(pthread_create(t, NULL, wait_forever, w) == 0);
    util_sleep_ms(100);   /* let it block */
}

static void qp_states_and_teardown(VAPI_hca_hndl_t hca)
{
    VAPI_cq_hndl_t scq, rcq;
    uint32_t n;
    VOK(VAPI_create_cq(hca, 4, &scq, &n));
    VOK(VAPI_create_cq(hca, 4, &rcq, &n));
    VAPI_qp_init_attr_t init = { .sq_cq_hndl = scq, .rq_cq_hndl = rcq, .max_send_wr = 16,
                                 .max_recv_wr = 4 };
    VAPI_qp_hndl_t qp, qp2;
    VAPI_qp_prop_t prop, prop2;
    VOK(VAPI_create_qp(hca, &init, &qp, &prop));
    VOK(VAPI_create_qp(hca, &init, &qp2, &prop2));
    /* Table slots with random high bits: distinct, and the next free slot comes next. */
    CHECK(prop2.qp_num != prop.qp_num);
    CHECK((prop2.qp_num & 0xfffff) == (prop.qp_num & 0xfffff) + 1);
    CHECK(prop.max_send_wr == 16 && prop.max_recv_wr == 4);
    VAPI_qp_init_attr_t bad = init;
    bad.rq_cq_hndl = 777;
    VCHECK(VAPI_create_qp(hca, &bad, &qp2, &prop2), VAPI_EINVAL_CQ_HNDL);
    VOK(VAPI_destroy_qp(hca, qp2));

    static char buf[64];
    VAPI_sr_desc_t sr = { .id = 1, .opcode = VAPI_SEND, .comp_type = VAPI_SIGNALED,
                          .addr = (uintptr_t)buf, .len = 8 };
    VCHECK(VAPI_post_sr(hca, qp, &sr), VAPI_EINVAL_QP_STATE);   /* not connected */
    ERROR_MENTIONS("INIT");
    VAPI_qp_attr_t attr = { .qp_state = VAPI_RTS, .dest_qp_num = 0, .dest_id = 0,
                            .path_mtu = 2048, .sl = 0 };
    VCHECK(VAPI_modify_qp(hca, qp, &attr), VAPI_EINVAL_PARAM);  /* larger than mtu 1024 */
    ERROR_MENTIONS("path_mtu");
    attr.path_mtu = 1024;
    attr.sl = 16;
    VCHECK(VAPI_modify_qp(hca, qp, &attr), VAPI_EINVAL_PARAM);
    attr.sl = 0;
    attr.qp_state = VAPI_ERR;
    VCHECK(VAPI_modify_qp(hca, qp, &attr), VAPI_EINVAL_PARAM);
    attr.qp_state = VAPI_INIT;
    VOK(VAPI_modify_qp(hca, qp, &attr));
    VCHECK(VAPI_destroy_cq(hca, rcq), VAPI_EGEN);   /* the QP uses it */
    ERROR_MENTIONS("still used");

    /* Receives: the opcode is checked, max_recv_wr bounds what is outstanding. */
    VAPI_rr_desc_t rr[5];
    for (int i = 0; i < 5; i++)
        rr[i] = (VAPI_rr_desc_t){ .id = 100 + (uint64_t)i, .opcode = VAPI_RECEIVE,
                                  .addr = (uintptr_t)buf, .len = sizeof buf };
    VAPI_rr_desc_t wrong = rr[0];
    wrong.opcode = VAPI_SEND;
    VCHECK(VAPI_post_rr(hca, qp, &wrong), VAPI_EINVAL_PARAM);
    ERROR_MENTIONS("opcode");
    VCHECK(EVAPI_post_rr_list(hca, qp, 5, rr), VAPI_EAGAIN);    /* all or nothing */
    VOK(EVAPI_post_rr_list(hca, qp, 3, rr));
    VCHECK(EVAPI_post_rr_list(hca, qp, 2, rr + 3), VAPI_EAGAIN);
    VOK(VAPI_post_rr(hca, qp, &rr[3]));
    VCHECK(VAPI_post_sr(hca, 0x7777, &sr), VAPI_EINVAL_QP_HNDL);

    /* Destroying the QP flushes the 4 receives in order and wakes a poller of its send CQ,
     * which has nothing to deliver. */
    pthread_t t;
    struct waiter w;
    start_waiter(&t, &w, hca, scq);
    VOK(VAPI_destroy_qp(hca, qp));
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(w.ret == VAPI_ETIMEDOUT);
    VCHECK(VAPI_destroy_qp(hca, qp), VAPI_EINVAL_QP_HNDL);
    VAPI_wc_desc_t wc[8];
    uint32_t count;
    VOK(EVAPI_poll_cq_many(hca, rcq, 8, wc, &count));
    CHECK(count == 4);
    for (uint32_t i = 0; i < count; i++)
        CHECK(wc[i].id == 100 + i && wc[i].status == VAPI_WR_FLUSH_ERR
              && wc[i].opcode == VAPI_RECEIVE);

    /* Destroying a CQ wakes its waiters with an error instead of leaving them asleep. */
    start_waiter(&t, &w, hca, rcq);
    VOK(VAPI_destroy_cq(hca, rcq));
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(w.ret == VAPI_EINVAL_CQ_HNDL);
    VOK(VAPI_destroy_cq(hca, scq));
}

int main(void)
{
    bad_init_strings();
    hca_reference_counting();
    deck_tuning_keys();
    shared_deck_is_left_running();
    static_deck_from_init_string();

    VAPI_hca_hndl_t hca, other;
    VOK(EVAPI_get_hca_hndl("microvapi:deck=dynamic", &hca));
    VOK(EVAPI_get_hca_hndl("microvapi:mtu=256", &other));
    pd_mr_lifecycle(hca, other);
    cq_polling(hca, other);
    qp_states_and_teardown(hca);
    VOK(EVAPI_release_hca_hndl(other));
    VOK(EVAPI_release_hca_hndl(hca));
    CHECK(!deck_is_initialized());
    printf("PASS test_microvapi_init\n");
    return 0;
}
