/*
 * The sci transport's function table and the segments every process makes at deck_init: its
 * control segment (barrier, hello words, its own mailbox names, flow control) and its message
 * segment. deck_init waits for nobody: a peer's control segment is mapped when first needed
 * (sci_ctl_attach), so processes of a run may start in any order and at any time. Static runs
 * on one host (POSIX shared memory); dynamic processes (sci_dynamic.c) are reached through the
 * auto transport, which picks sci for the peers on its host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "sci.h"

sci_state_t sci;

/* ---- configuration ---- */

static int read_config(sci_config_t *c)
{
    long long limit, medbuf, mseg, spin;
    int rc;
    if ((rc = deck_env_range("DECK_MSG_BUF_LIMIT", 8192, SCI_P1_MAX, 1LL << 30, &limit)) ||
        (rc = deck_env_range("DECK_MEDBUF_SIZE", 24768, 128, 1LL << 31, &medbuf)) ||
        (rc = deck_env_range("DECK_MSEG_SIZE", 64LL << 20, 1LL << 16, 1LL << 40, &mseg)) ||
        (rc = deck_spin_us(&spin)))
        return rc;
    /* The largest protocol-2 message, header included, must fit the buffer. */
    if ((size_t)medbuf < deck_seg_roundup((size_t)limit) + DECK_SEG_LINE)
        return deck_fail(DECK_ECONFIG, "deck_init: DECK_MEDBUF_SIZE=%lld must be at least DECK_MSG_BUF_LIMIT "
                         "rounded up to 64 plus 64 (%zu)", medbuf, deck_seg_roundup((size_t)limit) + DECK_SEG_LINE);
    c->buf_limit = (size_t)limit;
    c->medbuf = (size_t)medbuf;
    c->mseg = (size_t)mseg;
    c->spin_us = (long)spin;
    c->connect_ms = deck_env_int("DECK_CLONE_TIMEOUT_MS", 10000);
    return DECK_OK;
}

/* ---- life cycle ---- */

void sci_release_all(void)
{
    sci_in_done();
    sci_out_done();
    for (int i = 0; sci.ctl_ready && i < sci.n; i++)
        if (i != sci.self && sci.ctl_ready[i]) deck_seg_disconnect(&sci.peer_ctl[i]);
    for (int i = 0; sci.peer_mseg && i < sci.n; i++)
        if (i != sci.self) deck_seg_disconnect(&sci.peer_mseg[i]);
    for (int i = 0; i < sci.nretired; i++) deck_seg_disconnect(&sci.retired[i]);
    free(sci.retired);
    free(sci.peer_ctl);
    free(sci.ctl_ready);
    free(sci.peer_nonce);
    free(sci.peer_mseg);
    free(sci.dead);
    deck_seg_remove(&sci.mseg);
    deck_seg_remove(&sci.ctl);
    deck_seg_remove(&sci.claim);             /* last: the node number is free once all is gone */
    deck_seg_close();
    if (sci.n) {
        pthread_cond_destroy(&sci.idle);
        pthread_mutex_destroy(&sci.lock);
    }
    memset(&sci, 0, sizeof sci);
}

int sci_start_tables(int self, int n)
{
    int rc = read_config(&sci.cfg);
    if (rc) return rc;
    if (getrandom(&sci.nonce, sizeof sci.nonce, 0) != (ssize_t)sizeof sci.nonce)
        return deck_fail_errno(DECK_EIO, errno, "deck_init: getrandom");
    sci.nonce |= 1;                                         /* nonzero: 0 marks an unbound area */
    sci.self = self;
    sci.n = n;
    sci.next_seg_id = SCI_SEG_MBOX0;
    pthread_mutex_init(&sci.lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&sci.idle, &attr);
    pthread_condattr_destroy(&attr);
    sci.peer_ctl = calloc((size_t)n, sizeof *sci.peer_ctl);
    sci.ctl_ready = calloc((size_t)n, sizeof *sci.ctl_ready);
    sci.peer_nonce = calloc((size_t)n, sizeof *sci.peer_nonce);
    sci.peer_mseg = calloc((size_t)n, sizeof *sci.peer_mseg);
    sci.dead = calloc((size_t)n, sizeof *sci.dead);
    if (!sci.peer_ctl || !sci.ctl_ready || !sci.peer_nonce || !sci.peer_mseg || !sci.dead)
        return deck_fail(DECK_ENOMEM, "deck_init: out of memory");
    if ((rc = deck_seg_export(&sci.mseg, SCI_SEG_MSEG, sci.cfg.mseg))) return rc;
    sci_mseg_init();
    return DECK_OK;
}

