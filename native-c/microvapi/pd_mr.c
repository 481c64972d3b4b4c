/*
 * Protection domains and memory regions. DECK copies data into its messages, so neither has a
 * meaning here (thesis 4.4.4): they only check their arguments and hand out handles, so the
 * adapter's set-up and tear-down run unchanged. A region must still be deregistered before
 * its PD is freed, and both before the HCA is released, as with real VAPI.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "mv_internal.h"

struct mv_mr {
    VAPI_pd_hndl_t pd;
};

/* Local keys are just distinct non-zero numbers. */
static atomic_uint next_lkey = 1;

VAPI_ret_t VAPI_alloc_pd(VAPI_hca_hndl_t hca, VAPI_pd_hndl_t *pd)
{
    static const char fn[] = "VAPI_alloc_pd";
    void *obj;
    if (!pd)
        return mv_fail(VAPI_EINVAL_PARAM, fn, "pd is NULL");
    VAPI_ret_t ret = mv_reg_get(fn, hca, hca, MV_HCA, &obj);
    if (ret != VAPI_OK)
        return ret;
    ret = mv_reg_link(fn, hca, MV_HCA);
    if (ret == VAPI_OK) {
        *pd = mv_reg_add(MV_PD, hca, NULL);
        if (*pd == 0) {
            mv_reg_unlink(hca);
            ret = mv_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
        }
    }
    mv_reg_put(hca);
    return ret;
}

VAPI_ret_t VAPI_dealloc_pd(VAPI_hca_hndl_t hca, VAPI_pd_hndl_t pd)
{
    static const char fn[] = "VAPI_dealloc_pd";
    void *obj;
    VAPI_ret_t ret = mv_reg_get(fn, hca, pd, MV_PD, &obj);
    if (ret != VAPI_OK)
        return ret;
    ret = mv_reg_retire(fn, pd, MV_PD);
    if (ret != VAPI_OK) {
        mv_reg_put(pd);
        return ret;
    }
    mv_reg_remove(pd);
    mv_reg_unlink(hca);
    return VAPI_OK;
}

VAPI_ret_t VAPI_register_mr(VAPI_hca_hndl_t hca, VAPI_pd_hndl_t pd, uint64_t addr, uint64_t size,
                            VAPI_mr_hndl_t *mr, uint32_t *lkey)
{
    static const char fn[] = "VAPI_register_mr";
    if (!mr || !lkey)
        return mv_fail(VAPI_EINVAL_PARAM, fn, "%s is NULL", mr ? "lkey" : "mr");
    if (addr == 0 || size == 0 || addr + size < addr)
        return mv_fail(VAPI_EINVAL_PARAM, fn, "region [0x%llx, +%llu) is not valid memory",
                       (unsigned long long)addr, (unsigned long long)size);
    void *pd_obj;
    VAPI_ret_t ret = mv_reg_get(fn, hca, pd, MV_PD, &pd_obj);
    if (ret != VAPI_OK)
        return ret;
    struct mv_mr *obj = malloc(sizeof *obj);
    if (!obj) {
        mv_reg_put(pd);
        return mv_fail(VAPI_ENOMEM, fn, "no memory for the region");
    }
    obj->pd = pd;
    ret = mv_reg_link(fn, pd, MV_PD);
    if (ret == VAPI_OK && (ret = mv_reg_link(fn, hca, MV_HCA)) != VAPI_OK)
        mv_reg_unlink(pd);
    if (ret == VAPI_OK && (*mr = mv_reg_add(MV_MR, hca, obj)) == 0) {
        mv_reg_unlink(hca);
        mv_reg_unlink(pd);
        ret = mv_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
    }
    if (ret == VAPI_OK) {
        unsigned k;
        while ((k = atomic_fetch_add(&next_lkey, 1)) == 0)
            ;   /* 0 after wrap-around: take the next one */
        *lkey = k;
    } else {
        free(obj);
    }
    mv_reg_put(pd);
    return ret;
}

VAPI_ret_t VAPI_deregister_mr(VAPI_hca_hndl_t hca, VAPI_mr_hndl_t mr)
{
    static const char fn[] = "VAPI_deregister_mr";
    struct mv_mr *obj;
    VAPI_ret_t ret = mv_reg_get(fn, hca, mr, MV_MR, (void **)&obj);
    if (ret != VAPI_OK)
        return ret;
    ret = mv_reg_retire(fn, mr, MV_MR);
    if (ret != VAPI_OK) {
        mv_reg_put(mr);
        return ret;
    }
    mv_reg_remove(mr);
    mv_reg_unlink(obj->pd);
    mv_reg_unlink(hca);
    free(obj);
    return VAPI_OK;
}
