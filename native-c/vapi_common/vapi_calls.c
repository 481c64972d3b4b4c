/*
 * The one-argument forms of the per-message calls (vapi.h, EVAPI_call_t): each unpacks its
 * call block and makes the call it stands for, so both libraries that implement vapi.h have
 * them with the same meaning and errors.
 */
#include <stddef.h>
#include <stdint.h>

#include "vapi_common.h"

_Static_assert(sizeof(EVAPI_call_t) == 32 && offsetof(EVAPI_call_t, handle) == 8
               && offsetof(EVAPI_call_t, list) == 16 && offsetof(EVAPI_call_t, count) == 24,
               "the call block's layout is the one vapi.h draws (the Java binding writes it)");

VAPI_ret_t EVAPI_post_sr_call(const EVAPI_call_t *call)
{
    if (!call)
        return vapi_fail(VAPI_EINVAL_PARAM, "EVAPI_post_sr_call", "the call block is NULL");
    return EVAPI_post_sr_list(call->hca, call->handle, call->count,
                              (const VAPI_sr_desc_t *)(uintptr_t)call->list);
}

VAPI_ret_t EVAPI_post_rr_call(const EVAPI_call_t *call)
{
    if (!call)
        return vapi_fail(VAPI_EINVAL_PARAM, "EVAPI_post_rr_call", "the call block is NULL");
    return EVAPI_post_rr_list(call->hca, call->handle, call->count,
                              (const VAPI_rr_desc_t *)(uintptr_t)call->list);
}

VAPI_ret_t EVAPI_wait_cq_call(const EVAPI_call_t *call)
{
    if (!call)
        return vapi_fail(VAPI_EINVAL_PARAM, "EVAPI_wait_cq_call", "the call block is NULL");
    return EVAPI_wait_cq(call->hca, call->handle, call->count);
}
