/*
 * Memory regions. DECK copies data into its messages, so a region has no meaning here (thesis
 * 4.4.4): it only checks its arguments and hands out a handle, so the adapter's set-up and
 * tear-down run unchanged. A region must still be deregistered before its PD is freed
 * (vapi_common/vapi_pd.c), and both before the HCA is released, as with real VAPI.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "mv_internal.h"

struct mv_mr {
    VAPI_pd_hndl_t pd;
};

/* Local keys are just distinct non-zero numbers. */
static atomic_uint next_lkey = 1;

VAPI_ret_t VAPI_register_mr(VAPI_hca_hndl_t hca, VAPI_pd_hndl_t pd, uint64_t addr, uint64_t size,
                            VAPI_mr_hndl_t *mr, uint32_t *lkey)
{
    static const char fn[] = "VAPI_register_mr";
    if (!mr || !lkey)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "%s is NULL", mr ? "lkey" : "mr");
    if (addr == 0 || size == 0 || addr + size < addr)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "region [0x%llx, +%llu) is not valid memory",
                       (unsigned long long)addr, (unsigned long long)size);
    void *pd_obj;
    VAPI_ret_t ret = vh_get(fn, hca, pd, VH_PD, &pd_obj);
    if (ret != VAPI_OK)
        return ret;
    struct mv_mr *obj = malloc(sizeof *obj);
    if (!obj) {
        vh_put(pd);
        return vapi_fail(VAPI_ENOMEM, fn, "no memory for the region");
    }
    obj->pd = pd;
    ret = vh_link(fn, pd, VH_PD);
    if (ret == VAPI_OK && (ret = vh_link(fn, hca, VH_HCA)) != VAPI_OK)
        vh_unlink(pd);
    if (ret == VAPI_OK && (*mr = vh_add(VH_MR, hca, obj)) == 0) {
        vh_unlink(hca);
        vh_unlink(pd);
        ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
    }
    if (ret == VAPI_OK) {
        unsigned k;
        while ((k = atomic_fetch_add(&next_lkey, 1)) == 0)
            ;   /* 0 after wrap-around: take the next one */
        *lkey = k;
    } else {
        free(obj);
    }
    vh_put(pd);
    return ret;
}

VAPI_ret_t VAPI_deregister_mr(VAPI_hca_hndl_t hca, VAPI_mr_hndl_t mr)
{
    static const char fn[] = "VAPI_deregister_mr";
    struct mv_mr *obj;
    VAPI_ret_t ret = vh_take(fn, hca, mr, VH_MR, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    vh_unlink(obj->pd);
    vh_unlink(hca);
    free(obj);
    return VAPI_OK;
}
