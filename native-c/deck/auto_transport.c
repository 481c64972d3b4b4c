/*
 * DECK_TRANSPORT=auto, the transport of dynamic runs when nothing else is asked for: a peer on
 * this host is reached through sci (shared segments), any other over tcp. Both run side by
 * side: tcp always (it listens, and carries the other hosts), sci when its segments could be
 * set up (otherwise every peer is tcp, and deck_peer_describe says why).
 *
 * A process that connects tells its peer "shm=<boot id>.<node>.<nonce>" when sci is up, else
 * "tcp" (deck_contact); the peer answers with its own "shm=..." when it will reach the process
 * through sci, else with "port=N" of a tcp listener it opens for it (deck_contact_for), so a
 * process whose peers all share its host listens on nothing. A peer is sci when its boot id is
 * this host's and its control segment maps here carrying that nonce (same user, same /dev/shm,
 * and its process visible in our /proc: a container with its own namespaces fails that and
 * stays tcp). Each peer's route is fixed when it is added.
 *
 * Receiving always goes through sci's retrieve when sci is up: it scans the mailbox's shared
 * areas and the local queue, where tcp's readers put what other hosts send and then ring the
 * mailbox's doorbell (the `delivered` hook).
 *
 * While no peer is reached through sci (every peer on another host, as between the machines of
 * a cluster), nothing can come through shared memory, and waiting as sci does cost a tcp
 * message three wake-ups: tcp's reader thread, the plain waiter its doorbell ring woke (the
 * receive thread of MicroVAPI), the thread the message was for. So then a keyed waiter reads
 * the tcp connections itself, as tcp's retrievers do (tcp_wait.c, "the role"), and a poll is a
 * look (polling shared memory nobody writes only burns the CPU):
 *
 *   keyed waiter (key >= 0), no sci peer       the threads of this process
 *   ------------------------------------       ---------------------------
 *   counts itself in `readers`, reads the      a ring of the mailbox (a key, a delivery by
 *   bell (no ring since `seen`: waits in       another thread) signals tcp's wake_fd when a
 *   tcp_read_waiting; role taken: sleeps on    reader counts; its own deliveries to the
 *   the doorbell as before)                    mailbox it waits for ring nothing: it looks next
 *
 * The first peer added through sci ends such waits (wake_fd), and from then on waits are sci's.
 * Plain waiters (DECK_KEY_ANY: the receive thread) keep the doorbell: they take what nobody
 * waits for, which tcp's reader threads deliver once no waiter reads. What a reading waiter
 * delivers for others it hands on when it looks (MicroVAPI drains after every wait); one that
 * leaves without looking (its deadline came, its socket closed) leaves it to the waits that
 * end by themselves: MicroVAPI's readers look again within 100 ms, its receive thread within
 * 200 ms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sci.h"
#include "tcp.h"

#define ROUTES 8192                /* open addressing, a power of two above 2 x DECK_MAX_NODES */

enum why { VIA_SCI = 1, OTHER_HOST, PEER_NO_SHM, SCI_DOWN, UNMAPPABLE };

typedef struct route {
    int      id;                   /* written last (release): 0 = free; dynamic ids are > 65535 */
    int      why;
    int      node;                 /* sci node number, VIA_SCI only */
    uint64_t nonce;                /* the process that node number stood for when added */
    char    *detail;               /* UNMAPPABLE: the failure text */
} route_t;

static struct {
    int             sci_up;
    char            sci_down[256];
    pthread_mutex_t lock;          /* adding routes; readers look without it */
    route_t         routes[ROUTES];
    int             order[DECK_MAX_NODES];   /* ids in the order added, for peer_at */
    int             count;
    int             sci_peers;     /* routes VIA_SCI added: while 0, keyed waiters read tcp */
    int             readers;       /* keyed waiters counted in wait_reading */
} au = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The mailbox this thread reads the tcp connections for (wait_reading), else -1: what it
 * delivers to that mailbox needs no ring, since it looks at the mailbox when it returns. */
