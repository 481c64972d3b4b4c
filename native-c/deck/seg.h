/*
 * Shared segments for DECK/SCI, shaped like Dolphin's SISCI API so that a SISCI backend can
 * replace the POSIX shared-memory one (seg_shm.c) without touching the protocols (sci_*.c):
 *
 *   owner side:  create (node-unique id) -> prepare -> map_local -> set_available ... remove
 *   user side:   connect (owner's token, node, id; waits bounded until available) -> map_remote
 *                ... disconnect
 *   both:        flush() drains earlier stores (SCI's write-buffer flush; a full fence here)
 *
 * Every mapping is 64-byte aligned; the user area of a segment starts at `addr`. Each segment
 * carries its owner record (pid + process start time) so that deck_seg_reclaim() can unlink the
 * segments of a process that died without deck_done, and a peer can tell that its owner is gone.
 * A process that exits without deck_done (a JVM with sockets still open) unlinks its own at
 * exit; only a killed one leaves them, for the next reclaim: at any process's deck_init, and at
 * the deck_done (or exit) of a process that outlives it. The directory goes with its last
 * segment.
 *
 * Who may map them (shared/spec/security.md): segments live in a directory of this user's,
 * mode 0700 (/dev/shm/deck-<uid>), so another user can neither open one nor plant one under a
 * name a process will use; each is mode 0600, and one found with another owner or mode is
 * refused, naming it. A segment's name starts with its owner's token, which no bootstrap
 * discloses: a static run's is derived from the run secret, a dynamic process's is random and
 * is found, by processes of this user only, in the process's claim file (deck_seg_claim).
 *
 * Doorbells replace SCI's interrupts: a 32-bit word in the waiter's own segment that the writer
 * bumps (ring); the waiter blocks on it (futex) only after its bounded polling found nothing.
 */
#ifndef DECK_SEG_H
#define DECK_SEG_H

#include <stddef.h>
#include <stdint.h>

#define DECK_SEG_LINE 64          /* SCI's transaction size: the unit of every layout */
#define DECK_SEG_NAME_MAX 128
#define DECK_SEG_TOKEN_MAX 32      /* letters and digits, NUL included */

static inline size_t deck_seg_roundup(size_t n) { return (n + DECK_SEG_LINE - 1) & ~(size_t)(DECK_SEG_LINE - 1); }

typedef struct deck_seg {
    void  *base;                  /* the whole mapping (owner record first) */
    void  *addr;                  /* the user area, 64-byte aligned */
    size_t size;                  /* bytes in the user area */
    int    node, id;
    int    fd;                    /* only between create/connect and the map call */
    int    created;               /* 1: this process owns it (remove unlinks it) */
    char   name[DECK_SEG_NAME_MAX];
} deck_seg_t;

/* A doorbell: `bell` is bumped by writers, `waiters` counts blocked readers, `ringer_cpu` is
 * the CPU (plus 1; 0 unknown) the last writer ran on: a waiter on that same CPU yields while it
 * polls instead of spinning, so that a writer sharing its CPU runs. Any process that may ring
 * writes it, so it is a hint only: whatever it holds, a waiter still stops polling after
 * DECK_SPIN_US.
 *
 * Keys (deck_mbox_post_keyed): a waiter may wait for the rings of one key only (a futex bit
 * set), so that a writer wakes the one thread its message is for instead of a thread that then
 * hands it over. `key_sleepers[k]` counts the waiters blocked on key k, `key_poller` is k + 1
 * while the owner's one poller (deck_mbox_key_poller) looks for key k (0: none), `keyed` is the
 * sum of key_sleepers. A keyed ring wakes key k's sleepers; with none and no poller of k it
 * wakes the plain waiters (who take any message) instead, so every message still wakes someone
 * who takes it. A plain ring wakes everybody. Like ringer_cpu these are written by every
 * process that rings or waits, so a wrong value costs wake-ups, never data: every wait is
 * bounded by its caller. One 64-byte line:
 *   0 bell | 4 waiters | 8 ringer_cpu | 12 key_poller | 16 key_sleepers[23] (u16) | 62 keyed (u16) */
#define DECK_BELL_KEYS 23
typedef struct deck_bell {
    uint32_t bell;
    uint32_t waiters;
    uint32_t ringer_cpu;
    uint32_t key_poller;
    uint16_t key_sleepers[DECK_BELL_KEYS];
    uint16_t keyed;
} deck_bell_t;

/* SCIInitialize + SCIOpen: this process is `self`, its segments named with `token` (letters and
 * digits, < DECK_SEG_TOKEN_MAX). Checks (or makes) this user's private directory and reclaims
 * left-overs of dead processes first. */
int  deck_seg_open(int self, const char *token);
void deck_seg_close(void);
/* The token of a static run's segments: DECK_RUN_KEY when set (a test's handle on the names),
 * else derived from the run secret, which all processes of the run share and nobody else has. */
