/*
 * Handle table. VAPI handles are plain integers that reach us from Java, so every call must
 * survive a stale or made-up handle: a handle is (serial << 32 | slot + 1), the serial never
 * repeating within the process, and a lookup checks slot, serial and kind. Lookups pin the
 * object so a concurrent destroy waits for calls in progress instead of freeing memory under
 * them.
 *
 * Every VAPI call looks a handle up and lets it go, from every thread of the process (a
 * socket's reader and writer, the engine's threads), so the lookup takes no lock: one
 * compare-and-swap on the entry's state word, which holds the serial, the kind, the retired
 * flag and the pin count together. Under one process-wide mutex, the lookups of a 64 B
 * message's calls cost 15-20 ns of MicroVAPI's 0.46 us one-way (C ping-pong, measured), every
 * thread of the process took that one lock, and a thread preempted while holding it stalled
 * every other one. Adding, retiring, linking and removing still take the mutex (they are rare),
 * and a pinned entry's serial and kind never change, so its obj and hca are stable.
 *
 * Entries live in segments of SEGMENT_SLOTS that are allocated on demand and never move or go
 * away, so a lookup racing with anything reads mapped memory: a slot of a segment not yet
 * there is simply not a live handle.
 *
 *   state word (64 bits):  | serial (32) | kind (3) | retired (1) | pins (28) |
 *                           63         32 31     29   28            27       0
 */
#include <pthread.h>
#include <stdlib.h>

#include "vapi_common.h"

#define SEGMENT_SLOTS 256u
#define SEGMENTS      4096u            /* up to 2^20 handles at once */
#define PIN_BITS      28
#define PINS_MASK     ((1ull << PIN_BITS) - 1)
#define RETIRED_BIT   (1ull << PIN_BITS)
#define KIND_SHIFT    (PIN_BITS + 1)
#define SERIAL_SHIFT  32

