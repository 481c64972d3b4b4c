/*
 * The mailboxes created in this process and their receive queues.
 *
 * Each mailbox has its own unbounded FIFO (mutex + condvar), so a message for a mailbox that
 * nobody is retrieving from yet waits there without holding up any other mailbox or the
 * transport's reader threads. Mailbox indexes are slot | generation << 16: a slot reused after a
 * destroy gets a new index, so late frames addressed to the old mailbox are dropped instead of
 * reaching the new one.
 *
 * Lock order: table lock, then a mailbox's lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include "internal.h"

#define SLOT_BITS 16
#define MAX_SLOTS (1 << SLOT_BITS)

typedef struct mbox_entry {
    int          index;
    char         name[DECK_MBOX_NAME_MAX];
    deck_mutex_t lock;
    deck_cond_t  cond;          /* new message, closed, watched peer gone, last waiter left */
    deck_qmsg_t *head, *tail;
    atomic_int   queued;        /* head != NULL, stored under lock: a polling retriever looks at
                                 * it without the lock (poll_head), every poll */
    int          closed;
    int          waiters;       /* retrievers waiting inside take() */
    int          reading;       /* of them, those reading the transport's connections meanwhile */
    atomic_int   watch_node;    /* -1: none, admits every process; DECK_NOBODY: admits none but this
                                 * one; else the only other process whose messages it admits.
                                 * Set under both locks; a polling retriever reads it without */
    unsigned long limit;        /* the longest message it admits */
} mbox_entry_t;

static deck_mutex_t   table_lock = PTHREAD_MUTEX_INITIALIZER;
static mbox_entry_t **slots;
static unsigned      *slot_gen;
static int            nslots;

/* Wakes e's retrievers (e->lock held): those on its condvar, and one that reads the
 * transport's connections while it waits (deck_core_read_waiting). */
static void wake_waiters(mbox_entry_t *e)
{
    deck_cond_broadcast(&e->cond);
    if (e->reading) deck_core_wake_reading();
}

static void free_queue(deck_qmsg_t *q)
{
    while (q) { deck_qmsg_t *n = q->next; deck_qmsg_free(q); q = n; }
}

static void free_entry(mbox_entry_t *e)
{
    free_queue(e->head);
    deck_cond_destroy(&e->cond);
    deck_mutex_destroy(&e->lock);
    free(e);
}

void deck_table_init(void)
{
    slots = NULL;
    slot_gen = NULL;
    nslots = 0;
}

void deck_table_done(void)
{
    for (int i = 0; i < nslots; i++)
        if (slots[i]) free_entry(slots[i]);
    free(slots);
    free(slot_gen);
    deck_table_init();
    deck_qmsg_cache_free();
}

/* Called with table_lock held. */
static mbox_entry_t *find_by_name(const char *name)
{
    for (int i = 0; i < nslots; i++)
        if (slots[i] && strcmp(slots[i]->name, name) == 0) return slots[i];
    return NULL;
}

/* Called with table_lock held: a free slot number, growing the table if needed, or -1. */
static int free_slot(void)
{
    for (int i = 0; i < nslots; i++)
        if (!slots[i]) return i;
    if (nslots == MAX_SLOTS) return -1;
    int n = nslots ? nslots * 2 : 16;
    mbox_entry_t **s = realloc(slots, (size_t)n * sizeof *s);
    if (!s) return -1;
    slots = s;
    unsigned *g = realloc(slot_gen, (size_t)n * sizeof *g);
    if (!g) return -1;
    slot_gen = g;
    for (int i = nslots; i < n; i++) { slots[i] = NULL; slot_gen[i] = 0; }
    int first = nslots;
    nslots = n;
    return first;
}

int deck_table_add(const char *name, void **entry, int *index)
{
    mbox_entry_t *e = calloc(1, sizeof *e);
    if (!e) return deck_fail(DECK_ENOMEM, "deck_mbox_create: out of memory");
    strcpy(e->name, name);
    e->watch_node = -1;
    e->limit = deck_msg_max();
    deck_mutex_init(&e->lock);
    deck_cond_init(&e->cond);
    deck_mutex_lock(&table_lock);
    int rc = DECK_OK, slot = -1;
    if (find_by_name(name))
        rc = deck_fail(DECK_EEXIST, "deck_mbox_create: mailbox '%s' already exists in this process", name);
    else if ((slot = free_slot()) < 0)
        rc = deck_fail(DECK_ENOMEM, "deck_mbox_create: mailbox table full or out of memory");
    if (rc == DECK_OK) {
        /* 1..0x7fff, never 0: index 0 means "no mailbox" (a free sci name entry, a bad index),
         * so slot 0's 32768th mailbox must not get it. */
        slot_gen[slot] = slot_gen[slot] % 0x7fff + 1;
        e->index = slot | (int)(slot_gen[slot] << SLOT_BITS);
        slots[slot] = e;
    }
    deck_mutex_unlock(&table_lock);
    if (rc) { free_entry(e); return rc; }
    *entry = e;
    *index = e->index;
    return DECK_OK;
}

