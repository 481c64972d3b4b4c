/*
 * The HCA: a libfabric provider's fabric and domain, chosen by fi_getinfo with what this
 * library needs (fab_internal.h): reliable datagrams, tagged messages with directed receives,
 * send-after-send order. Each EVAPI_get_hca_hndl opens its own fabric and domain.
 *
 * Which provider, with none named: the first one fi_getinfo offers that drives hardware.
 * Providers that run over the kernel's sockets or over shared memory (tcp, udp, sockets, net,
 * shm) are not hardware: with only those, opening fails and says what was found, and Aldeia
 * goes on with DECK, which serves those routes itself.
 *
 * shm is called one thread at a time per HCA (serialized, fab_internal.h): libfabric 1.17's shm
 * provider was entered by several threads at once for different endpoints of one domain (each
 * socket's reader and writer, the keeper) when a JVM crashed at libfabric.so.1+0xd01f7. That
 * crash turned out to have another cause, a message read from a peer shm had not mapped
 * (fab_reap.c, fab_shm_peer_mapped; test_fabric_churn); the serialization stays, as shm's
 * thread safety across endpoints of a domain was never shown.
 *
 * Traffic classes (tc=1..15, InfiniBand's service levels): 1..5 are FI_TC_BEST_EFFORT,
 * FI_TC_LOW_LATENCY, FI_TC_DEDICATED_ACCESS, FI_TC_BULK_DATA, FI_TC_SCAVENGER; 6..15 the
 * provider's own classes FI_TC_DSCP + 0..9 would need DSCP values nobody agreed on, so they
 * are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "fab_internal.h"

#define FAB_FI_VERSION FI_VERSION(1, 9)

static const char *const software_providers[] = { "tcp", "udp", "sockets", "net", "shm" };

/* The core of a provider name: "tcp" of "tcp;ofi_rxm". */
static void core_name(const char *prov, char *out, size_t cap)
{
    size_t n = strcspn(prov, ";");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, prov, n);
    out[n] = '\0';
}

static int is_software(const char *core)
{
    for (size_t i = 0; i < sizeof software_providers / sizeof software_providers[0]; i++)
        if (strcmp(core, software_providers[i]) == 0)
            return 1;
    return 0;
}

static VAPI_ret_t traffic_class(const char *fn, uint32_t tc, uint32_t *out)
{
    static const uint32_t classes[] = { FI_TC_UNSPEC, FI_TC_BEST_EFFORT, FI_TC_LOW_LATENCY,
                                        FI_TC_DEDICATED_ACCESS, FI_TC_BULK_DATA, FI_TC_SCAVENGER };
    if (tc >= sizeof classes / sizeof classes[0])
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "traffic class %u has no libfabric meaning (0..5: unspecified, "
                         "best effort, low latency, dedicated access, bulk data, scavenger)", tc);
    *out = classes[tc];
    return VAPI_OK;
}

static struct fi_info *requirements(const struct fab_config *c, uint32_t tc)
{
    struct fi_info *hints = fi_allocinfo();
    if (!hints)
        return NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->tx_attr->tclass = tc;
    if (c->domain[0])
        hints->domain_attr->name = strdup(c->domain);
    return hints;
}

/* Domain number `port` (1-based, in the order fi_getinfo first names each domain) of the
 * configured provider, or of the first hardware provider; the first entry of that domain.
 * Writes the providers found into seen, for the error. */
static struct fi_info *pick(struct fi_info *all, const struct fab_config *c, char *seen, size_t cap)
{
    char want[FAB_NAME_MAX] = "";
    const char *domains[256];
    uint32_t ndomains = 0;
    seen[0] = '\0';
    for (struct fi_info *i = all; i; i = i->next) {
        char core[FAB_NAME_MAX];
        core_name(i->fabric_attr->prov_name, core, sizeof core);
        if (!strstr(seen, core) && strlen(seen) + strlen(core) + 3 < cap)
            snprintf(seen + strlen(seen), cap - strlen(seen), "%s%s", seen[0] ? ", " : "", core);
        if (c->domain[0] && strcmp(i->domain_attr->name, c->domain) != 0)
            continue;   /* providers do not all filter by the hint's domain name */
        if (!want[0]) {
            if (c->provider[0] ? strcmp(core, c->provider) != 0 : is_software(core))
                continue;
            snprintf(want, sizeof want, "%s", core);
        } else if (strcmp(core, want) != 0) {
            continue;
        }
        uint32_t d = 0;
        while (d < ndomains && strcmp(domains[d], i->domain_attr->name) != 0)
            d++;
        if (d == ndomains && ndomains < sizeof domains / sizeof domains[0])
            domains[ndomains++] = i->domain_attr->name;
        if (d + 1 == c->port)
            return i;
    }
    return NULL;
}

