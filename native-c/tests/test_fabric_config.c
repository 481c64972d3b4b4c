/*
 * libaldeiafabric's init string and provider choice: every wrong key or value is refused
 * with its name in the error; with no provider named, the library takes only fabric hardware
 * and, finding none here, says so and lists what it found; a named provider and domain open.
 */
#include <stdio.h>
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

    VAPI_hca_hndl_t hca;
    VAPI_hca_port_t port;
    VOK(EVAPI_get_hca_hndl("fabric:provider=tcp,domain=lo,mtu=2048,tc=2", &hca));
    VOK(VAPI_query_hca_port_prop(hca, 1, &port));
    CHECK(port.lid != 0 && port.state == 4 && port.max_mtu == 2048);
    VCHECK(VAPI_query_hca_port_prop(hca, 2, &port), VAPI_EINVAL_PARAM);
    VOK(EVAPI_release_hca_hndl(hca));
    VCHECK(EVAPI_release_hca_hndl(hca), VAPI_EINVAL_HCA_HNDL);
    printf("test_fabric_config: ok\n");
    return 0;
}
