/*
 * Queued messages (deck_qmsg_t): tcp's reader thread allocates one for every incoming message
 * and a retriever, another thread, frees it. glibc serves a thread's allocations of a few pages
 * from that thread's arena and hands pages freed at the top of it back to the kernel, so every
 * 64 KiB block cost its 16 page faults and their zeroing again in the reader (perf of a 1 MiB
 * stream over DECK tcp: exc_page_fault, clear_page_erms and memcg charging, about 12% of all
 * samples, more than the reader's copy out of the socket). Buffers of a block's size are kept
 * for reuse instead: at most QMSG_CACHED of them, QMSG_CACHE_BYTES each (532 KiB in all).
 * Shorter messages come from malloc's small bins, which do not fault; longer ones (a DECK
 * program's own big messages) are rare enough to pay for their pages.
 */
#include <stdlib.h>
#include "internal.h"

#define QMSG_CACHE_MIN   (16u * 1024)
#define QMSG_CACHE_BYTES (64u * 1024 + 1024)   /* MicroVAPI's largest at mtu 64 KiB (65 808 B) fits */
#define QMSG_CACHED      8

static deck_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static deck_qmsg_t *cache[QMSG_CACHED];
static int          cached;

/* A message of this length lives in a buffer of QMSG_CACHE_BYTES (len is never changed). */
static int reusable(size_t len) { return len >= QMSG_CACHE_MIN && len <= QMSG_CACHE_BYTES; }

deck_qmsg_t *deck_qmsg_alloc(size_t len, int from)
{
    deck_qmsg_t *m = NULL;
    if (reusable(len)) {
        deck_mutex_lock(&cache_lock);
        if (cached > 0) m = cache[--cached];
        deck_mutex_unlock(&cache_lock);
    }
    if (!m) m = malloc(sizeof *m + (reusable(len) ? QMSG_CACHE_BYTES : len ? len : 1));
    if (m) {
        m->next = NULL;
        m->len = len;
        m->from = from;
    }
    return m;
}

void deck_qmsg_free(deck_qmsg_t *m)
{
    if (m && reusable(m->len)) {
        deck_mutex_lock(&cache_lock);
        if (cached < QMSG_CACHED) {
            cache[cached++] = m;
            m = NULL;
        }
        deck_mutex_unlock(&cache_lock);
    }
    free(m);
}

void deck_qmsg_cache_free(void)
{
    deck_mutex_lock(&cache_lock);
    while (cached > 0) free(cache[--cached]);
    deck_mutex_unlock(&cache_lock);
}
