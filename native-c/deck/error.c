/* Result codes and the per-thread text of the last failure. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

/* Thread-local so that concurrent callers each read the text of their own failure. */
static _Thread_local char last_error[512];

const char *deck_strerror(int code)
{
    switch (code) {
    case DECK_OK:        return "success";
    case DECK_EINVAL:    return "invalid argument";
    case DECK_ENOMEM:    return "out of memory";
    case DECK_ESTATE:    return "wrong state";
    case DECK_ENOTFOUND: return "not found";
    case DECK_EEXIST:    return "already exists";
    case DECK_EIO:       return "transport failure";
    case DECK_EPEER:     return "peer has gone away";
    case DECK_ETRUNC:    return "message larger than the receiving buffer";
    case DECK_ERANGE:    return "past the end of the message";
    case DECK_ECONFIG:   return "bad configuration";
    case DECK_ETIMEDOUT: return "timed out";
    case DECK_ECLOSED:   return "mailbox destroyed";
    default:             return "unknown DECK error code";
    }
}

const char *deck_last_error(void)
{
    return last_error[0] ? last_error : "no error";
}

int deck_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

int deck_fail_text(int code, const char *text)
{
    size_t n = strlen(text);
    if (n >= sizeof last_error) n = sizeof last_error - 1;
    memcpy(last_error, text, n);
    last_error[n] = '\0';
    return code;
}

int deck_fail_errno(int code, int err, const char *fmt, ...)
{
    char errbuf[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof last_error)
        snprintf(last_error + n, sizeof last_error - (size_t)n, ": %s",
                 strerror_r(err, errbuf, sizeof errbuf));
    return code;
}