/*
 * ofi_rxm (the RDM layer over tcp and verbs) posts FI_OFI_RXM_MSG_RX_SIZE bounce buffers of
 * 16 KiB per endpoint: 4096 by default in libfabric 1.17 with its shared receive context, so
 * 64 MiB of memory every queue pair touches when it opens its endpoint. On this machine's virtual
 * CPUs the page faults alone took 0.3-0.5 s a connection (test_fabric_churn over tcp: 7-13
 * connections in 4 s; 1131 with 64 buffers). FAB_RXM_MSG_RX_SIZE is rxm's own default without
 * the shared context's; larger messages than a buffer go by rxm's segmentation or rendezvous,
 * and a peer that finds no buffer posted waits in TCP's flow control. Set before libfabric
 * reads it (its first fi_getinfo in the process); a value the user set is kept.
 */
#define FAB_RXM_MSG_RX_SIZE "128"

/*
 * Over tcp, ofi_rxm sends a message above FI_OFI_RXM_EAGER_LIMIT (16 KiB by default) by
 * segmentation or by rendezvous, which costs the receiver a round trip per message: a stream of
 * 64 KiB sends (Aldeia's default mtu) ran at 1.67 GB/s, 3.04 GB/s with the eager limit at 64 KiB
 * (bench_fabric_stream, PIN=1); 64 B and 1 KiB ping-pongs and 1 MiB sends did not change. Eager
 * above 64 KiB was slower (128 KiB sends: 2.32 -> 1.64 GB/s), hence the cap; an mtu within rxm's
 * default changes nothing. Only for tcp: over verbs rxm wants its eager limit equal to its
 * buffer size. Like the receive buffers, read at libfabric's first fi_getinfo in the process (in
 * a JVM, the route's probe with the same init string); a value the user set is kept.
 */
#define FAB_RXM_EAGER_DEFAULT 16384u
#define FAB_RXM_TCP_EAGER_MAX 65536u

static void tune_rxm(const struct fab_config *c)
{
    setenv("FI_OFI_RXM_MSG_RX_SIZE", FAB_RXM_MSG_RX_SIZE, 0);
    if (strcmp(c->provider, "tcp") == 0 && c->mtu > FAB_RXM_EAGER_DEFAULT) {
        char eager[16];
        snprintf(eager, sizeof eager, "%u", c->mtu < FAB_RXM_TCP_EAGER_MAX ? c->mtu : FAB_RXM_TCP_EAGER_MAX);
        setenv("FI_OFI_RXM_EAGER_LIMIT", eager, 0);
    }
}

