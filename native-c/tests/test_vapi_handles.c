/*
 * The handle table of both vapi.h libraries (vapi_common/vapi_handles.c), whose lookups take
 * no lock: a handle is found while live and of its kind and HCA, never after its destroy began, never once its slot
 * holds another object; a destroy waits for every lookup that pinned the handle; and lookups
 * racing with a destroy (reader threads, as a socket's reader polls while another thread
 * closes it) see the object or a clear error, never freed memory (ASan, TSan).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include "util_deck.h"
#include "../vapi_common/vapi_common.h"

#define READERS 3
#define ROUNDS  200
#define HOLD_LOOKS 2000

struct race {
    uint64_t hca, h;
    int *obj;
    _Atomic int go, found, refused;
};

/* Looks h up until refused, checking each time that the object is still the live one. */
static void *reader(void *arg)
{
    struct race *r = arg;
    while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE)) {}
    for (;;) {
        void *o;
        if (vh_get("reader", r->hca, r->h, VH_QP, &o) != VAPI_OK) {
            __atomic_fetch_add(&r->refused, 1, __ATOMIC_RELAXED);
            return NULL;
        }
        /* Held a while, as a call in progress holds it: the object stays until our put. */
        for (int i = 0; i < HOLD_LOOKS; i++)
            CHECK(o == r->obj && __atomic_load_n((int *)o, __ATOMIC_RELAXED) == 42);
        __atomic_fetch_add(&r->found, 1, __ATOMIC_RELAXED);
        vh_put(r->h);
        sched_yield();
    }
}

static void lookups_race_a_destroy(uint64_t hca)
{
    for (int round = 0; round < ROUNDS; round++) {
        struct race r = { .hca = hca };
        r.obj = malloc(sizeof *r.obj);
        CHECK(r.obj);
        *r.obj = 42;
        r.h = vh_add(VH_QP, hca, r.obj);
        CHECK(r.h != 0);
        pthread_t t[READERS];
        for (int i = 0; i < READERS; i++)
            CHECK(pthread_create(&t[i], NULL, reader, &r) == 0);
        __atomic_store_n(&r.go, 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&r.found, __ATOMIC_RELAXED) == 0)
            sched_yield();   /* the readers are at it */
        void *o;
        CHECK(vh_get("destroyer", hca, r.h, VH_QP, &o) == VAPI_OK && o == r.obj);
        CHECK(vh_retire("destroyer", r.h, VH_QP) == VAPI_OK);
        CHECK(vh_retire("destroyer", r.h, VH_QP) == VAPI_EINVAL_QP_HNDL);   /* once */
        vh_remove(r.h);          /* returns once every reader's pin is gone */
        __atomic_store_n(r.obj, 0, __ATOMIC_RELAXED);
        free(r.obj);
        for (int i = 0; i < READERS; i++)
            CHECK(pthread_join(t[i], NULL) == 0);
        CHECK(r.refused == READERS);
    }
}

int main(void)
{
    int hca_obj = 1, a = 1, b = 2;
    uint64_t hca = vh_add(VH_HCA, 0, &hca_obj);
    uint64_t other = vh_add(VH_HCA, 0, &hca_obj);
    CHECK(hca != 0 && other != 0 && hca != other);
    void *o;

    uint64_t qp = vh_add(VH_QP, hca, &a);
    CHECK(vh_get("t", hca, qp, VH_QP, &o) == VAPI_OK && o == &a);
    vh_put(qp);
    CHECK(vh_get("t", hca, qp, VH_CQ, &o) == VAPI_EINVAL_CQ_HNDL);      /* another kind */
    CHECK(vh_get("t", other, qp, VH_QP, &o) == VAPI_EINVAL_QP_HNDL);    /* another HCA */
    CHECK(vh_get("t", qp, qp, VH_QP, &o) == VAPI_EINVAL_HCA_HNDL);      /* not an HCA */
    CHECK(vh_get("t", hca, 0, VH_QP, &o) == VAPI_EINVAL_QP_HNDL);
    CHECK(vh_get("t", hca, (uint64_t)7 << 32 | 1000000, VH_QP, &o) == VAPI_EINVAL_QP_HNDL);
    CHECK(vh_get("t", hca, UINT64_MAX, VH_QP, &o) == VAPI_EINVAL_QP_HNDL);

    /* A child keeps its parent from being retired. */
    CHECK(vh_link("t", hca, VH_HCA) == VAPI_OK);
    CHECK(vh_get("t", hca, hca, VH_HCA, &o) == VAPI_OK);
    CHECK(vh_retire("t", hca, VH_HCA) == VAPI_EGEN);
    vh_put(hca);
    vh_unlink(hca);

    /* Destroyed, its slot reused: the old handle names nothing, the new one the new object. */
    CHECK(vh_get("t", hca, qp, VH_QP, &o) == VAPI_OK);
    CHECK(vh_retire("t", qp, VH_QP) == VAPI_OK);
    CHECK(vh_get("t", hca, qp, VH_QP, &o) == VAPI_EINVAL_QP_HNDL);      /* being destroyed */
    vh_remove(qp);
    uint64_t again = vh_add(VH_QP, hca, &b);
    CHECK((uint32_t)again == (uint32_t)qp && again != qp);
    CHECK(vh_get("t", hca, qp, VH_QP, &o) == VAPI_EINVAL_QP_HNDL);
    CHECK(vh_get("t", hca, again, VH_QP, &o) == VAPI_OK && o == &b);
    vh_put(again);

    /* More handles than a segment holds: all found, each its own. */
    enum { MANY = 700 };
    static uint64_t h[MANY];
    static int objs[MANY];
    for (int i = 0; i < MANY; i++)
        CHECK((h[i] = vh_add(VH_MR, hca, &objs[i])) != 0);
    for (int i = 0; i < MANY; i++) {
        CHECK(vh_get("t", hca, h[i], VH_MR, &o) == VAPI_OK && o == &objs[i]);
        vh_put(h[i]);
    }
    for (int i = 0; i < MANY; i++) {
        CHECK(vh_get("t", hca, h[i], VH_MR, &o) == VAPI_OK);
        CHECK(vh_retire("t", h[i], VH_MR) == VAPI_OK);
        vh_remove(h[i]);
    }

    lookups_race_a_destroy(hca);
    printf("test_vapi_handles: ok\n");
    return 0;
}