static _Thread_local int reading_index = -1;

/* Where the probe for `id` starts (Knuth's multiplicative hash). */
static unsigned home(int id) { return ((unsigned)id * 2654435761u) & (ROUTES - 1); }

static route_t *find(int id)
{
    for (unsigned h = home(id);; h = (h + 1) & (ROUTES - 1)) {
        int at = __atomic_load_n(&au.routes[h].id, __ATOMIC_ACQUIRE);
        if (at == id) return &au.routes[h];
        if (at == 0) return NULL;
    }
}

/* A sci route stands until its node number is taken by another process (sci_peer_renew). */
static int sci_route_valid(const route_t *r)
{
    return __atomic_load_n(&sci.peer_nonce[r->node], __ATOMIC_ACQUIRE) == r->nonce;
}

/* sci.sender_of: a watched mailbox admits the shared-memory area of its peer's node alone. */
static int sci_sender(int deck_id, int *node, uint64_t *nonce)
{
    route_t *r = find(deck_id);
    if (!r || r->why != VIA_SCI) return 0;
    *node = r->node;
    *nonce = r->nonce;
    return 1;
}

/* sci.deck_id_of: once per sender binding, so a walk of the table is cheap enough. */
static int sci_deck_id(int node, uint64_t nonce)
{
    for (int h = 0; h < ROUTES; h++) {
        const route_t *r = &au.routes[h];
        int id = __atomic_load_n(&r->id, __ATOMIC_ACQUIRE);
        if (id != 0 && r->why == VIA_SCI && r->node == node && r->nonce == nonce) return id;
    }
    return -1;
}

static int auto_init_dynamic(int self)
{
    int rc = deck_tcp_transport.init_dynamic(self);
    if (rc) return rc;
    au.sci_up = sci_init_dynamic(self) == DECK_OK;
    if (au.sci_up) { sci.sender_of = sci_sender; sci.deck_id_of = sci_deck_id; }
    if (!au.sci_up) snprintf(au.sci_down, sizeof au.sci_down, "%s", deck_last_error());
    return DECK_OK;
}

static int auto_init_static(int self, int nnodes, const deck_node_addr_t *nodes)
{
    return deck_fail(DECK_ESTATE, "deck_init: the auto transport serves dynamic runs only");
}

static void auto_done(void)
{
    deck_tcp_transport.done();     /* first: its readers deliver into sci's mailboxes */
    if (au.sci_up) sci_release_all();
    for (int h = 0; h < ROUTES; h++) free(au.routes[h].detail);
    memset(au.routes, 0, sizeof au.routes);
    au.count = 0;
    au.sci_up = 0;
    au.sci_peers = 0;
}

/* Nothing can come through shared memory: no peer was added through sci. */
static int tcp_only(void) { return __atomic_load_n(&au.sci_peers, __ATOMIC_SEQ_CST) == 0; }

/* A ring of the mailbox (a key, a delivery) reaches a keyed waiter that reads tcp meanwhile
 * through tcp's wake_fd. Paired with wait_reading: it counts itself, then reads the bell; a
 * ring bumps the bell, then reads the count (both seq_cst), so one of them sees the other. */
static void wake_readers(void)
{
    if (__atomic_load_n(&au.readers, __ATOMIC_SEQ_CST) > 0) tcp_wake_reading();
}

static int auto_postv_keyed(int node, int index, const struct iovec *iov, int cnt, size_t len, int key)
{
    if (node == deck_core_self()) return deck_core_post_self(index, iov, cnt, len);
    route_t *r = find(node);
    if (!r || r->why != VIA_SCI) return deck_tcp_transport.postv_keyed(node, index, iov, cnt, len, key);
    if (!sci_route_valid(r)) return deck_fail(DECK_EPEER, "deck_mbox_post: node %d has gone away", node);
    return sci_postv_keyed(r->node, index, iov, cnt, len, key);
}