int sci_publish_ctl(int deck_id)
{
    sci.peer_ctl[sci.self] = sci.ctl;                       /* an alias: never unmapped twice */
    sci.ctl_ready[sci.self] = 1;
    sci.peer_nonce[sci.self] = sci.nonce;
    sci_ident_t *id = sci_ctl_ident(sci.self);
    id->nonce = sci.nonce;
    id->deck_id = deck_id;
    snprintf(id->token, sizeof id->token, "%s", sci.token);
    return deck_seg_set_available(&sci.ctl);
}

int sci_peer_token(int node, char *token, size_t len)
{
    char copy[DECK_SEG_TOKEN_MAX];
    memcpy(copy, sci_ctl_ident(node)->token, sizeof copy);
    copy[sizeof copy - 1] = '\0';
    if (!deck_seg_token_valid(copy) || strlen(copy) >= len)
        return deck_fail(DECK_EPROTO, "deck: the control segment of node %d holds no valid segment token", node);
    strcpy(token, copy);
    return DECK_OK;
}

static int sci_init_static(int self, int nnodes, const deck_node_addr_t *nodes)
{
    memset(&sci, 0, sizeof sci);
    int rc;
    if (nnodes > SCI_MAX_NODES)
        return deck_fail(DECK_ECONFIG, "deck_init: the sci transport runs at most %d processes, not %d", SCI_MAX_NODES, nnodes);
    if ((rc = deck_seg_run_token(sci.token, sizeof sci.token)) || (rc = deck_seg_open(self, sci.token))) return rc;
    rc = sci_start_tables(self, nnodes);
    /* The control segment last: once peers can map it, everything it leads to exists. */
    if (!rc && !(rc = deck_seg_create(&sci.ctl, SCI_SEG_CTL, sci_ctl_size())) &&
        !(rc = deck_seg_prepare(&sci.ctl)) && !(rc = deck_seg_map_local(&sci.ctl)))
        rc = sci_publish_ctl(self);
    if (rc) sci_release_all();
    return rc;
}

static void sci_done(void) { sci_release_all(); }

static void mark_dead(int node) { __atomic_store_n(&sci.dead[node], 1, __ATOMIC_RELAXED); }

int sci_ctl_attach(int node, int timeout_ms)
{
    if (__atomic_load_n(&sci.ctl_ready[node], __ATOMIC_ACQUIRE)) return DECK_OK;
    if (sci_node_known_dead(node)) return deck_fail(DECK_EPEER, "deck: node %d has gone away", node);
    deck_seg_t s;
    char token[DECK_SEG_TOKEN_MAX];
    int rc = DECK_OK;
    if (!sci.dynamic) strcpy(token, sci.token);   /* the run's: every node names its segments alike */
    else if ((rc = deck_seg_claim_token(node, token, sizeof token)) == DECK_ENOTFOUND && timeout_ms > 0) {
        struct timespec deadline;                 /* not claimed yet: it is still starting */
        deck_deadline(&deadline, timeout_ms);
        while ((rc = deck_seg_claim_token(node, token, sizeof token)) == DECK_ENOTFOUND && !deck_deadline_passed(&deadline)) {
            struct timespec pause = { 0, 2 * 1000000L };
            nanosleep(&pause, NULL);
        }
    }
    if (!rc) rc = deck_seg_attach(&s, token, node, SCI_SEG_CTL, timeout_ms);
    if (rc == DECK_EPEER) mark_dead(node);
    if (rc) return rc;
    if (s.size != deck_seg_roundup(sci_ctl_size())) {
        deck_seg_disconnect(&s);
        return deck_fail(DECK_ECONFIG, "deck: the control segment of node %d has %zu bytes, not %zu: it runs with "
                         "another number of nodes", node, s.size, deck_seg_roundup(sci_ctl_size()));
    }
    if (strncmp(((sci_ident_t *)((char *)s.addr + DECK_SEG_LINE))->token, token, DECK_SEG_TOKEN_MAX) != 0) {
        char name[DECK_SEG_NAME_MAX];
        snprintf(name, sizeof name, "%s", s.name);
        deck_seg_disconnect(&s);
        return deck_fail(DECK_EPROTO, "deck: shared segment %s does not carry the token it is named with", name);
    }
    /* Mapped outside the lock (the wait may be long); the first thread to finish installs it. */
    pthread_mutex_lock(&sci.lock);
    if (!sci.ctl_ready[node]) {
        sci.peer_ctl[node] = s;
        __atomic_store_n(&sci.peer_nonce[node], sci_ctl_ident(node)->nonce, __ATOMIC_RELEASE);
        /* Hello before anything this process reads there (see sci_mbox_destroyed's notice). */
        __atomic_store_n(sci_ctl_hello(node, sci.self), 1, __ATOMIC_SEQ_CST);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        __atomic_store_n(&sci.ctl_ready[node], 1, __ATOMIC_RELEASE);
    } else {
        deck_seg_disconnect(&s);
    }
    pthread_mutex_unlock(&sci.lock);
    return DECK_OK;
}

