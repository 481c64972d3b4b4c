/*
 * The per-message calls without arguments (vapi.h, EVAPI_call_t): each reads the arguments
 * from the calling thread's bound call block and makes the call it stands for, so both
 * libraries that implement vapi.h have them with the same meaning and errors.
 */
#include <stddef.h>
#include <stdint.h>

#include "vapi_common.h"

_Static_assert(sizeof(EVAPI_call_t) == 32 && offsetof(EVAPI_call_t, handle) == 8
               && offsetof(EVAPI_call_t, list) == 16 && offsetof(EVAPI_call_t, count) == 24,
               "the call block's layout is the one vapi.h draws (the Java binding writes it)");

/* initial-exec: a load at a fixed offset from the thread pointer rather than a call of
 * __tls_get_addr; one pointer fits the static TLS that glibc keeps for libraries loaded later. */
static __thread const EVAPI_call_t *bound __attribute__((tls_model("initial-exec")));

VAPI_ret_t EVAPI_bind_call_block(const EVAPI_call_t *call)
{
    bound = call;
    return VAPI_OK;
}

static VAPI_ret_t unbound(const char *fn)
{
    return vapi_fail(VAPI_EINVAL_PARAM, fn, "this thread has bound no call block (EVAPI_bind_call_block)");
}

VAPI_ret_t EVAPI_post_sr_bound(void)
{
    const EVAPI_call_t *call = bound;
    if (!call)
        return unbound("EVAPI_post_sr_bound");
    return EVAPI_post_sr_list(call->hca, call->handle, call->count,
                              (const VAPI_sr_desc_t *)(uintptr_t)call->list);
}

VAPI_ret_t EVAPI_post_rr_bound(void)
{
    const EVAPI_call_t *call = bound;
    if (!call)
        return unbound("EVAPI_post_rr_bound");
    return EVAPI_post_rr_list(call->hca, call->handle, call->count,
                              (const VAPI_rr_desc_t *)(uintptr_t)call->list);
}

VAPI_ret_t EVAPI_wait_cq_bound(void)
{
    const EVAPI_call_t *call = bound;
    if (!call)
        return unbound("EVAPI_wait_cq_bound");
    return EVAPI_wait_cq(call->hca, call->handle, call->count);
}