static VAPI_ret_t open_domain(const char *fn, struct fab_hca *h)
{
    tune_rxm(&h->config);
    uint32_t tc = 0;
    VAPI_ret_t ret = traffic_class(fn, h->config.tc, &tc);
    if (ret != VAPI_OK)
        return ret;
    struct fi_info *hints = requirements(&h->config, tc), *all = NULL;
    if (!hints)
        return vapi_fail(VAPI_ENOMEM, fn, "fi_allocinfo: out of memory");
    int rc = fi_getinfo(FAB_FI_VERSION, NULL, NULL, 0, hints, &all);
    fi_freeinfo(hints);
    if (rc != 0 && rc != -FI_ENODATA)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_getinfo", rc);
    char seen[256];
    struct fi_info *chosen = rc == 0 ? pick(all, &h->config, seen, sizeof seen) : NULL;
    if (!chosen) {
        ret = vapi_fail(VAPI_EGEN, fn, "no libfabric provider %s%s%s (reliable datagrams, tagged messages, "
                        "ordered sends) with a domain number %u; providers that qualify here: %s%s",
                        h->config.provider[0] ? h->config.provider : "for fabric hardware",
                        h->config.domain[0] ? " on domain " : "", h->config.domain, h->config.port,
                        rc == 0 && seen[0] ? seen : "none",
                        h->config.provider[0] ? "" : " (tcp, udp, sockets, net and shm are not hardware)");
        fi_freeinfo(all);
        return ret;
    }
    h->info = fi_dupinfo(chosen);
    fi_freeinfo(all);
    if (!h->info)
        return vapi_fail(VAPI_ENOMEM, fn, "fi_dupinfo: out of memory");
    h->mr_local = (h->info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    char core[FAB_NAME_MAX];
    core_name(h->info->fabric_attr->prov_name, core, sizeof core);
    h->serialized = strcmp(core, "shm") == 0;
    h->tcp_core = strcmp(core, "tcp") == 0;
    if ((rc = fi_fabric(h->info->fabric_attr, &h->fabric, NULL)) != 0)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_fabric", rc);
    if ((rc = fi_domain(h->fabric, h->info, &h->domain, NULL)) != 0)
        return FAB_FAIL(VAPI_EGEN, fn, "fi_domain", rc);
    return VAPI_OK;
}

static void hca_free(struct fab_hca *h)
{
    fab_keeper_stop(h);
    if (h->domain)
        fi_close(&h->domain->fid);
    if (h->fabric)
        fi_close(&h->fabric->fid);
    if (h->info)
        fi_freeinfo(h->info);
    fab_mr_table_free(h->mrs);
    pthread_mutex_destroy(&h->provider_lock);
    free(h);
}

VAPI_ret_t EVAPI_get_hca_hndl(const char *hca_id, VAPI_hca_hndl_t *hca)
{
    static const char fn[] = "EVAPI_get_hca_hndl";
    if (!hca)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "hca is NULL");
    struct fab_hca *h = calloc(1, sizeof *h);
    if (!h)
        return vapi_fail(VAPI_ENOMEM, fn, "out of memory");
    pthread_mutexattr_t recursive;
    pthread_mutexattr_init(&recursive);
    pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&h->provider_lock, &recursive);
    pthread_mutexattr_destroy(&recursive);
    VAPI_ret_t ret = fab_config_parse(fn, hca_id, &h->config);
    if (ret == VAPI_OK && !(h->mrs = fab_mr_table_new()))
        ret = vapi_fail(VAPI_ENOMEM, fn, "out of memory");
    if (ret == VAPI_OK)
        ret = open_domain(fn, h);
    if (ret == VAPI_OK) {
        uint16_t lid = 0;
        while (lid == 0)
            if (getrandom(&lid, sizeof lid, 0) != sizeof lid)
                lid = (uint16_t)(vapi_now_ns() | 1);
        h->lid = lid;
        h->next_qp_num = 1;
        if ((*hca = vh_add(VH_HCA, 0, h)) == 0)
            ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
        else if ((ret = fab_keeper_start(fn, h, *hca)) != VAPI_OK)
            vh_take(fn, *hca, *hca, VH_HCA, (void **)&h);
    }
    if (ret != VAPI_OK)
        hca_free(h);
    return ret;
}

VAPI_ret_t EVAPI_release_hca_hndl(VAPI_hca_hndl_t hca)
{
    static const char fn[] = "EVAPI_release_hca_hndl";
    struct fab_hca *h;
    VAPI_ret_t ret = vh_take(fn, hca, hca, VH_HCA, (void **)&h);
    if (ret != VAPI_OK)
        return ret;
    hca_free(h);
    return VAPI_OK;
}

VAPI_ret_t VAPI_query_hca_port_prop(VAPI_hca_hndl_t hca, uint8_t port, VAPI_hca_port_t *prop)
{
    static const char fn[] = "VAPI_query_hca_port_prop";
    if (!prop)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "prop is NULL");
    struct fab_hca *h;
    VAPI_ret_t ret = vh_get(fn, hca, hca, VH_HCA, (void **)&h);
    if (ret != VAPI_OK)
        return ret;
    if (port != h->config.port) {
        ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "port %u is not open (this HCA is %s port %u, domain %s)", port,
                        h->info->fabric_attr->prov_name, h->config.port, h->info->domain_attr->name);
    } else {
        uint64_t max = h->info->ep_attr->max_msg_size;
        *prop = (VAPI_hca_port_t){ .lid = h->lid, .state = 4,
                                   .max_mtu = max < h->config.mtu ? (uint32_t)max : h->config.mtu };
    }
    vh_put(hca);
    return ret;
}

VAPI_ret_t EVAPI_query_hca_fabric(VAPI_hca_hndl_t hca, char *buf, uint32_t len)
{
    static const char fn[] = "EVAPI_query_hca_fabric";
    if (!buf)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "buf is NULL");
    struct fab_hca *h;
    VAPI_ret_t ret = vh_get(fn, hca, hca, VH_HCA, (void **)&h);
    if (ret != VAPI_OK)
        return ret;
    const char *prov = h->info->fabric_attr->prov_name, *name = h->info->fabric_attr->name;
    int n = snprintf(buf, len, "%s;%s", prov ? prov : "", name ? name : "");
    if (n < 0 || (uint32_t)n >= len)
        ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "%u bytes cannot hold the fabric's name \"%s;%s\"", len,
                        prov ? prov : "", name ? name : "");
    vh_put(hca);
    return ret;
}
