/* Result codes and the per-thread text of the last failure. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "internal.h"

#define LOG_LINES_PER_SECOND 20

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
    case DECK_EPROTO:    return "protocol violated by the peer";
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

static deck_log_fn log_hook;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static time_t log_second;
static int    log_lines, log_dropped;

void deck_set_log(deck_log_fn fn) { __atomic_store_n(&log_hook, fn, __ATOMIC_RELEASE); }

static void emit(const char *line)
{
    deck_log_fn fn = __atomic_load_n(&log_hook, __ATOMIC_ACQUIRE);
    if (fn) fn(line);
    else fprintf(stderr, "%s\n", line);
}

/* An attacker can make a line per connection: the rate limit keeps that from flooding the log. */
void deck_log(const char *fmt, ...)
{
    char line[640];
    int n = snprintf(line, sizeof line, "deck: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&log_lock);
    int dropped = 0, keep;
    if (now.tv_sec != log_second) {
        dropped = log_dropped;
        log_second = now.tv_sec;
        log_lines = log_dropped = 0;
    }
    keep = log_lines++ < LOG_LINES_PER_SECOND;
    if (!keep) log_dropped++;
    pthread_mutex_unlock(&log_lock);
    if (dropped) {
        char more[96];
        snprintf(more, sizeof more, "deck: %d more log lines left out (at most %d a second)", dropped,
                 LOG_LINES_PER_SECOND);
        emit(more);
    }
    if (keep) emit(line);
}