int  deck_seg_run_token(char *token, size_t len);
/* A fresh random token, for a dynamic process. */
int  deck_seg_random_token(char *token, size_t len);
/* 1 when `token` is one deck_seg_* may put in a name: 1..DECK_SEG_TOKEN_MAX-1 letters or digits. */
int  deck_seg_token_valid(const char *token);

int  deck_seg_create(deck_seg_t *s, int id, size_t size);
/* DECK_OK when the backing store has room for `size` more bytes and some headroom. */
int  deck_seg_room(size_t size);
/* Dynamic processes (POSIX backend: one host): takes the first node number 0..nodes-1 that has
 * no claim file yet (created exclusively, so two live processes never get the same number; a
 * dead one's number is free again once deck_seg_reclaim removed its claim), writes this
 * process's token into the claim and makes that number this process's node (*node). `claim` is
 * the claim file's segment, removed with the others. */
int  deck_seg_claim(deck_seg_t *claim, int nodes, int *node);
/* Dynamic processes: the token in node's claim file (a live owner's): DECK_OK; DECK_ENOTFOUND
 * when the node number is not claimed; DECK_EPEER when its owner has died; DECK_EPROTO when the
 * claim holds no valid token. */
int  deck_seg_claim_token(int node, char *token, size_t len);
int  deck_seg_prepare(deck_seg_t *s);
int  deck_seg_map_local(deck_seg_t *s);
int  deck_seg_set_available(deck_seg_t *s);
/* create + prepare + map_local + set_available: the segment is ready for peers. */
int  deck_seg_export(deck_seg_t *s, int id, size_t size);

/* Waits up to timeout_ms (0: one look) for segment `id` of `node`, whose owner's token is
 * `token`, to be available with a live owner: DECK_ENOTFOUND when it did not become so,
 * DECK_EPEER at once when it is there but its owner has died, DECK_EPROTO for one that is not
 * this user's private segment. */
int  deck_seg_connect(deck_seg_t *s, const char *token, int node, int id, int timeout_ms);
int  deck_seg_map_remote(deck_seg_t *s);
/* connect + map_remote. */
int  deck_seg_attach(deck_seg_t *s, const char *token, int node, int id, int timeout_ms);

/* SCIStoreBarrier: the stores before it are seen before the stores after it. In shared memory
 * that is a release fence, no more: a full fence made the writer wait for its stores to reach
 * the reader's cache (8% of a 64 B ping-pong, perf). Not a store-load barrier. */
void deck_seg_flush(void);
/* 1 while the process that created the (mapped) segment lives. */
int  deck_seg_owner_alive(const deck_seg_t *s);

void deck_seg_disconnect(deck_seg_t *s);   /* user side: unmap */
void deck_seg_remove(deck_seg_t *s);       /* owner side: unmap and unlink */

/* Unlinks every segment of this user whose owner has died; returns how many. deck_seg_open and
 * deck_seg_close call it. */
int  deck_seg_reclaim(void);

/* Waiter: arm (count itself in), read, re-check its condition, wait(read value), ..., disarm.
 * A ring after the read makes the wait return at once, so no wake-up is ever lost. */
void     deck_bell_arm(deck_bell_t *b);
void     deck_bell_disarm(deck_bell_t *b);
uint32_t deck_bell_read(deck_bell_t *b);
/* Blocks while b->bell == seen, at most timeout_ms (spurious returns are allowed). */
void     deck_bell_wait(deck_bell_t *b, uint32_t seen, int timeout_ms);
/* Writer, after its stores: bumps the bell and wakes the waiters if any is armed. */
void     deck_bell_ring(deck_bell_t *b);
/* The same for the plain waiters only: a message whose key is not known (tcp's deliveries, a
 * post to oneself) is for whoever takes any message, who hands it on. */
void     deck_bell_ring_plain(deck_bell_t *b);
/* Keyed waiting (key < DECK_BELL_KEYS): as arm/wait/disarm, but woken only by plain rings and
 * rings of `key`. A keyed ring (writer, after its stores) wakes key's sleepers; when there are
 * none and no poller looks for key, it wakes the plain waiters. */
void     deck_bell_key_arm(deck_bell_t *b, unsigned key);
void     deck_bell_key_disarm(deck_bell_t *b, unsigned key);
void     deck_bell_key_wait(deck_bell_t *b, unsigned key, uint32_t seen, int timeout_ms);
/* The poller's mark: key + 1, or 0 (none); stored only when it changes. */
void     deck_bell_key_polling(deck_bell_t *b, uint32_t mark);
void     deck_bell_ring_key(deck_bell_t *b, unsigned key);
/* For a bell whose waiters, once armed, look at their condition before they wait and never
 * watch the bell itself while they poll: the writer, after a seq_cst store of the condition,
 * notes its CPU, and bumps and wakes only if a waiter is armed (the store and the look at the
 * waiters pair with the waiter's arming and its look at the condition, Dekker). */
void     deck_bell_ring_armed(deck_bell_t *b);
/* A hand-on within the owner: wakes key's sleepers, and nobody when there are none (what was
 * handed on is taken already; a plain waiter would find nothing). */
void     deck_bell_ring_key_only(deck_bell_t *b, unsigned key);

#endif
