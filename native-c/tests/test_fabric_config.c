/*
 * libaldeiafabric's init string and provider choice: every wrong key or value is refused
 * with its name in the error; with no provider named, the library takes only fabric hardware
 * and, finding none here, says so and lists what it found; a named provider and domain open.
 * And a peer's address is untrusted input: random bytes given as a destination address are
 * refused or fail the queue pair, never crash the process (plain, ASan/UBSan, TSan). Over tcp
 * the library asks ofi_rxm for eager sends up to the mtu (at most 64 KiB), unless the user did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_util.h"

static void refused(const char *init, VAPI_ret_t want, const char *says)
{
    VAPI_hca_hndl_t hca;
    VCHECK(EVAPI_get_hca_hndl(init, &hca), want);
    if (!strstr(EVAPI_last_error(), says)) {
        fprintf(stderr, "%s: error \"%s\" does not say \"%s\"\n", init, EVAPI_last_error(), says);
        exit(1);
    }
    printf("  %-40s %s\n", init, EVAPI_last_error());
}

/* Queue pairs aimed at made-up addresses (the right qp_num in them, so modify_qp gets as far
 * as libfabric's address vector), then destroyed. */
static void garbage_addresses(int provider)
{
    fabric_select(provider, "");
    struct end e;
    open_end(&e);
    VAPI_qp_hndl_t first = e.qp;
    srand(7 + provider);
    int refused = 0, connected = 0;
    for (int i = 0; i < 40; i++) {
        if (i > 0) {
            VAPI_qp_init_attr_t a = { .sq_cq_hndl = e.scq, .rq_cq_hndl = e.rcq, .max_send_wr = SENDS,
                                      .max_recv_wr = RECVS };
            VOK(VAPI_create_qp(e.hca, &a, &e.qp, &e.prop));
        }
        uint8_t addr[EVAPI_QP_ADDRESS_MAX];
        uint32_t len = 13 + (uint32_t)rand() % (EVAPI_QP_ADDRESS_MAX - 13);
        for (uint32_t j = 0; j < len; j++)
            addr[j] = (uint8_t)rand();
        uint32_t num = 1000 + (uint32_t)i;
        memcpy(addr + 8, &num, 4);   /* little-endian on the machines this runs on */
        VOK(EVAPI_set_qp_dest_address(e.hca, e.qp, addr, len));
        VAPI_qp_attr_t attr = { .qp_state = VAPI_RTS, .dest_qp_num = num, .path_mtu = MTU };
        if (VAPI_modify_qp(e.hca, e.qp, &attr) == VAPI_OK)
            connected++;
        else
            refused++;
        post_recv(&e, 0);
        VAPI_wc_desc_t wc;
        (void)VAPI_poll_cq(e.hca, e.rcq, &wc);   /* progress: the credit message to nowhere */
        if (e.qp != first)
            VOK(VAPI_destroy_qp(e.hca, e.qp));
        while (VAPI_poll_cq(e.hca, e.rcq, &wc) == VAPI_OK || VAPI_poll_cq(e.hca, e.scq, &wc) == VAPI_OK)
            ;   /* the flushed receives */
        e.qp = first;
    }
    printf("  %s: %d made-up addresses refused, %d accepted by the address vector\n", hca_id, refused, connected);
    close_end(&e);
}

/* Opens and releases a tcp adapter with this mtu; what FI_OFI_RXM_EAGER_LIMIT says then. */
static const char *eager_limit_after(const char *init)
{
    VAPI_hca_hndl_t h;
    VOK(EVAPI_get_hca_hndl(init, &h));
    VOK(EVAPI_release_hca_hndl(h));
    return getenv("FI_OFI_RXM_EAGER_LIMIT");
}

static void eager_limit_follows_mtu(void)
{
    const char *v;
    setenv("FI_OFI_RXM_EAGER_LIMIT", "20000", 1);
    CHECK((v = eager_limit_after("fabric:provider=tcp,domain=lo,mtu=65536")) && strcmp(v, "20000") == 0);
    unsetenv("FI_OFI_RXM_EAGER_LIMIT");
    CHECK((v = eager_limit_after("fabric:provider=tcp,domain=lo,mtu=32768")) && strcmp(v, "32768") == 0);
    unsetenv("FI_OFI_RXM_EAGER_LIMIT");
    CHECK((v = eager_limit_after("fabric:provider=tcp,domain=lo,mtu=1048576")) && strcmp(v, "65536") == 0);
    unsetenv("FI_OFI_RXM_EAGER_LIMIT");
    CHECK(eager_limit_after("fabric:provider=tcp,domain=lo,mtu=16384") == NULL);
    CHECK(eager_limit_after("fabric:provider=shm,mtu=65536") == NULL);
}