struct entry {
    _Atomic uint64_t state;  /* 0 = free slot; else see the diagram above */
    uint32_t children;       /* linked child objects that keep it alive (mutex) */
    uint64_t hca;            /* owning HCA (0 for an HCA); set before the state publishes it */
    void    *obj;            /* hca and obj: atomic accesses, a lookup may read them while a
                              * destroy of the same slot clears them (its serial check fails) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t  unpinned = PTHREAD_COND_INITIALIZER;
static struct entry *_Atomic segments[SEGMENTS];
static uint32_t        cap;              /* slots in the segments allocated so far (mutex) */
static uint32_t        next_serial = 1;  /* mutex */

static const char *kind_name(enum vh_kind kind)
{
    switch (kind) {
    case VH_HCA: return "HCA";
    case VH_PD:  return "protection domain";
    case VH_MR:  return "memory region";
    case VH_CQ:  return "completion queue";
    case VH_QP:  return "queue pair";
    }
    return "object";
}

static VAPI_ret_t bad_handle_code(enum vh_kind kind)
{
    switch (kind) {
    case VH_HCA: return VAPI_EINVAL_HCA_HNDL;
    case VH_CQ:  return VAPI_EINVAL_CQ_HNDL;
    case VH_QP:  return VAPI_EINVAL_QP_HNDL;
    default:     return VAPI_EINVAL_PARAM;
    }
}

/* The entry of slot index i (from 0), or NULL when its segment does not exist. */
static struct entry *entry_at(uint32_t i)
{
    if (i / SEGMENT_SLOTS >= SEGMENTS)
        return NULL;
    struct entry *segment = __atomic_load_n(&segments[i / SEGMENT_SLOTS], __ATOMIC_ACQUIRE);
    return segment ? &segment[i % SEGMENT_SLOTS] : NULL;
}

/* The entry a handle names (whatever it holds now), or NULL when it names no slot. */
static struct entry *slot_of(uint64_t h)
{
    uint32_t slot = (uint32_t)h;
    return slot == 0 ? NULL : entry_at(slot - 1);
}

/* The state a live, not retired handle h of `kind` has, pins aside. */
static uint64_t live_state(uint64_t h, enum vh_kind kind)
{
    return (h >> SERIAL_SHIFT) << SERIAL_SHIFT | (uint64_t)kind << KIND_SHIFT;
}

static int is_live(uint64_t state, uint64_t h, enum vh_kind kind)
{
    return (uint32_t)(h >> SERIAL_SHIFT) != 0 && (state & ~PINS_MASK) == live_state(h, kind);
}

/* Entry of live (not retired) handle h of that kind, or NULL; a snapshot, the mutex held or not. */
static struct entry *find(uint64_t h, enum vh_kind kind)
{
    struct entry *e = slot_of(h);
    return e && is_live(__atomic_load_n(&e->state, __ATOMIC_ACQUIRE), h, kind) ? e : NULL;
}

/* A free slot's entry, adding a segment if every one is taken; NULL if out of memory. Mutex held. */
static struct entry *free_slot(uint32_t *slot)
{
    for (uint32_t i = 0; i < cap; i++) {
        struct entry *e = entry_at(i);
        if (__atomic_load_n(&e->state, __ATOMIC_RELAXED) == 0) {
            *slot = i;
            return e;
        }
    }
    if (cap / SEGMENT_SLOTS >= SEGMENTS)
        return NULL;
    struct entry *segment = calloc(SEGMENT_SLOTS, sizeof *segment);
    if (!segment)
        return NULL;
    __atomic_store_n(&segments[cap / SEGMENT_SLOTS], segment, __ATOMIC_RELEASE);
    *slot = cap;
    cap += SEGMENT_SLOTS;
    return segment;
}

uint64_t vh_add(enum vh_kind kind, uint64_t hca, void *obj)
{
    pthread_mutex_lock(&lock);
    uint32_t slot;
    struct entry *e = free_slot(&slot);
    if (!e) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    uint64_t h = (uint64_t)next_serial << SERIAL_SHIFT | (slot + 1);
    if (++next_serial == 0)
        next_serial = 1;
    e->children = 0;
    __atomic_store_n(&e->hca, hca, __ATOMIC_RELAXED);
    __atomic_store_n(&e->obj, obj, __ATOMIC_RELAXED);
    __atomic_store_n(&e->state, live_state(h, kind), __ATOMIC_RELEASE);   /* publishes hca, obj */
    pthread_mutex_unlock(&lock);
    return h;
}

VAPI_ret_t vh_get(const char *fn, uint64_t hca, uint64_t h, enum vh_kind kind, void **obj)
{
    if (!find(hca, VH_HCA))
        return vapi_fail(VAPI_EINVAL_HCA_HNDL, fn, "HCA handle 0x%llx is not open", (unsigned long long)hca);
    struct entry *e = slot_of(h);
    uint64_t state = e ? __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) : 0;
    for (;;) {
        if (!e || !is_live(state, h, kind) || (kind != VH_HCA && __atomic_load_n(&e->hca, __ATOMIC_RELAXED) != hca))
            return vapi_fail(bad_handle_code(kind), fn, "%s handle 0x%llx is not valid on this HCA",
                           kind_name(kind), (unsigned long long)h);
        if ((state & PINS_MASK) == PINS_MASK)
            return vapi_fail(VAPI_EAGAIN, fn, "%s handle 0x%llx is in %llu calls at once", kind_name(kind),
                           (unsigned long long)h, (unsigned long long)PINS_MASK);
        if (__atomic_compare_exchange_n(&e->state, &state, state + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
            break;
    }
    *obj = __atomic_load_n(&e->obj, __ATOMIC_RELAXED);   /* pinned: it stays */
    return VAPI_OK;
}

void vh_put(uint64_t h)
{
    struct entry *e = slot_of(h);
    uint64_t before = __atomic_fetch_sub(&e->state, 1, __ATOMIC_RELEASE);
    if (before & RETIRED_BIT) {
        /* Its destroyer may wait for this pin (vh_remove): tell it under the mutex, which
         * it holds between looking at the pins and sleeping, so the wake-up is not lost. */
        pthread_mutex_lock(&lock);
        pthread_cond_broadcast(&unpinned);
        pthread_mutex_unlock(&lock);
    }
}

VAPI_ret_t vh_link(const char *fn, uint64_t parent, enum vh_kind kind)
{
    VAPI_ret_t ret = VAPI_OK;
    pthread_mutex_lock(&lock);
    struct entry *e = find(parent, kind);
    if (e)
        e->children++;
    else
        ret = vapi_fail(bad_handle_code(kind), fn, "%s handle 0x%llx is being destroyed",
                      kind_name(kind), (unsigned long long)parent);
    pthread_mutex_unlock(&lock);
    return ret;
}

void vh_unlink(uint64_t parent)
{
    pthread_mutex_lock(&lock);
    slot_of(parent)->children--;
    pthread_mutex_unlock(&lock);
}

VAPI_ret_t vh_retire(const char *fn, uint64_t h, enum vh_kind kind)
{
    VAPI_ret_t ret = VAPI_OK;
    pthread_mutex_lock(&lock);
    struct entry *e = slot_of(h);
    if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) & RETIRED_BIT)
        ret = vapi_fail(bad_handle_code(kind), fn, "%s handle 0x%llx is already being destroyed",
                      kind_name(kind), (unsigned long long)h);
    else if (e->children > 0)
        ret = vapi_fail(VAPI_EGEN, fn, "%s handle 0x%llx is still used by %u other object(s); "
                      "destroy those first", kind_name(kind), (unsigned long long)h,
                      e->children);
    else
        __atomic_fetch_or(&e->state, RETIRED_BIT, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&lock);
    return ret;
}

void vh_remove(uint64_t h)
{
    pthread_mutex_lock(&lock);
    struct entry *e = slot_of(h);
    while ((__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) & PINS_MASK) > 1)
        pthread_cond_wait(&unpinned, &lock);
    /* Retired, so no lookup pins it any more: the caller's pin is the last. */
    __atomic_store_n(&e->state, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&e->obj, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&e->hca, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
}

VAPI_ret_t vh_take(const char *fn, uint64_t hca, uint64_t h, enum vh_kind kind, void **obj)
{
    VAPI_ret_t ret = vh_get(fn, hca, h, kind, obj);
    if (ret != VAPI_OK)
        return ret;
    if ((ret = vh_retire(fn, h, kind)) != VAPI_OK) {
        vh_put(h);
        return ret;
    }
    vh_remove(h);
    return VAPI_OK;
}