int deck_table_find(const char *name, int *index)
{
    deck_mutex_lock(&table_lock);
    mbox_entry_t *e = find_by_name(name);
    if (e) *index = e->index;
    deck_mutex_unlock(&table_lock);
    return e ? DECK_OK : DECK_ENOTFOUND;
}

int deck_table_deliver(int index, deck_qmsg_t *m)
{
    int slot = index & (MAX_SLOTS - 1);
    deck_mutex_lock(&table_lock);
    mbox_entry_t *e = (index >= 0 && slot < nslots) ? slots[slot] : NULL;
    if (!e || e->index != index) {
        deck_mutex_unlock(&table_lock);
        deck_qmsg_free(m);
        return deck_fail(DECK_ENOTFOUND, "deck_mbox_post: no mailbox with index %d here", index);
    }
    deck_mutex_lock(&e->lock);
    if (e->tail) e->tail->next = m; else e->head = m;
    e->tail = m;
    /* Before the transport's ring (deck_core_deliver): a poller that the ring's bell shows
     * something to, or that arms after it, sees the flag (seq_cst on both sides). */
    atomic_store(&e->queued, 1);
    wake_waiters(e);
    deck_mutex_unlock(&e->lock);
    deck_mutex_unlock(&table_lock);
    return DECK_OK;
}

void deck_table_peer_gone(int node)
{
    deck_mutex_lock(&table_lock);
    for (int i = 0; i < nslots; i++) {
        mbox_entry_t *e = slots[i];
        if (!e) continue;
        deck_mutex_lock(&e->lock);
        if (e->watch_node == node) wake_waiters(e);
        deck_mutex_unlock(&e->lock);
    }
    deck_mutex_unlock(&table_lock);
}

void deck_table_remove(void *entry)
{
    mbox_entry_t *e = entry;
    deck_mutex_lock(&table_lock);
    slots[e->index & (MAX_SLOTS - 1)] = NULL;
    deck_mutex_unlock(&table_lock);
    /* Out of the table, nothing new arrives; wake the retrievers and wait until they left. */
    deck_mutex_lock(&e->lock);
    e->closed = 1;
    wake_waiters(e);
    while (e->waiters > 0) deck_cond_wait(&e->cond, &e->lock);
    deck_mutex_unlock(&e->lock);
    free_entry(e);
}

unsigned long deck_msg_max(void)
{
    static unsigned long max;
    unsigned long m = __atomic_load_n(&max, __ATOMIC_RELAXED);
    if (!m) {
        m = (unsigned long)deck_env_int("DECK_MSG_MAX", 1 << 30);
        if (m == 0) m = 1;
        __atomic_store_n(&max, m, __ATOMIC_RELAXED);
    }
    return m;
}

int deck_table_admit(int index, unsigned long len, int from)
{
    int slot = index & (MAX_SLOTS - 1), rc;
    deck_mutex_lock(&table_lock);
    mbox_entry_t *e = (index >= 0 && slot < nslots) ? slots[slot] : NULL;
    if (!e || e->index != index) {
        rc = len <= deck_msg_max() ? DECK_ENOTFOUND
           : deck_fail(DECK_EPROTO, "a message of %lu bytes, above DECK_MSG_MAX (%lu)", len, deck_msg_max());
    } else if (e->watch_node != -1 && e->watch_node != from) {
        rc = e->watch_node == DECK_NOBODY
           ? deck_fail(DECK_EPROTO, "a message for mailbox '%s', which admits no other process yet", e->name)
           : deck_fail(DECK_EPROTO, "a message for mailbox '%s', which admits node %d only", e->name, e->watch_node);
    } else if (len > e->limit) {
        rc = deck_fail(DECK_EPROTO, "a message of %lu bytes for mailbox '%s', which admits %lu at most", len,
                       e->name, e->limit);
    } else {
        rc = DECK_OK;
    }
    deck_mutex_unlock(&table_lock);
    return rc;
}

void deck_entry_limit(void *entry, unsigned long limit)
{
    mbox_entry_t *e = entry;
    deck_mutex_lock(&table_lock);
    e->limit = limit;
    deck_mutex_unlock(&table_lock);
}

