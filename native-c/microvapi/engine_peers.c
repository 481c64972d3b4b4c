/* The peer processes of the engine (engine.h): their mailboxes, and whether they still answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* ---- peers ------------------------------------------------------------------------------- */

uint32_t mv_engine_peer_message_bytes(struct mv_peer *peer)
{
    unsigned long hint = 0;   /* a failed query leaves the least bound */
    deck_mbox_post_hint(&peer->mb, &hint);
    return mv_wire_bound(hint);
}

VAPI_ret_t mv_engine_peer(const char *fn, uint32_t id, struct mv_peer **out)
{
    pthread_mutex_lock(&eng.lock);
    struct mv_peer *p = eng.peers;
    while (p && p->id != id)
        p = p->next;
    if (p && p->gone && !deck_peer_gone((int)id)) {
        /* Given up for its silence (a stop, a long pause) but alive: a new connection may try
         * again, as TCP lets a new connection follow one that timed out. */
        p->gone = p->failed = 0;
    }
    if (p && !p->gone) {
        if (p->refs == 0) {   /* its silence, or a failed post, while it had no connection do not count */
            p->heard_ns = vapi_now_ns();
            p->ping_ns = 0;
            p->failed = 0;
        }
        p->refs++;
        pthread_mutex_unlock(&eng.lock);
        *out = p;
        return VAPI_OK;
    }
    pthread_mutex_unlock(&eng.lock);
    if (p)
        return vapi_fail(VAPI_EGEN, fn, "DECK process %u has gone away", id);
    /* Looked up at that process alone (never by asking every process: a stopped or dead one
     * must not delay connections between the others). Outside the lock: it may wait. */
    struct mv_peer *np = calloc(1, sizeof *np);
    if (!np)
        return vapi_fail(VAPI_ENOMEM, fn, "no memory for a peer");
    char name[DECK_MBOX_NAME_MAX];
    snprintf(name, sizeof name, "mv-%u", id);
    int rc = deck_mbox_clone_at(&np->mb, (int)id, name);
    if (rc != DECK_OK) {
        free(np);
        return vapi_fail(VAPI_EGEN, fn, "cloning the mailbox %s of DECK process %u failed: %s: %s",
                       name, id, deck_strerror(rc), deck_last_error());
    }
    np->id = id;
    np->refs = 1;
    np->heard_ns = vapi_now_ns();
    pthread_mutex_lock(&eng.lock);
    for (p = eng.peers; p && p->id != id; p = p->next)
        ;
    if (p) {   /* another thread added it meanwhile */
        p->refs++;
        deck_mbox_destroy(&np->mb);
        free(np);
        np = p;
    } else {
        np->next = eng.peers;
        eng.peers = np;
    }
    pthread_mutex_unlock(&eng.lock);
    *out = np;
    return VAPI_OK;
}

/* Peers stay in the list until the engine stops (one small entry per peer process). */
void mv_engine_peer_put(struct mv_peer *peer)
{
    pthread_mutex_lock(&eng.lock);
    peer->refs--;
    pthread_mutex_unlock(&eng.lock);
}

int mv_engine_post(struct mv_peer *peer, const struct iovec *iov, uint32_t cnt, uint32_t dest_qp, int quiet)
{
    int key = (int)mv_key_of(dest_qp);
    int rc = quiet ? deck_mbox_postv_quiet(&peer->mb, iov, (int)cnt, key)
                   : deck_mbox_postv_keyed(&peer->mb, iov, (int)cnt, key);
    if (rc == DECK_ETIMEDOUT || rc == DECK_EPEER || rc == DECK_EIO) {
        pthread_mutex_lock(&eng.lock);
        if (!peer->failed)
            snprintf(peer->why, sizeof peer->why, "%s", deck_last_error());
        peer->failed = 1;
        pthread_mutex_unlock(&eng.lock);
    }
    return rc;
}

int mv_engine_post_control(struct mv_peer *peer, uint32_t kind, uint32_t dest_qp, uint32_t src_qp,
                           uint32_t credit)
{
    struct mv_wire_head h = { .dest_qp = dest_qp, .src_qp = src_qp, .credit = credit, .kind = kind };
    struct iovec head = { .iov_base = &h, .iov_len = MV_WIRE_HEAD };
    return mv_engine_post(peer, &head, 1, dest_qp, 0);
}

