/* The engine's send thread (engine.h): queue pairs whose window opened, and control messages. */
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"

/* ---- the send thread's work -------------------------------------------------------------- */

void mv_engine_schedule_send(struct mv_qp *qp)
{
    pthread_mutex_lock(&eng.lock);
    uint32_t slot = qp->qp_num & (MV_QP_SLOTS - 1);
    if (!qp->send_scheduled && eng.slots[slot] == qp) {
        qp->send_scheduled = 1;
        qp->pins++;
        qp->send_next = NULL;
        if (eng.send_tail)
            eng.send_tail->send_next = qp;
        else
            eng.send_head = qp;
        eng.send_tail = qp;
        pthread_cond_signal(&eng.send_cv);
    }
    pthread_mutex_unlock(&eng.lock);
}

void mv_eng_schedule_control_locked(int id, uint32_t kind, uint32_t dest_qp, uint32_t src_qp)
{
    if (eng.ncontrols < MV_CONTROLS_MAX) {
        eng.controls[(eng.control_head + eng.ncontrols++) % MV_CONTROLS_MAX] =
            (struct mv_control){ id, kind, dest_qp, src_qp };
        pthread_cond_signal(&eng.send_cv);
    }
}

void mv_engine_schedule_control(int id, uint32_t kind, uint32_t dest_qp, uint32_t src_qp)
{
    pthread_mutex_lock(&eng.lock);
    mv_eng_schedule_control_locked(id, kind, dest_qp, src_qp);
    pthread_mutex_unlock(&eng.lock);
}

/* Sends a control message; only to a peer we already know (looking one up could wait on a
 * process that is not there). */
static void send_control(const struct mv_control *r)
{
    pthread_mutex_lock(&eng.lock);
    struct mv_peer *p = eng.peers;
    while (p && p->id != (uint32_t)r->id)
        p = p->next;
    if (p && !p->gone)
        p->refs++;
    else
        p = NULL;
    pthread_mutex_unlock(&eng.lock);
    if (p) {
        mv_engine_post_control(p, r->kind, r->dest_qp, r->src_qp, 0);   /* best effort */
        mv_engine_peer_put(p);
    }
}

void *mv_eng_send_thread(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "mv-send");
    pthread_mutex_lock(&eng.lock);
    for (;;) {
        while (!eng.stopping && !eng.send_head && eng.ncontrols == 0)
            pthread_cond_wait(&eng.send_cv, &eng.lock);
        if (eng.stopping)
            break;
        if (eng.ncontrols > 0) {
            struct mv_control r = eng.controls[eng.control_head];   /* first in, first out */
            eng.control_head = (eng.control_head + 1) % MV_CONTROLS_MAX;
            eng.ncontrols--;
            pthread_mutex_unlock(&eng.lock);
            send_control(&r);
            pthread_mutex_lock(&eng.lock);
            continue;
        }
        struct mv_qp *qp = eng.send_head;   /* pinned by the schedule */
        eng.send_head = qp->send_next;
        if (!eng.send_head)
            eng.send_tail = NULL;
        qp->send_scheduled = 0;
        pthread_mutex_unlock(&eng.lock);
        mv_send_queued(qp);
        pthread_mutex_lock(&eng.lock);
        if (--qp->pins == 0)
            pthread_cond_broadcast(&eng.unpinned);
    }
    pthread_mutex_unlock(&eng.lock);
    return NULL;
}