unsigned long deck_entry_limit_of(void *entry)
{
    mbox_entry_t *e = entry;
    deck_mutex_lock(&table_lock);
    unsigned long limit = e->limit;
    deck_mutex_unlock(&table_lock);
    return limit;
}

void deck_entry_watch(void *entry, int node)
{
    mbox_entry_t *e = entry;
    deck_mutex_lock(&table_lock);         /* deck_table_admit reads it under this lock */
    deck_mutex_lock(&e->lock);
    e->watch_node = node;
    wake_waiters(e);                 /* the node may already be gone */
    deck_mutex_unlock(&e->lock);
    deck_mutex_unlock(&table_lock);
}

int deck_entry_watched(void *entry)
{
    mbox_entry_t *e = entry;
    return atomic_load(&e->watch_node);
}

/* Called with e->lock held and a message queued: unlinks it into *taken, or DECK_ETRUNC keeping
 * it queued when it is longer than `size` (so that no data is lost: the caller may retry with a
 * larger message). */
static int take_head(mbox_entry_t *e, unsigned long size, deck_qmsg_t **taken)
{
    deck_qmsg_t *q = e->head;
    if (q->len > size)
        return deck_fail(DECK_ETRUNC, "deck_mbox_retrv: '%s': incoming message of %zu bytes, "
                         "receiving message holds %lu (message left queued)", e->name, q->len, size);
    e->head = q->next;
    if (!e->head) e->tail = NULL;
    atomic_store(&e->queued, e->head != NULL);
    *taken = q;
    return DECK_OK;
}

/* take_head, copied into msg. */
static int copy_out(mbox_entry_t *e, deck_msg_t *msg)
{
    deck_qmsg_t *q = NULL;
    int rc = take_head(e, msg->size, &q);
    if (rc) return rc;
    if (q->len) memcpy(msg->buf, q->data, q->len);
    msg->len = q->len;
    msg->pos = 0;
    msg->src = q->from;
    deck_qmsg_free(q);
    return DECK_OK;
}

/* deck_mbox_retrv_apply's hand-over of a queued message: the queued copy itself, read straight
 * from the wire (tcp) or copied once by a local post, then freed; only this thread holds it. */
static void apply_taken(deck_qmsg_t *q, deck_msg_fn fn, void *arg)
{
    deck_msg_t view = { .buf = q->data, .size = q->len, .len = q->len, .src = q->from };
    fn(&view, arg);
    deck_qmsg_free(q);
}

/* Takes the head without waiting: into msg, or with `taken` unlinked into *taken (msg->size
 * still bounds it). 1 taken, 0 empty, DECK_ETRUNC (left queued). */
static int poll_head(void *entry, deck_msg_t *msg, deck_qmsg_t **taken)
{
    mbox_entry_t *e = entry;
    if (!atomic_load(&e->queued)) return 0;    /* a poll of an empty queue takes no lock */
    deck_mutex_lock(&e->lock);
    int rc = 0;
    if (e->head) rc = (taken ? take_head(e, msg->size, taken) : copy_out(e, msg)) == DECK_OK ? 1 : DECK_ETRUNC;
    deck_mutex_unlock(&e->lock);
    return rc;
}

int deck_entry_poll(void *entry, deck_msg_t *msg) { return poll_head(entry, msg, NULL); }

int deck_entry_poll_apply(void *entry, deck_msg_t *scratch, deck_msg_fn fn, void *arg)
{
    deck_qmsg_t *q = NULL;
    int rc = poll_head(entry, scratch, &q);
    if (q) apply_taken(q, fn, arg);
    return rc;
}

/*
 * deck_mbox_retrv_apply while its thread reads the connections itself (deck_core_read_waiting):
 * a message that thread reads for this mailbox while nothing waits queued before it is handed
 * to fn where it lies (the connection's buffer, tcp_wait.c), instead of being copied into a
 * queued message first and handed over from there: a copy of every block of a stream fewer.
 * Order is kept: a connection's frames are read in order under its lock, and one that finds an
 * earlier message of the mailbox queued is queued behind it. One message per retrieve: the
 * frames read behind it are queued.
 */
struct applying {
    mbox_entry_t *entry;        /* the mailbox this thread retrieves from, in apply mode */
    deck_msg_fn   fn;
    void         *arg;
    size_t        bound;        /* the scratch message's size: the longest it takes */
    int           applied;      /* messages handed to fn where they arrived: 0 or 1 */
};
static _Thread_local struct applying applying;
static atomic_long applied_here;   /* by all threads, for tests */

