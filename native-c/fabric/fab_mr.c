/*
 * Memory regions: fi_mr_reg of the application's memory (the channel's send ring and receive
 * buffers), for sends and receives only (no remote access is ever granted). Each region gets
 * an lkey, its index in the HCA's table plus one, and every posted request is checked against
 * the region its lkey names, so a request never hands libfabric memory outside a registered
 * region, whatever the caller passes; the descriptor the provider needs (FI_MR_LOCAL) comes
 * from the same lookup.
 */
#include <stdlib.h>
#include <string.h>

#include "fab_internal.h"

struct fab_mr {
    struct fab_hca *hca;
    VAPI_pd_hndl_t  pd;
    struct fid_mr  *mr;
    uint64_t        addr, size;
    uint32_t        lkey;
};

struct fab_mr_table {
    pthread_rwlock_t lock;
    struct fab_mr  **regions;    /* [lkey - 1]; NULL: free */
    uint32_t         cap;
};

struct fab_mr_table *fab_mr_table_new(void)
{
    struct fab_mr_table *t = calloc(1, sizeof *t);
    if (t)
        pthread_rwlock_init(&t->lock, NULL);
    return t;
}

void fab_mr_table_free(struct fab_mr_table *t)
{
    if (!t)
        return;
    pthread_rwlock_destroy(&t->lock);
    free(t->regions);
    free(t);
}

/* Enters r under a free lkey; 0 if out of memory. */
static uint32_t table_add(struct fab_mr_table *t, struct fab_mr *r)
{
    uint32_t key = 0;
    pthread_rwlock_wrlock(&t->lock);
    for (uint32_t i = 0; i < t->cap && !key; i++)
        if (!t->regions[i])
            key = i + 1;
    if (!key) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        struct fab_mr **grown = realloc(t->regions, cap * sizeof *grown);
        if (grown) {
            memset(grown + t->cap, 0, (cap - t->cap) * sizeof *grown);
            key = t->cap + 1;
            t->regions = grown;
            t->cap = cap;
        }
    }
    if (key)
        t->regions[key - 1] = r;
    pthread_rwlock_unlock(&t->lock);
    return key;
}

static void table_remove(struct fab_mr_table *t, uint32_t lkey)
{
    pthread_rwlock_wrlock(&t->lock);
    t->regions[lkey - 1] = NULL;
    pthread_rwlock_unlock(&t->lock);
}

VAPI_ret_t fab_mr_desc(const char *fn, struct fab_hca *hca, uint32_t lkey, uint64_t addr, uint32_t len,
                       void **desc)
{
    struct fab_mr_table *t = hca->mrs;
    VAPI_ret_t ret = VAPI_OK;
    pthread_rwlock_rdlock(&t->lock);
    struct fab_mr *r = lkey >= 1 && lkey <= t->cap ? t->regions[lkey - 1] : NULL;
    if (!r)
        ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "lkey %u names no registered region", lkey);
    else if (addr < r->addr || addr - r->addr > r->size || len > r->size - (addr - r->addr))
        ret = vapi_fail(VAPI_EINVAL_PARAM, fn, "[0x%llx, +%u) is not inside region %u [0x%llx, +%llu)",
                        (unsigned long long)addr, len, lkey, (unsigned long long)r->addr,
                        (unsigned long long)r->size);
    else
        *desc = hca->mr_local ? fi_mr_desc(r->mr) : NULL;
    pthread_rwlock_unlock(&t->lock);
    return ret;
}

VAPI_ret_t VAPI_register_mr(VAPI_hca_hndl_t hca, VAPI_pd_hndl_t pd, uint64_t addr, uint64_t size,
                            VAPI_mr_hndl_t *mr, uint32_t *lkey)
{
    static const char fn[] = "VAPI_register_mr";
    if (!mr || !lkey)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "%s is NULL", mr ? "lkey" : "mr");
    if (addr == 0 || size == 0 || addr + size < addr)
        return vapi_fail(VAPI_EINVAL_PARAM, fn, "region [0x%llx, +%llu) is not valid memory",
                         (unsigned long long)addr, (unsigned long long)size);
    struct fab_hca *h;
    VAPI_ret_t ret = vh_get(fn, hca, hca, VH_HCA, (void **)&h);
    if (ret != VAPI_OK)
        return ret;
    void *pd_obj;
    if ((ret = vh_get(fn, hca, pd, VH_PD, &pd_obj)) != VAPI_OK) {
        vh_put(hca);
        return ret;
    }
    struct fab_mr *r = calloc(1, sizeof *r);
    int rc = 0;
    if (!r)
        ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the region");
    else {
        fab_provider_enter(h);
        rc = fi_mr_reg(h->domain, (void *)(uintptr_t)addr, size, FI_SEND | FI_RECV, 0, h->next_mr_key++, 0, &r->mr,
                       NULL);
        fab_provider_leave(h);
        if (rc != 0)
            ret = FAB_FAIL(VAPI_EGEN, fn, "fi_mr_reg", rc);
    }
    if (ret == VAPI_OK) {
        r->hca = h;
        r->pd = pd;
        r->addr = addr;
        r->size = size;
        if ((r->lkey = table_add(h->mrs, r)) == 0)
            ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the region table");
    }
    if (ret == VAPI_OK && (ret = vh_link(fn, pd, VH_PD)) == VAPI_OK) {
        if ((*mr = vh_add(VH_MR, hca, r)) == 0) {
            vh_unlink(pd);
            ret = vapi_fail(VAPI_ENOMEM, fn, "no memory for the handle table");
        }
    }
    if (ret == VAPI_OK) {
        *lkey = r->lkey;
    } else if (r) {
        if (r->lkey)
            table_remove(h->mrs, r->lkey);
        if (r->mr)
            fi_close(&r->mr->fid);
        free(r);
    }
    vh_put(pd);
    vh_put(hca);
    return ret;
}

VAPI_ret_t VAPI_deregister_mr(VAPI_hca_hndl_t hca, VAPI_mr_hndl_t mr)
{
    static const char fn[] = "VAPI_deregister_mr";
    struct fab_mr *r;
    VAPI_ret_t ret = vh_take(fn, hca, mr, VH_MR, (void **)&r);
    if (ret != VAPI_OK)
        return ret;
    table_remove(r->hca->mrs, r->lkey);
    fab_provider_enter(r->hca);
    int rc = fi_close(&r->mr->fid);
    fab_provider_leave(r->hca);
    vh_unlink(r->pd);
    free(r);
    return rc == 0 ? VAPI_OK : FAB_FAIL(VAPI_EGEN, fn, "fi_close(mr)", rc);
}