static int auto_lookup(int node, const char *name, int *index)
{
    route_t *r = find(node);
    if (!r || r->why != VIA_SCI) return deck_tcp_transport.lookup(node, name, index);
    return sci_route_valid(r) ? deck_sci_transport.lookup(r->node, name, index) : DECK_ENOTFOUND;
}

static unsigned long auto_post_hint(int node)
{
    route_t *r = find(node);
    return r && r->why == VIA_SCI ? sci_post_hint(r->node) : tcp_post_hint(node);
}

static int auto_barrier(void)
{
    return deck_fail(DECK_ESTATE, "deck_barrier: only a static run has a barrier");
}

static int auto_contact(char *buf, size_t len)
{
    if (!au.sci_up) return deck_tcp_transport.contact(buf, len);
    int n = snprintf(buf, len, "shm="), rc;
    if (n < 0 || (size_t)n >= len || (rc = sci_dyn_contact(buf + n, len - (size_t)n)))
        return deck_fail(DECK_EINVAL, "deck_contact: buffer of %zu bytes too small", len);
    return DECK_OK;
}

/* The value of part `key` ("shm=") of a contact "part,part,...", or NULL. */
static const char *contact_part(const char *contact, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = contact; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, key, n) == 0) return p + n;
    return NULL;
}

/* "<boot id>.<node>.<nonce hex>" of a contact's shm part (up to a ',' or the end); 0 when it
 * is not that. */
static int parse_shm(const char *shm, char *boot, size_t boot_len, int *node, uint64_t *nonce)
{
    const char *dot = strchr(shm, '.');
    if (!dot || (size_t)(dot - shm) >= boot_len) return 0;
    memcpy(boot, shm, (size_t)(dot - shm));
    boot[dot - shm] = '\0';
    char *end;
    long n = strtol(dot + 1, &end, 10);
    if (end == dot + 1 || *end != '.' || n < 0 || n >= SCI_DYN_NODES) return 0;
    const char *hex = end + 1;
    unsigned long long x = strtoull(hex, &end, 16);
    if (end == hex || (*end && *end != ',') || x == 0) return 0;
    *node = (int)n;
    *nonce = x;
    return 1;
}

/* Which way to reach a peer whose contact has this shm part (NULL: none). */
static int choose(const char *shm, route_t *r)
{
    if (!au.sci_up) return SCI_DOWN;
    if (!shm) return PEER_NO_SHM;
    char boot[64];
    if (!parse_shm(shm, boot, sizeof boot, &r->node, &r->nonce))
        return deck_fail(DECK_EINVAL, "deck_add_peer: contact part 'shm=%s' is not <boot id>.<node>.<nonce>", shm);
    if (strcmp(boot, sci_boot_id()) != 0) return OTHER_HOST;
    if (sci_peer_renew(r->node, r->nonce) != DECK_OK) {
        r->detail = strdup(deck_last_error());
        return UNMAPPABLE;
    }
    return VIA_SCI;
}

static int auto_contact_for(const char *peer_contact, const char *local_addr, char *buf, size_t len)
{
    route_t r = { 0 };
    int why = choose(contact_part(peer_contact, "shm="), &r);
    free(r.detail);
    if (why < 0) return why;
    return why == VIA_SCI ? auto_contact(buf, len) : deck_tcp_transport.contact_for(peer_contact, local_addr, buf, len);
}