/* await_head: the thread applied messages where they arrived (deck_table_apply_here). */
#define APPLIED_HERE 1

/* Waits (e->lock held) until the queue has a head: DECK_OK; or the mailbox is destroyed, its
 * watched node gone or the time up: that failure. */
static int await_head(mbox_entry_t *e, int timeout_ms)
{
    if (timeout_ms == DECK_POLL) timeout_ms = 0;   /* a queue filled by other threads: polling is a look */
    struct timespec deadline = {0, 0};
    if (timeout_ms >= 0) deck_deadline(&deadline, timeout_ms);
    int looked = 0, no_read = 0;
    for (;;) {
        if (e->closed)
            return deck_fail(DECK_ECLOSED, "deck_mbox_retrv: mailbox '%s' destroyed while waiting", e->name);
        if (e->head) return DECK_OK;
        if (e->watch_node >= 0 && deck_core_peer_gone(e->watch_node))
            return deck_fail(DECK_EPEER, "deck_mbox_retrv: '%s': node %d has gone away", e->name, e->watch_node);
        int passed = timeout_ms >= 0 && deck_deadline_passed(&deadline);
        if (passed && looked)
            return deck_fail(DECK_ETIMEDOUT, "deck_mbox_retrv_timed: '%s': nothing within %d ms", e->name, timeout_ms);
        /* Reading the connections itself, the message comes without a reader's hand-off; a
         * look whose time is up still reads what the sockets hold (their readers may be
         * keeping out, tcp_wait.c), as a socket's read sees what the kernel holds. With the
         * lock let go meanwhile, everything above is looked at again before a sleep. */
        if (!no_read) {
            e->reading++;
            deck_mutex_unlock(&e->lock);
            int read = deck_core_read_waiting(timeout_ms >= 0 ? &deadline : NULL);
            deck_mutex_lock(&e->lock);
            e->reading--;
            if (applying.entry == e && applying.applied) return APPLIED_HERE;
            looked |= passed;
            no_read = !read;
            continue;
        }
        no_read = 0;
        if (timeout_ms < 0) deck_cond_wait(&e->cond, &e->lock);
        else deck_cond_wait_until(&e->cond, &e->lock, &deadline);
    }
}

/* A waiting take: into msg, or with `taken` as poll_head; or, when the thread applied messages
 * where they arrived meanwhile (deck_table_apply_here), DECK_OK with nothing taken. */
static int take(void *entry, deck_msg_t *msg, int timeout_ms, deck_qmsg_t **taken)
{
    mbox_entry_t *e = entry;
    deck_mutex_lock(&e->lock);
    e->waiters++;
    int rc = await_head(e, timeout_ms);
    if (rc == APPLIED_HERE) rc = DECK_OK;
    else if (rc == DECK_OK) rc = taken ? take_head(e, msg->size, taken) : copy_out(e, msg);
    e->waiters--;
    if (e->closed) deck_cond_broadcast(&e->cond);   /* the destroyer waits for waiters == 0 */
    deck_mutex_unlock(&e->lock);
    return rc;
}

int deck_entry_take(void *entry, deck_msg_t *msg, int timeout_ms) { return take(entry, msg, timeout_ms, NULL); }

int deck_entry_take_apply(void *entry, deck_msg_t *scratch, int timeout_ms, deck_msg_fn fn, void *arg)
{
    deck_qmsg_t *q = NULL;
    applying = (struct applying){ entry, fn, arg, scratch->size, 0 };
    int rc = take(entry, scratch, timeout_ms, &q);
    applying = (struct applying){ NULL, NULL, NULL, 0, 0 };
    if (q) apply_taken(q, fn, arg);
    return rc;
}

int deck_table_apply_here(int index, int from, const void *data, size_t len)
{
    mbox_entry_t *e = applying.entry;
    /* Only in a retrieve of that mailbox, one message per retrieve (as its contract says), of a
     * length the retrieve admits (scratch's size: a longer one gets DECK_ETRUNC from the queue). */
    if (!e || e->index != index || applying.applied || len > applying.bound) return 0;
    deck_mutex_lock(&e->lock);
    int first = !e->head && !e->closed;      /* nothing queued before it: no order to keep */
    deck_mutex_unlock(&e->lock);
    if (!first) return 0;
    deck_msg_t view = { .buf = (char *)(uintptr_t)data, .size = len, .len = len, .src = from };
    applying.fn(&view, applying.arg);
    applying.applied++;
    atomic_fetch_add(&applied_here, 1);
    return 1;
}

long deck_table_applied_here(void) { return atomic_load(&applied_here); }