/* Sets qp's peer under the engine lock, so that dispatch sees all of it or none. */
int mv_engine_connect_qp(struct mv_qp *qp, uint32_t dest_id, uint32_t dest_qp, struct mv_peer *peer)
{
    pthread_mutex_lock(&eng.lock);
    if (peer->gone) {   /* given up since mv_engine_peer: the liveness check would miss this QP */
        pthread_mutex_unlock(&eng.lock);
        return -1;
    }
    pthread_mutex_lock(&qp->sq.lock);
    qp->dest_id = dest_id;
    qp->dest_qp = dest_qp;
    __atomic_store_n(&qp->peer, peer, __ATOMIC_RELEASE);
    if (qp->early_set && qp->early_id == dest_id && qp->early_qp == dest_qp
        && (int32_t)(qp->early_edge - qp->send_edge) > 0)
        qp->send_edge = qp->early_edge;
    pthread_mutex_unlock(&qp->sq.lock);
    pthread_mutex_unlock(&eng.lock);
    return 0;
}

/* A message came from process src: it answers. A ping gets a pong. */
void mv_eng_heard(int src, int ping)
{
    pthread_mutex_lock(&eng.lock);
    struct mv_peer *p = eng.peers;
    while (p && p->id != (uint32_t)src)
        p = p->next;
    if (p)
        p->heard_ns = mv_coarse_ns();
    if (ping && src >= 0)
        mv_eng_schedule_control_locked(src, MV_WIRE_PONG, 0, 0);
    pthread_mutex_unlock(&eng.lock);
}

/* Whether peer p is to be given up now (engine lock held): dead, a post to it failed, or
 * silent for the peer timeout; pings it when silent for a quarter of that. */
static int give_up_locked(struct mv_peer *p, uint64_t now)
{
    if (p->failed)
        return 1;
    if (deck_peer_gone((int)p->id)) {
        snprintf(p->why, sizeof p->why, "has gone away");
        return 1;
    }
    uint64_t silent = now > p->heard_ns ? now - p->heard_ns : 0;   /* heard_ns may be coarse */
    if (silent > eng.timeout_ns) {
        snprintf(p->why, sizeof p->why, "has answered nothing for %llu ms (peer_timeout)",
                 (unsigned long long)(silent / 1000000));
        return 1;
    }
    /* A ping every quarter of the timeout while it is silent: one lost (a full control queue)
     * is followed by another. */
    if (silent > eng.timeout_ns / 4 && now - p->ping_ns > eng.timeout_ns / 4) {
        p->ping_ns = now;
        mv_eng_schedule_control_locked((int)p->id, MV_WIRE_PING, 0, 0);
    }
    return 0;
}

/* Fails the connected queue pairs of peers given up; the receive thread, no lock held. */
void mv_eng_check_peers(void)
{
    pthread_mutex_lock(&eng.lock);
    int found = 0;
    uint64_t now = vapi_now_ns();
    for (struct mv_peer *p = eng.peers; p; p = p->next) {
        if (!p->gone && p->refs > 0 && p->id != (uint32_t)deck_node() && give_up_locked(p, now)) {
            p->gone = 1;
            found = 1;
        }
    }
    for (uint32_t s = 0; found && s < eng.high; s++) {
        struct mv_qp *qp = eng.slots[s];
        if (!qp || !qp->peer || !qp->peer->gone)
            continue;
        char why[sizeof qp->peer->why];
        memcpy(why, qp->peer->why, sizeof why);
        qp->pins++;
        pthread_mutex_unlock(&eng.lock);
        mv_qp_fail(qp, VAPI_REM_ABORT_ERR, "the peer (DECK process %u) %s", qp->dest_id, why);
        pthread_mutex_lock(&eng.lock);
        if (--qp->pins == 0)
            pthread_cond_broadcast(&eng.unpinned);
    }
    /* A reader inside a retrieve for a failed queue pair must see its completion now. */
    if (found && eng.busy && !eng.busy_daemon)
        mv_eng_kick_locked();
    pthread_mutex_unlock(&eng.lock);
}


void mv_eng_peers_free(void)
{
    while (eng.peers) {
        struct mv_peer *p = eng.peers;
        eng.peers = p->next;
        deck_mbox_destroy(&p->mb);
        free(p);
    }
}