static int auto_add_peer(int id, const char *host, const char *contact, const uint8_t *key)
{
    const char *shm = contact_part(contact, "shm=");
    pthread_mutex_lock(&au.lock);
    /* tcp knows every peer, so the contact is checked the same way for all and a peer added
     * again at another address is refused the same way. */
    int rc = tcp_introduce(id, host, contact, key);
    if (rc || find(id)) goto out;
    if (au.count == DECK_MAX_NODES) {
        rc = deck_fail(DECK_ENOMEM, "deck_add_peer: more than %d peers", DECK_MAX_NODES);
        goto out;
    }
    route_t r = { 0 };
    if ((r.why = choose(shm, &r)) < 0) {
        rc = r.why;
        goto out;
    }
    /* A peer reached over tcp may need the port its bootstrap was told; one on this host never. */
    if (r.why != VIA_SCI && (rc = tcp_listen_start())) {
        free(r.detail);
        goto out;
    }
    unsigned h = home(id);
    while (au.routes[h].id) h = (h + 1) & (ROUTES - 1);
    route_t *slot = &au.routes[h];
    slot->why = r.why;
    slot->node = r.node;
    slot->nonce = r.nonce;
    slot->detail = r.detail;
    __atomic_store_n(&slot->id, id, __ATOMIC_RELEASE);
    au.order[au.count] = id;
    __atomic_store_n(&au.count, au.count + 1, __ATOMIC_RELEASE);
    if (r.why == VIA_SCI && __atomic_fetch_add(&au.sci_peers, 1, __ATOMIC_SEQ_CST) == 0)
        tcp_wake_reading();        /* a waiter reading tcp must watch shared memory from now on */
out:
    pthread_mutex_unlock(&au.lock);
    return rc;
}

static int auto_peer_count(void) { return __atomic_load_n(&au.count, __ATOMIC_ACQUIRE); }

static int auto_peer_at(int i, int *id)
{
    if (i < 0 || i >= auto_peer_count()) return DECK_ENOTFOUND;
    *id = au.order[i];
    return DECK_OK;
}

static int auto_peer_gone(int node)
{
    route_t *r = find(node);
    if (!r || r->why != VIA_SCI) return deck_tcp_transport.peer_gone(node);
    return !sci_route_valid(r) || !sci_node_alive(r->node);
}

static int auto_describe_peer(int id, char *buf, size_t len)
{
    if (id == deck_core_self()) {
        snprintf(buf, len, "this process");
        return DECK_OK;
    }
    route_t *r = find(id);
    if (!r) return deck_fail(DECK_ENOTFOUND, "deck_peer_describe: %d is not a peer of this process", id);
    switch (r->why) {
    case VIA_SCI:     snprintf(buf, len, "sci (same host: shared memory, node %d)", r->node); break;
    case OTHER_HOST:  snprintf(buf, len, "tcp (another host)"); break;
    case PEER_NO_SHM: snprintf(buf, len, "tcp (the peer offers no shared memory)"); break;
    case SCI_DOWN:    snprintf(buf, len, "tcp (no shared memory here: %s)", au.sci_down); break;
    default:          snprintf(buf, len, "tcp (same host, but its shared memory cannot be used: %s)", r->detail ? r->detail : "?");
    }
    return DECK_OK;
}

/* ---- receiving: sci's when it is up, the local queue alone otherwise ---- */

static int auto_mbox_created(int index, const char *name) { return au.sci_up ? sci_mbox_created(index, name) : DECK_OK; }

static void auto_mbox_destroyed(int index)
{
    if (!au.sci_up) return;
    sci_mbox_destroyed(index);
    wake_readers();
}

static void auto_delivered(int index)
{
    if (!au.sci_up || index == reading_index) return;
    sci_mbox_ring_index(index);
    wake_readers();
}
static void *auto_msg_alloc(size_t size) { return au.sci_up ? sci_msg_alloc(size) : NULL; }
static int auto_msg_free(void *buf) { return au.sci_up && sci_msg_free(buf); }

/* DECK_POLL polls shared memory for sci's window; with no sci peer a look is all it can see. */
static int poll_bound(int timeout_ms) { return timeout_ms == DECK_POLL && tcp_only() ? 0 : timeout_ms; }

static int auto_retrv(int index, void *entry, deck_msg_t *msg, int timeout_ms)
{
    if (au.sci_up) return sci_retrv(index, entry, msg, poll_bound(timeout_ms));
    return deck_entry_take(entry, msg, timeout_ms);
}

