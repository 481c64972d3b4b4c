/* Error reporting: VAPI_strerror and the per-thread text EVAPI_last_error returns. */
#include <stdarg.h>
#include <stdio.h>

#include "vapi_common.h"

/* Thread-local, because the Java writer and reader threads fail independently and each must
 * read its own cause right after the call that failed. */
static _Thread_local char last_error[512];

VAPI_ret_t vapi_fail(VAPI_ret_t ret, const char *fn, const char *fmt, ...)
{
    int n = snprintf(last_error, sizeof last_error, "%s: ", fn);
    if (n < 0 || (size_t)n >= sizeof last_error)
        return ret;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
    va_end(ap);
    return ret;
}

const char *EVAPI_last_error(void)
{
    return last_error[0] ? last_error : "no error";
}

const char *VAPI_strerror(VAPI_ret_t ret)
{
    switch (ret) {
    case VAPI_OK:              return "VAPI_OK: success";
    case VAPI_CQ_EMPTY:        return "VAPI_CQ_EMPTY: no completion";
    case VAPI_ETIMEDOUT:       return "VAPI_ETIMEDOUT: no completion within the time limit";
    case VAPI_EGEN:            return "VAPI_EGEN: general failure";
    case VAPI_EINVAL_PARAM:    return "VAPI_EINVAL_PARAM: invalid parameter";
    case VAPI_EINVAL_HCA_HNDL: return "VAPI_EINVAL_HCA_HNDL: invalid HCA handle";
    case VAPI_EINVAL_QP_HNDL:  return "VAPI_EINVAL_QP_HNDL: invalid queue pair handle";
    case VAPI_EINVAL_CQ_HNDL:  return "VAPI_EINVAL_CQ_HNDL: invalid completion queue handle";
    case VAPI_EINVAL_QP_STATE: return "VAPI_EINVAL_QP_STATE: queue pair in the wrong state";
    case VAPI_ENOMEM:          return "VAPI_ENOMEM: out of memory";
    case VAPI_EAGAIN:          return "VAPI_EAGAIN: work queue full";
    case VAPI_ENOSYS:          return "VAPI_ENOSYS: not supported";
    default:                   return "unknown VAPI return code";
    }
}