int main(void)
{
    refused("microvapi:mtu=1024", VAPI_EINVAL_PARAM, "does not start with \"fabric\"");
    refused("fabricx", VAPI_EINVAL_PARAM, "does not start with \"fabric\"");
    refused("fabric:mtu=0", VAPI_EINVAL_PARAM, "key mtu");
    refused("fabric:mtu=1048577", VAPI_EINVAL_PARAM, "key mtu");
    refused("fabric:port=x", VAPI_EINVAL_PARAM, "key port");
    refused("fabric:tc=16", VAPI_EINVAL_PARAM, "key tc");
    refused("fabric:tc=9,provider=shm", VAPI_EINVAL_PARAM, "traffic class 9");
    refused("fabric:colour=red", VAPI_EINVAL_PARAM, "unknown key 'colour'");
    refused("fabric:provider", VAPI_EINVAL_PARAM, "not key=value");
    refused("fabric:provider=", VAPI_EINVAL_PARAM, "key provider");
    /* no RDMA hardware on the machines this runs on: the default finds no provider */
    refused("fabric", VAPI_EGEN, "tcp, udp, sockets, net and shm are not hardware");
    refused("fabric:provider=nosuch", VAPI_EGEN, "providers that qualify here: ");
    refused("fabric:provider=tcp,domain=nosuch0", VAPI_EGEN, "on domain nosuch0");
    refused("fabric:provider=shm,port=9", VAPI_EGEN, "domain number 9");

    /* several regions in one domain (a socket registers two): distinct lkeys, each checked */
    for (int i = 0; i < FABRIC_PROVIDERS; i++) {
        fabric_select(i, "");
        VAPI_hca_hndl_t h;
        VAPI_pd_hndl_t pd;
        VOK(EVAPI_get_hca_hndl(hca_id, &h));
        VOK(VAPI_alloc_pd(h, &pd));
        static char areas[3][4096];
        VAPI_mr_hndl_t mr[3];
        uint32_t lkey[3];
        for (int k = 0; k < 3; k++)
            VOK(VAPI_register_mr(h, pd, (uint64_t)(uintptr_t)areas[k], sizeof areas[k], &mr[k], &lkey[k]));
        CHECK(lkey[0] != lkey[1] && lkey[1] != lkey[2] && lkey[0] != lkey[2]);
        for (int k = 0; k < 3; k++)
            VOK(VAPI_deregister_mr(h, mr[k]));
        VOK(VAPI_dealloc_pd(h, pd));
        VOK(EVAPI_release_hca_hndl(h));
    }

    VAPI_hca_hndl_t hca;
    VAPI_hca_port_t port;
    VOK(EVAPI_get_hca_hndl("fabric:provider=tcp,domain=lo,mtu=2048,tc=2", &hca));
    VOK(VAPI_query_hca_port_prop(hca, 1, &port));
    CHECK(port.lid != 0 && port.state == 4 && port.max_mtu == 2048);
    VCHECK(VAPI_query_hca_port_prop(hca, 2, &port), VAPI_EINVAL_PARAM);
    /* the fabric's name: provider and libfabric's fabric (tcp: the interface's subnet, 127.0.0.1/32 on lo) */
    char fabric[128], tiny[8];
    VOK(EVAPI_query_hca_fabric(hca, fabric, sizeof fabric));
    printf("  fabric of tcp on lo: %s\n", fabric);
    CHECK(strncmp(fabric, "tcp", 3) == 0 && strstr(fabric, ";127.0.0.") != NULL);
    VCHECK(EVAPI_query_hca_fabric(hca, tiny, sizeof tiny), VAPI_EINVAL_PARAM);
    VOK(EVAPI_release_hca_hndl(hca));
    VCHECK(EVAPI_release_hca_hndl(hca), VAPI_EINVAL_HCA_HNDL);
    for (int i = 0; i < FABRIC_PROVIDERS; i++)
        garbage_addresses(i);
    eager_limit_follows_mtu();
    printf("test_fabric_config: ok\n");
    return 0;
}
