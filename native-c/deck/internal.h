/*
 * Declarations shared by the files of libdeck; not part of the public API (include/deck.h).
 */
#ifndef DECK_INTERNAL_H
#define DECK_INTERNAL_H

#include <stddef.h>
#include <time.h>
#include "deck.h"

/* ---- errors (error.c) ---- */
/* Records the text of a failure for deck_last_error() in this thread and returns `code`, so a
 * failing path reads `return deck_fail(DECK_EINVAL, "deck_x: ...")`. */
int deck_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same with a fixed text and no formatting: for failures on a hot path, such as a retrieve
 * that only looks (timeout 0) and finds nothing, which a poller does between messages. */
int deck_fail_text(int code, const char *text);
/* Same, with strerror(err) appended. */
int deck_fail_errno(int code, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* One log line (deck_set_log), rate limited: for what no caller is there to be told, such as a
 * connection ended by a bad frame from its peer. */
void deck_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- time (thread.c) ---- */
/* `us` microseconds after time t: deadlines, and one clock read serving several (sci_wait.c). */
struct timespec deck_time_after(const struct timespec *t, long us);
/* Absolute CLOCK_MONOTONIC time `ms` from now: the clock every condvar of libdeck uses. */
void deck_deadline(struct timespec *abs, int ms);
int  deck_deadline_passed(const struct timespec *abs);
/* Milliseconds from now until t, rounded up, 0 once it has passed: a poll or wait of that long
 * never ends before t, so no caller spins through the last millisecond of its deadline. */
long deck_ms_until(const struct timespec *t);
/* For a check due every `ms` on a hot path (is the peer alive?): 1 when *next has passed, and
 * then *next is set `ms` ahead. It reads CLOCK_MONOTONIC_COARSE, the last timer tick's time,
 * which costs a few ns where CLOCK_MONOTONIC reads the TSC (20-40 ns in a virtual machine, on
 * every post); it lags by at most a tick (1-4 ms). Never for condvar deadlines. */
int  deck_check_due(struct timespec *next, int ms);
/* Waits on c until *abs; returns 0, or ETIMEDOUT once *abs has passed. */
int  deck_cond_wait_until(deck_cond_t *c, deck_mutex_t *m, const struct timespec *abs);
/* Integer environment variable, `dflt` when unset or not a number. */
int  deck_env_int(const char *name, int dflt);
/* A number from the environment: `dflt` when unset; DECK_ECONFIG naming it when not in
 * min..max. */
int  deck_env_range(const char *name, long long dflt, long long min, long long max, long long *out);
/* DECK_SPIN_US (sci and tcp): microseconds a waiter polls before it blocks, 30 when unset;
 * -1 polls only (each wait still bounded by its slices). */
int  deck_spin_us(long long *out);
/* DECK_POST_TIMEOUT_MS: how long a post may wait for a peer that takes nothing (a stopped
 * process, a partitioned host) before it fails with DECK_ETIMEDOUT (10000). */
int  deck_post_timeout_ms(void);

/* ---- core (core.c) ---- */
int deck_core_self(void);        /* this process's id */
int deck_core_peer_gone(int node);
/* The transport's read_waiting and wake_reading (transport.h); 0 and nothing without them. */
int  deck_core_read_waiting(const struct timespec *deadline);
void deck_core_wake_reading(void);

int deck_core_require_init(const char *fn);
/* The nodes file of a static run (its identity names the run for sci); "" otherwise. */
const char *deck_core_nodes_file(void);

/* ---- received messages and the local mailbox table (mbox_table.c) ---- */
typedef struct deck_qmsg {
    struct deck_qmsg *next;
    size_t            len;
    int               from;      /* the sending process's DECK id (deck_msg_t.src) */
    char              data[];    /* the payload, read straight from the wire into here */
} deck_qmsg_t;

/* A message of len bytes from process `from` (qmsg.c: block-sized buffers are reused), freed
 * with deck_qmsg_free; deck_qmsg_cache_free frees the buffers kept for reuse (deck_done). */
deck_qmsg_t *deck_qmsg_alloc(size_t len, int from);
void deck_qmsg_free(deck_qmsg_t *m);
void deck_qmsg_cache_free(void);
void deck_table_init(void);
void deck_table_done(void);                                  /* frees every mailbox left */
int  deck_table_add(const char *name, void **entry, int *index);
int  deck_table_find(const char *name, int *index);          /* DECK_ENOTFOUND if absent */
/* Appends m to mailbox `index`'s queue (ownership passes); frees it and returns
 * DECK_ENOTFOUND when no such mailbox exists (it was destroyed, or never was). */
int  deck_table_deliver(int index, deck_qmsg_t *m);
void deck_table_peer_gone(int node);                         /* wakes watchers of node */
/* deck_table_deliver, then the transport's `delivered` hook: how incoming data is queued
 * (core.c). */
int  deck_core_deliver(int index, deck_qmsg_t *m);
/* A post to mailbox `index` of this process: the len bytes of iov[0..cnt) copied into a queued
 * message and delivered (deck_core_deliver). Every transport posts to itself so: a full ring or
 * a rendezvous with itself would block a thread that also retrieves. */
int  deck_core_post_self(int index, const struct iovec *iov, int cnt, size_t len);
void deck_table_remove(void *entry);                         /* wakes retrievers, frees */
int  deck_entry_take(void *entry, deck_msg_t *msg, int timeout_ms);
/* deck_entry_take for deck_mbox_retrv_apply: the queued message itself is handed to fn (no copy
 * into scratch, whose size still bounds it as in a retrieve), then freed. */
int  deck_entry_take_apply(void *entry, deck_msg_t *scratch, int timeout_ms, deck_msg_fn fn, void *arg);
/* Called by a transport that read a whole message for mailbox `index` into its own memory
 * (data[0..len), admitted by deck_table_admit): when this thread is inside
 * deck_entry_take_apply on that mailbox and nothing is queued there, hands it to that retrieve's
 * fn where it lies and returns 1; otherwise 0, and the caller queues it (deck_core_deliver). */
int  deck_table_apply_here(int index, int from, const void *data, size_t len);
long deck_table_applied_here(void);                          /* messages so handed, for tests */
void deck_entry_watch(void *entry, int node);
/* Whether mailbox `index` admits a message of len bytes from process `from`, checked before
 * anything is allocated for it: DECK_OK; DECK_ENOTFOUND, no such mailbox (any more: the message
 * is dropped); DECK_EPROTO, the sender broke the rules (too long, or the mailbox is watched for
 * another process), with the text. */
int  deck_table_admit(int index, unsigned long len, int from);
void deck_entry_limit(void *entry, unsigned long limit);
unsigned long deck_entry_limit_of(void *entry);
/* DECK_MSG_MAX (default 1 GiB): the longest message any mailbox admits. */
unsigned long deck_msg_max(void);

/* ---- messages in pieces (gather.c, deck_mbox_postv_keyed) ---- */
/* Checks the pieces (1..DECK_GATHER_MAX, none null with bytes, together at most DECK_MSG_MAX)
 * and sums their lengths into *len; DECK_EINVAL naming fn otherwise. */
int  deck_gather_check(const struct iovec *iov, int cnt, size_t *len, const char *fn);
/* Copies bytes from..from+n of the pieces' concatenation to dst. */
void deck_gather_copy(void *dst, const struct iovec *iov, int cnt, size_t from, size_t n);
/* deck_mbox_retrv_apply where the message was retrieved into `scratch` with result rc: hands
 * it to fn when rc is DECK_OK; returns rc. */
static inline int deck_apply_scratch(int rc, deck_msg_t *scratch, deck_msg_fn fn, void *arg)
{
    if (rc == DECK_OK) fn(scratch, arg);
    return rc;
}
int  deck_entry_watched(void *entry);                        /* the watched node, or -1 */
/* Takes the queue's head without waiting: 1 taken, 0 empty, DECK_ETRUNC (left queued). */
int  deck_entry_poll(void *entry, deck_msg_t *msg);
/* deck_entry_poll handing the queued message itself to fn, as deck_entry_take_apply. */
int  deck_entry_poll_apply(void *entry, deck_msg_t *scratch, deck_msg_fn fn, void *arg);

/* ---- nodes file (nodes.c) ---- */
typedef struct deck_node_addr {
    char host[256];
    int  port;
} deck_node_addr_t;

#define DECK_DEFAULT_BASE_PORT 24600
/* Reads the first `nnodes` node lines of `path` into a malloc'ed array. */
int deck_nodes_read(const char *path, int nnodes, deck_node_addr_t **out);

#endif
