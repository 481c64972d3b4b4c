/*
 * Protection domains. Neither MicroVAPI nor libfabric's RDM endpoints give a PD a meaning of
 * its own (libfabric's domain is the HCA's), so a PD is only a handle that keeps its HCA alive
 * and must be freed after its regions and before the HCA, as with real VAPI.
 */
#include <stddef.h>

#include "vapi_common.h"

VAPI_ret_t VAPI_alloc_pd(VAPI_hca_hndl_t hca, VAPI_pd_hndl_t *pd)
{
    static const char fn[] = "VAPI_alloc_pd";
    void *obj;
    if (!pd)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "pd is NULL");
    VAPI_ret_t ret = vh_get(fn, hca, hca, VH_HCA, &obj);
    if (ret != VAPI_OK)
        return ret;
    ret = vh_link(fn, hca, VH_HCA);
    if (ret == VAPI_OK) {
        *pd = vh_add(VH_PD, hca, NULL);
        if (*pd == 0) {
            vh_unlink(hca);
            ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
        }
    }
    vh_put(hca);
    return ret;
}

VAPI_ret_t VAPI_dealloc_pd(VAPI_hca_hndl_t hca, VAPI_pd_hndl_t pd)
{
    static const char fn[] = "VAPI_dealloc_pd";
    void *obj;
    VAPI_ret_t ret = vh_take(fn, hca, pd, VH_PD, &obj);
    if (ret != VAPI_OK)
        return ret;
    vh_unlink(hca);
    return VAPI_OK;
}