/* Keeps a replaced process's mapping until deck_done: another thread may still be using it. */
static int retire(deck_seg_t *s)
{
    if (!s->base) return DECK_OK;
    if (sci.nretired == sci.cap_retired) {
        int cap = sci.cap_retired ? 2 * sci.cap_retired : 8;
        deck_seg_t *r = realloc(sci.retired, (size_t)cap * sizeof *r);
        if (!r) return deck_fail(DECK_ENOMEM, "deck: out of memory");
        sci.retired = r;
        sci.cap_retired = cap;
    }
    sci.retired[sci.nretired++] = *s;
    return DECK_OK;
}

int sci_peer_renew(int node, uint64_t nonce)
{
    if (node < 0 || node >= sci.n || node == sci.self)
        return deck_fail(DECK_EINVAL, "deck: node %d is not another process here", node);
    int rc = DECK_OK;
    pthread_mutex_lock(&sci.lock);
    if (__atomic_load_n(&sci.ctl_ready[node], __ATOMIC_ACQUIRE) && sci.peer_nonce[node] != nonce) {
        /* The mappings stay valid for threads that still use them; attach installs new ones. */
        if (!(rc = retire(&sci.peer_ctl[node])) && !(rc = retire(&sci.peer_mseg[node]))) {
            memset(&sci.peer_mseg[node], 0, sizeof sci.peer_mseg[node]);
            __atomic_store_n(&sci.peer_nonce[node], 0, __ATOMIC_RELEASE);   /* senders rebind */
            __atomic_store_n(&sci.ctl_ready[node], 0, __ATOMIC_RELEASE);
            __atomic_store_n(&sci.dead[node], 0, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&sci.lock);
    if (rc || (rc = sci_ctl_attach(node, 0))) return rc;
    return sci.peer_nonce[node] == nonce ? DECK_OK
         : deck_fail(DECK_ENOTFOUND, "deck: node %d here is another process than the one expected", node);
}

int sci_node_alive(int node)
{
    if (node == sci.self) return 1;
    if (node < 0 || node >= sci.n || sci_node_known_dead(node)) return 0;
    if (!__atomic_load_n(&sci.ctl_ready[node], __ATOMIC_ACQUIRE)) return sci_ctl_attach(node, 0) != DECK_EPEER;
    if (deck_seg_owner_alive(&sci.peer_ctl[node])) return 1;
    mark_dead(node);
    return 0;
}

int sci_node_known_dead(int node) { return __atomic_load_n(&sci.dead[node], __ATOMIC_RELAXED); }

static int sci_peer_gone(int node) { return node >= 0 && node < sci.n && !sci_node_alive(node); }
static int sci_peer_count(void)    { return sci.n - 1; }

static int sci_peer_at(int i, int *id)
{
    if (i < 0 || i >= sci.n - 1) return DECK_ENOTFOUND;
    *id = i < sci.self ? i : i + 1;
    return DECK_OK;
}

int sci_mseg_attach(int node, deck_seg_t *seg)
{
    if (node == sci.self) { *seg = sci.mseg; return DECK_OK; }
    int rc = DECK_OK;
    pthread_mutex_lock(&sci.lock);
    char token[DECK_SEG_TOKEN_MAX];
    if (!sci.peer_mseg[node].base && !(rc = sci_peer_token(node, token, sizeof token)))
        rc = deck_seg_attach(&sci.peer_mseg[node], token, node, SCI_SEG_MSEG, sci.cfg.connect_ms);
    *seg = sci.peer_mseg[node];     /* a copy: sci_peer_renew may replace the slot meanwhile */
    pthread_mutex_unlock(&sci.lock);
    return rc;
}

/* ---- names ---- */

int sci_name_read(int owner, int slot, sci_name_t *out)
{
    sci_name_t *e = sci_name_at(owner, slot);
    for (;;) {
        /* seq_cst: a sender's check against a concurrent destroy (sci_mbox_destroyed). */
        int32_t before = __atomic_load_n(&e->index, __ATOMIC_SEQ_CST);
        if (!before) return 0;
        memcpy(out, e, sizeof *out);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&e->index, __ATOMIC_RELAXED) == before) {
            out->index = before;
            out->name[DECK_MBOX_NAME_MAX - 1] = '\0';
            return 1;
        }
    }
}

