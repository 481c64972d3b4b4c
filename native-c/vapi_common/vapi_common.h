/*
 * What every vapi.h implementation in this tree shares (MicroVAPI, the fabric library):
 *
 *   vapi_error.c    thread-local EVAPI_last_error text, VAPI_strerror
 *   vapi_handles.c  handle table: handle -> object, pinning, parent/child links
 *   vapi_pd.c       protection domains
 *   vapi_calls.c    the per-message calls without arguments (a thread's bound call block)
 */
#ifndef VAPI_COMMON_H
#define VAPI_COMMON_H

#include <stdint.h>
#include <time.h>

#include "vapi.h"

/* Nanoseconds on the monotonic clock. */
static inline uint64_t vapi_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* CLOCK_REALTIME ms from now: the deadline of a pthread_cond_timedwait (its default clock). */
static inline struct timespec vapi_realtime_in_ms(long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += ms * 1000000L;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

/* ---- errors (vapi_error.c) -------------------------------------------------------------------- */
/* Records "fn: text" as this thread's last error and returns ret, so failures read
 * `return vapi_fail(VAPI_EINVAL_PARAM, fn, "...", ...);`. */
VAPI_ret_t vapi_fail(VAPI_ret_t ret, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- handles (vapi_handles.c) ---------------------------------------------------------------- */
enum vh_kind { VH_HCA = 1, VH_PD, VH_MR, VH_CQ, VH_QP };

/* New handle for obj, owned by HCA `hca` (0 for an HCA itself); 0 if out of memory. */
uint64_t vh_add(enum vh_kind kind, uint64_t hca, void *obj);
/* Looks up live handle h of `kind` belonging to `hca` and pins it (it cannot be removed until
 * vh_put). Fails with the error code of that kind of handle. */
VAPI_ret_t vh_get(const char *fn, uint64_t hca, uint64_t h, enum vh_kind kind, void **obj);
void vh_put(uint64_t h);
/* A child object (MR of a PD, QP of a CQ, anything of an HCA) keeps its parent alive: the parent
 * cannot be retired while linked. Fails if the parent is retired. */
VAPI_ret_t vh_link(const char *fn, uint64_t parent, enum vh_kind kind);
void vh_unlink(uint64_t parent);
/* First step of destroying pinned handle h: refuses if children are linked or another thread
 * is already destroying it; afterwards lookups fail. */
VAPI_ret_t vh_retire(const char *fn, uint64_t h, enum vh_kind kind);
/* Second step: waits until the caller holds the only pin, then frees the handle. */
void vh_remove(uint64_t h);
/* vh_get, vh_retire and vh_remove in one, for a destroy with nothing to do in between: on
 * VAPI_OK the handle is gone and *obj is the caller's to free. */
VAPI_ret_t vh_take(const char *fn, uint64_t hca, uint64_t h, enum vh_kind kind, void **obj);

#endif