static int auto_retrv_apply(int index, void *entry, deck_msg_t *scratch, int timeout_ms, deck_msg_fn fn, void *arg)
{
    if (au.sci_up) return sci_retrv_apply(index, entry, scratch, poll_bound(timeout_ms), fn, arg);
    return deck_entry_take_apply(entry, scratch, timeout_ms, fn, arg);
}

/* Without shared memory the core's queue wait serves retrieves (above), reading tcp as tcp's do. */
static int auto_read_waiting(const struct timespec *deadline)
{
    return au.sci_up ? 0 : tcp_read_waiting(deadline);
}

/* Keyed waits need the mailbox's doorbell: only while sci is up (tcp's deliveries ring it too). */
static int no_doorbell(const char *fn)
{
    return deck_fail(DECK_ESTATE, "%s: no shared memory here, so no doorbell", fn);
}

static int auto_bell_read(int index, uint32_t *value)
{
    return au.sci_up ? sci_mbox_bell_read(index, value) : no_doorbell("deck_mbox_key_seen");
}

/* A keyed wait with no sci peer (see the top): 1 when it is over (the bell moved, or it read
 * tcp for one wait), 0 when it must sleep on the doorbell (another thread reads tcp now, or
 * nothing is there to read). */
static int wait_reading(int index, uint32_t seen, int timeout_ms)
{
    __atomic_fetch_add(&au.readers, 1, __ATOMIC_SEQ_CST);
    uint32_t bell;
    int over = sci_mbox_bell_read(index, &bell) != DECK_OK || bell != seen;
    if (!over && tcp_only()) {
        struct timespec deadline;
        deck_deadline(&deadline, timeout_ms > 0 ? timeout_ms : 0);
        reading_index = index;
        over = tcp_read_waiting(timeout_ms >= 0 ? &deadline : NULL);
        reading_index = -1;
    }
    __atomic_fetch_sub(&au.readers, 1, __ATOMIC_SEQ_CST);
    return over;
}

static int auto_key_wait(int index, int key, uint32_t seen, int timeout_ms)
{
    if (!au.sci_up) return no_doorbell("deck_mbox_key_wait");
    if (key >= 0 && tcp_only() && wait_reading(index, seen, timeout_ms)) return DECK_OK;
    return sci_mbox_key_wait(index, key, seen, timeout_ms);
}

static void auto_key_ring(int index, int key)
{
    if (!au.sci_up) return;
    sci_mbox_key_ring(index, key);
    wake_readers();
}

static int auto_key_poller(int index, int key)
{
    return au.sci_up ? sci_mbox_key_poller(index, key) : no_doorbell("deck_mbox_key_poller");
}

const deck_transport_t deck_auto_transport = {
    .name = "auto",
    .init_static = auto_init_static,
    .init_dynamic = auto_init_dynamic,
    .done = auto_done,
    .lookup = auto_lookup,
    .barrier = auto_barrier,
    .contact = auto_contact,
    .contact_for = auto_contact_for,
    .add_peer = auto_add_peer,
    .peer_key = tcp_peer_key,
    .peer_count = auto_peer_count,
    .peer_at = auto_peer_at,
    .peer_gone = auto_peer_gone,
    .mbox_created = auto_mbox_created,
    .mbox_destroyed = auto_mbox_destroyed,
    .retrv = auto_retrv,
    .retrv_apply = auto_retrv_apply,
    .msg_alloc = auto_msg_alloc,
    .msg_free = auto_msg_free,
    .delivered = auto_delivered,
    .read_waiting = auto_read_waiting,
    .wake_reading = tcp_wake_reading,
    .post_hint = auto_post_hint,
    .describe_peer = auto_describe_peer,
    .postv_keyed = auto_postv_keyed,
    .mbox_bell_read = auto_bell_read,
    .mbox_key_wait = auto_key_wait,
    .mbox_key_ring = auto_key_ring,
    .mbox_key_poller = auto_key_poller,
};