/* One look: a peer that has not started yet owns nothing; clone asks again until its timeout.
 * A control segment refused (DECK_EPROTO: not this user's, or not the token's) is said so. */
static int sci_lookup(int node, const char *name, int *index)
{
    int rc = sci_ctl_attach(node, 0);
    if (rc == DECK_EPROTO) return rc;
    if (rc) return DECK_ENOTFOUND;
    sci_name_t e;
    for (int slot = 0; slot < SCI_MAX_MBOX; slot++)
        if (sci_name_read(node, slot, &e) && strcmp(e.name, name) == 0) { *index = e.index; return DECK_OK; }
    return DECK_ENOTFOUND;
}

/* ---- barrier: everybody reports to node 0's control segment, node 0 releases each one ---- */

static int wait_word(uint32_t *word, uint32_t want, int peer)
{
    sci_waiter_t w;
    sci_wait_start(&w, sci_ctl_bell(sci.self), -1);
    int rc = DECK_OK;
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != want && !(rc = sci_wait_next(&w, peer))) {}
    sci_wait_end(&w);
    return rc == DECK_EPEER ? deck_fail(DECK_EPEER, "deck_barrier: node %d has gone away", peer) : rc;
}

/* Node 0 may start after us: wait for its control segment as long as a barrier waits. */
static int attach_node0(void)
{
    int rc;
    while ((rc = sci_ctl_attach(0, SCI_CHECK_MS)) == DECK_ENOTFOUND) {}
    return rc == DECK_EPEER ? deck_fail(DECK_EPEER, "deck_barrier: node 0 has gone away") : rc;
}

static int sci_barrier(void)
{
    uint32_t epoch = ++sci.barrier_epoch;
    int rc = sci.self == 0 ? DECK_OK : attach_node0();
    if (rc) return rc;
    __atomic_store_n(sci_ctl_arrive(0, sci.self), epoch, __ATOMIC_RELEASE);
    deck_bell_ring(sci_ctl_bell(0));
    if (sci.self != 0) return wait_word(sci_ctl_release(sci.self), epoch, 0);
    for (int i = 1; i < sci.n; i++)
        if ((rc = wait_word(sci_ctl_arrive(0, i), epoch, i))) return rc;
    for (int i = 1; i < sci.n; i++) {
        /* It arrived, so its control segment is there unless it died since. */
        if (sci_ctl_attach(i, 0)) return deck_fail(DECK_EPEER, "deck_barrier: node %d has gone away", i);
        __atomic_store_n(sci_ctl_release(i), epoch, __ATOMIC_RELEASE);
        deck_bell_ring(sci_ctl_bell(i));
    }
    return DECK_OK;
}

/* Dynamic processes are introduced by the auto transport (auto_transport.c), not here. */
static int sci_no_peers(int id, const char *host, const char *contact, const uint8_t *key)
{
    return deck_fail(DECK_ESTATE, "deck_add_peer: the sci transport is reached through DECK_TRANSPORT=auto");
}

/* Messages up to the protocol-2 bound go through the sender's buffer, in one copy. */
unsigned long sci_post_hint(int node)
{
    (void)node;
    return sci.cfg.buf_limit;
}

const deck_transport_t deck_sci_transport = {
    .name = "sci",
    .post_hint = sci_post_hint,
    .init_static = sci_init_static,
    .init_dynamic = sci_init_dynamic,
    .done = sci_done,
    .lookup = sci_lookup,
    .barrier = sci_barrier,
    .contact = sci_dyn_contact,
    .add_peer = sci_no_peers,
    .peer_count = sci_peer_count,
    .peer_at = sci_peer_at,
    .peer_gone = sci_peer_gone,
    .mbox_created = sci_mbox_created,
    .mbox_destroyed = sci_mbox_destroyed,
    .retrv = sci_retrv,
    .retrv_apply = sci_retrv_apply,
    .msg_alloc = sci_msg_alloc,
    .msg_free = sci_msg_free,
    .delivered = sci_mbox_ring_index,
    .postv_keyed = sci_postv_keyed,
    .mbox_bell_read = sci_mbox_bell_read,
    .mbox_key_wait = sci_mbox_key_wait,
    .mbox_key_ring = sci_mbox_key_ring,
    .mbox_key_poller = sci_mbox_key_poller,
};
