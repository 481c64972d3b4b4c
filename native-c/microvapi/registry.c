/*
 * Handle table. VAPI handles are plain integers that reach us from Java, so every call must
 * survive a stale or made-up handle: a handle is (serial << 32 | slot + 1), the serial never
 * repeating within the process, and a lookup checks slot, serial and kind under one lock.
 * Lookups pin the object so a concurrent destroy waits for calls in progress instead of
 * freeing memory under them.
 */
#include <stdlib.h>

#include "mv_internal.h"

struct entry {
    uint32_t serial;     /* the handle's serial; 0 for a free slot */
    int      kind;       /* 0 = free slot */
    int      retired;    /* being destroyed: lookups fail */
    uint32_t pins;       /* calls currently using the object */
    uint32_t children;   /* linked child objects that keep it alive */
    uint64_t hca;        /* owning HCA (0 for an HCA) */
    void    *obj;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t  unpinned = PTHREAD_COND_INITIALIZER;
static struct entry   *table;
static uint32_t        cap, live;
static uint32_t        next_serial = 1;

static const char *kind_name(enum mv_kind kind)
{
    switch (kind) {
    case MV_HCA: return "HCA";
    case MV_PD:  return "protection domain";
    case MV_MR:  return "memory region";
    case MV_CQ:  return "completion queue";
    case MV_QP:  return "queue pair";
    }
    return "object";
}

static VAPI_ret_t bad_handle_code(enum mv_kind kind)
{
    switch (kind) {
    case MV_HCA: return VAPI_EINVAL_HCA_HNDL;
    case MV_CQ:  return VAPI_EINVAL_CQ_HNDL;
    case MV_QP:  return VAPI_EINVAL_QP_HNDL;
    default:     return VAPI_EINVAL_PARAM;
    }
}

/* Entry of a live (not retired) handle of that kind, or NULL; lock held. */
static struct entry *find(uint64_t h, enum mv_kind kind)
{
    uint32_t slot = (uint32_t)h, serial = (uint32_t)(h >> 32);
    if (slot == 0 || slot > cap)
        return NULL;
    struct entry *e = &table[slot - 1];
    if (e->kind != (int)kind || e->serial != serial || e->retired)
        return NULL;
    return e;
}

uint64_t mv_reg_add(enum mv_kind kind, uint64_t hca, void *obj)
{
    pthread_mutex_lock(&lock);
    uint32_t slot = 0;
    while (slot < cap && table[slot].kind != 0)
        slot++;
    if (slot == cap) {
        uint32_t ncap = cap ? cap * 2 : 16;
        struct entry *t = realloc(table, ncap * sizeof *t);
        if (!t) {
            pthread_mutex_unlock(&lock);
            return 0;
        }
        for (uint32_t i = cap; i < ncap; i++)
            t[i] = (struct entry){ 0 };
        table = t;
        cap = ncap;
    }
    struct entry *e = &table[slot];
    e->serial = next_serial++;
    if (next_serial == 0)
        next_serial = 1;
    e->kind = (int)kind;
    e->retired = 0;
    e->pins = 0;
    e->children = 0;
    e->hca = hca;
    e->obj = obj;
    live++;
    uint64_t h = ((uint64_t)e->serial << 32) | (slot + 1);
    pthread_mutex_unlock(&lock);
    return h;
}

VAPI_ret_t mv_reg_get(const char *fn, uint64_t hca, uint64_t h, enum mv_kind kind, void **obj)
{
    VAPI_ret_t ret = VAPI_OK;
    pthread_mutex_lock(&lock);
    struct entry *e;
    if (!find(hca, MV_HCA)) {
        ret = mv_fail(VAPI_EINVAL_HCA_HNDL, fn, "HCA handle 0x%llx is not open",
                      (unsigned long long)hca);
    } else if (!(e = find(h, kind)) || (kind != MV_HCA && e->hca != hca)) {
        ret = mv_fail(bad_handle_code(kind), fn, "%s handle 0x%llx is not valid on this HCA",
                      kind_name(kind), (unsigned long long)h);
    } else {
        e->pins++;
        *obj = e->obj;
    }
    pthread_mutex_unlock(&lock);
    return ret;
}

void mv_reg_put(uint64_t h)
{
    pthread_mutex_lock(&lock);
    struct entry *e = &table[(uint32_t)h - 1];
    e->pins--;
    if (e->retired)
        pthread_cond_broadcast(&unpinned);
    pthread_mutex_unlock(&lock);
}

VAPI_ret_t mv_reg_link(const char *fn, uint64_t parent, enum mv_kind kind)
{
    VAPI_ret_t ret = VAPI_OK;
    pthread_mutex_lock(&lock);
    struct entry *e = find(parent, kind);
    if (e)
        e->children++;
    else
        ret = mv_fail(bad_handle_code(kind), fn, "%s handle 0x%llx is being destroyed",
                      kind_name(kind), (unsigned long long)parent);
    pthread_mutex_unlock(&lock);
    return ret;
}

void mv_reg_unlink(uint64_t parent)
{
    pthread_mutex_lock(&lock);
    table[(uint32_t)parent - 1].children--;
    pthread_mutex_unlock(&lock);
}

VAPI_ret_t mv_reg_retire(const char *fn, uint64_t h, enum mv_kind kind)
{
    VAPI_ret_t ret = VAPI_OK;
    pthread_mutex_lock(&lock);
    struct entry *e = &table[(uint32_t)h - 1];
    if (e->retired)
        ret = mv_fail(bad_handle_code(kind), fn, "%s handle 0x%llx is already being destroyed",
                      kind_name(kind), (unsigned long long)h);
    else if (e->children > 0)
        ret = mv_fail(VAPI_EGEN, fn, "%s handle 0x%llx is still used by %u other object(s); "
                      "destroy those first", kind_name(kind), (unsigned long long)h,
                      e->children);
    else
        e->retired = 1;
    pthread_mutex_unlock(&lock);
    return ret;
}

void mv_reg_remove(uint64_t h)
{
    pthread_mutex_lock(&lock);
    struct entry *e = &table[(uint32_t)h - 1];
    while (e->pins > 1)
        pthread_cond_wait(&unpinned, &lock);
    e->kind = 0;
    e->obj = NULL;
    e->serial = 0;
    live--;
    if (live == 0) {
        /* Nothing open: give the table back so a finished program holds no memory of ours. */
        free(table);
        table = NULL;
        cap = 0;
    }
    pthread_mutex_unlock(&lock);
}
