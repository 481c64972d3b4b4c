/*
 * Thin Pthreads wrappers of the DECK API, plus the monotonic-clock helpers every wait in
 * libdeck uses (a wall-clock jump must not stretch or cut a timeout).
 */
#include <errno.h>
#include <stdlib.h>
#include "internal.h"

static int thread_result(int rc, const char *fn)
{
    return rc == 0 ? DECK_OK : deck_fail_errno(rc == ENOMEM ? DECK_ENOMEM : DECK_EINVAL, rc, "%s", fn);
}

int deck_thread_create(deck_thread_t *t, void *(*fn)(void *), void *arg)
{
    if (!t || !fn) return deck_fail(DECK_EINVAL, "deck_thread_create: null argument");
    return thread_result(pthread_create(t, NULL, fn, arg), "deck_thread_create");
}

int deck_thread_join(deck_thread_t t, void **result)
{
    return thread_result(pthread_join(t, result), "deck_thread_join");
}

int deck_mutex_init(deck_mutex_t *m)    { return thread_result(pthread_mutex_init(m, NULL), "deck_mutex_init"); }
int deck_mutex_lock(deck_mutex_t *m)    { return thread_result(pthread_mutex_lock(m), "deck_mutex_lock"); }
int deck_mutex_unlock(deck_mutex_t *m)  { return thread_result(pthread_mutex_unlock(m), "deck_mutex_unlock"); }
int deck_mutex_destroy(deck_mutex_t *m) { return thread_result(pthread_mutex_destroy(m), "deck_mutex_destroy"); }

int deck_cond_init(deck_cond_t *c)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(c, &attr);
    pthread_condattr_destroy(&attr);
    return thread_result(rc, "deck_cond_init");
}

int deck_cond_wait(deck_cond_t *c, deck_mutex_t *m) { return thread_result(pthread_cond_wait(c, m), "deck_cond_wait"); }
int deck_cond_signal(deck_cond_t *c)    { return thread_result(pthread_cond_signal(c), "deck_cond_signal"); }
int deck_cond_broadcast(deck_cond_t *c) { return thread_result(pthread_cond_broadcast(c), "deck_cond_broadcast"); }
int deck_cond_destroy(deck_cond_t *c)   { return thread_result(pthread_cond_destroy(c), "deck_cond_destroy"); }

struct timespec deck_time_after(const struct timespec *t, long us)
{
    struct timespec r = *t;
    r.tv_sec += us / 1000000L;
    r.tv_nsec += (us % 1000000L) * 1000L;
    if (r.tv_nsec >= 1000000000L) { r.tv_sec++; r.tv_nsec -= 1000000000L; }
    return r;
}

/* Whether `now` is at or past `t`. */
static int reached(const struct timespec *now, const struct timespec *t)
{
    return now->tv_sec > t->tv_sec || (now->tv_sec == t->tv_sec && now->tv_nsec >= t->tv_nsec);
}

void deck_deadline(struct timespec *abs, int ms)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    *abs = deck_time_after(&now, ms * 1000L);
}

int deck_deadline_passed(const struct timespec *abs)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return reached(&now, abs);
}

long deck_ms_until(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ns = (long long)(t->tv_sec - now.tv_sec) * 1000000000LL + (t->tv_nsec - now.tv_nsec);
    return ns <= 0 ? 0 : (long)((ns + 999999LL) / 1000000LL);
}

int deck_check_due(struct timespec *next, int ms)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    if (!reached(&now, next))
        return 0;
    *next = deck_time_after(&now, ms * 1000L);
    return 1;
}

/* Only valid on condvars made by deck_cond_init (CLOCK_MONOTONIC). */
int deck_cond_wait_until(deck_cond_t *c, deck_mutex_t *m, const struct timespec *abs)
{
    return pthread_cond_timedwait(c, m, abs);
}

int deck_cond_timedwait_ms(deck_cond_t *c, deck_mutex_t *m, int timeout_ms)
{
    if (timeout_ms < 0) return deck_cond_wait(c, m);
    struct timespec abs;
    deck_deadline(&abs, timeout_ms);
    int rc = deck_cond_wait_until(c, m, &abs);
    if (rc == ETIMEDOUT) return deck_fail(DECK_ETIMEDOUT, "deck_cond_timedwait_ms: %d ms passed", timeout_ms);
    return thread_result(rc, "deck_cond_timedwait_ms");
}

int deck_sema_init(deck_sema_t *s, unsigned value)
{
    return sem_init(s, 0, value) == 0 ? DECK_OK : deck_fail_errno(DECK_EINVAL, errno, "deck_sema_init");
}

int deck_sema_wait(deck_sema_t *s)
{
    int rc;
    while ((rc = sem_wait(s)) != 0 && errno == EINTR) {}   /* a signal is not a failure */
    return rc == 0 ? DECK_OK : deck_fail_errno(DECK_EINVAL, errno, "deck_sema_wait");
}

int deck_sema_post(deck_sema_t *s)
{
    return sem_post(s) == 0 ? DECK_OK : deck_fail_errno(DECK_EINVAL, errno, "deck_sema_post");
}

int deck_sema_destroy(deck_sema_t *s)
{
    return sem_destroy(s) == 0 ? DECK_OK : deck_fail_errno(DECK_EINVAL, errno, "deck_sema_destroy");
}
