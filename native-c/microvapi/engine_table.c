/* The queue pair table of the engine (engine.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine.h"

/* ---- the queue pair table ---------------------------------------------------------------- */

VAPI_ret_t mv_engine_add_qp(const char *fn, struct mv_qp *qp)
{
    uint32_t rnd;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (uint32_t)vapi_now_ns() * 2654435761u;
    pthread_mutex_lock(&eng.lock);
    uint32_t slot = eng.next_free;
    for (uint32_t tries = 0; tries < MV_QP_SLOTS && eng.slots[slot]; tries++)
        slot = (slot + 1) % MV_QP_SLOTS;
    if (eng.slots[slot]) {
        pthread_mutex_unlock(&eng.lock);
        return vapi_fail(VAPI_EAGAIN, fn, "this process has %u queue pairs, the most it can hold",
                       MV_QP_SLOTS);
    }
    qp->qp_num = slot | (rnd << MV_QP_SLOT_BITS);
    eng.slots[slot] = qp;
    eng.next_free = (slot + 1) % MV_QP_SLOTS;
    if (slot >= eng.high)
        eng.high = slot + 1;
    pthread_mutex_unlock(&eng.lock);
    return VAPI_OK;
}

/* Removes qp from the send list; engine lock held. */
void mv_eng_unschedule_locked(struct mv_qp *qp)
{
    if (!qp->send_scheduled)
        return;
    struct mv_qp **p = &eng.send_head, *prev = NULL;
    while (*p != qp) {
        prev = *p;
        p = &(*p)->send_next;
    }
    *p = qp->send_next;
    if (eng.send_tail == qp)
        eng.send_tail = prev;
    qp->send_scheduled = 0;
    qp->pins--;
}

void mv_engine_remove_qp(struct mv_qp *qp)
{
    pthread_mutex_lock(&eng.lock);
    uint32_t slot = qp->qp_num & (MV_QP_SLOTS - 1);
    if (eng.slots[slot] == qp)
        eng.slots[slot] = NULL;
    mv_eng_unschedule_locked(qp);
    while (qp->pins > 0)
        pthread_cond_wait(&eng.unpinned, &eng.lock);
    pthread_mutex_unlock(&eng.lock);
}

void mv_eng_unpin(struct mv_qp *qp)
{
    pthread_mutex_lock(&eng.lock);
    if (--qp->pins == 0)
        pthread_cond_broadcast(&eng.unpinned);
    pthread_mutex_unlock(&eng.lock);
}

/* The connected queue pair `dest_qp` whose peer is process `src` and its queue pair `src_qp`,
 * pinned; NULL if there is none. With `unconnected`, also a queue pair not connected yet (for
 * the window a peer announces when its connect comes first; kept until ours names that peer). */
struct mv_qp *mv_eng_pin_for(uint32_t dest_qp, int src, uint32_t src_qp, int unconnected, int *heard)
{
    pthread_mutex_lock(&eng.lock);
    struct mv_qp *qp = eng.slots[dest_qp & (MV_QP_SLOTS - 1)];
    if (!qp || qp->qp_num != dest_qp || src < 0
        || (qp->peer ? qp->dest_id != (uint32_t)src || qp->dest_qp != src_qp : !unconnected)) {
        qp = NULL;
    } else {
        qp->pins++;
        /* Its peer is src's (the check above): heard from, without mv_eng_heard's lock and walk. */
        if (qp->peer) {
            qp->peer->heard_ns = mv_coarse_ns();
            *heard = 1;
        }
    }
    pthread_mutex_unlock(&eng.lock);
    return qp;
}

