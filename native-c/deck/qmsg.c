/*
 * Queued messages (deck_qmsg_t): tcp's reader thread allocates one for every incoming message
 * and a retriever, another thread, frees it. glibc serves a thread's allocations of a few pages
 * from that thread's arena and hands pages freed at the top of it back to the kernel, so every
 * 64 KiB block cost its 16 page faults and their zeroing again in the reader (perf of a 1 MiB
 * stream over DECK tcp: exc_page_fault, clear_page_erms and memcg charging, about 12% of all
 * samples, more than the reader's copy out of the socket). Buffers are kept for reuse instead,
 * in two classes: a block's message (MicroVAPI's largest at mtu 64 KiB, 65 808 B) and a frame as
 * long as tcp's post hint (deck_mbox_post_hint: MicroVAPI coalesces a stream's blocks up to it),
 * a few buffers of each class's longest length (1.5 MiB in all). Shorter messages come from
 * malloc's small bins, which do not fault; longer ones (a DECK program's own big messages) are
 * rare enough to pay for their pages.
 */
#include <stdlib.h>
#include "internal.h"

#define QMSG_CACHE_MIN (16u * 1024)

typedef struct {
    size_t       bytes;          /* a buffer's length: the longest message of the class */
    int          keep;           /* buffers kept at most */
    int          cached;
    deck_qmsg_t *cache[8];
} qmsg_class_t;

static deck_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static qmsg_class_t classes[] = {
    { 64u * 1024 + 1024, 8, 0, { 0 } },
    { DECK_TCP_POST_HINT, 4, 0, { 0 } },
};
#define NCLASSES ((int)(sizeof classes / sizeof *classes))

/* The class a message of this length lives in (len is never changed), or NULL: malloc's. */
static qmsg_class_t *class_of(size_t len)
{
    if (len < QMSG_CACHE_MIN) return NULL;
    for (int i = 0; i < NCLASSES; i++)
        if (len <= classes[i].bytes) return &classes[i];
    return NULL;
}

deck_qmsg_t *deck_qmsg_alloc(size_t len, int from)
{
    deck_qmsg_t *m = NULL;
    qmsg_class_t *c = class_of(len);
    if (c) {
        deck_mutex_lock(&cache_lock);
        if (c->cached > 0) m = c->cache[--c->cached];
        deck_mutex_unlock(&cache_lock);
    }
    if (!m) m = malloc(sizeof *m + (c ? c->bytes : len ? len : 1));
    if (m) {
        m->next = NULL;
        m->len = len;
        m->from = from;
    }
    return m;
}

void deck_qmsg_free(deck_qmsg_t *m)
{
    qmsg_class_t *c = m ? class_of(m->len) : NULL;
    if (c) {
        deck_mutex_lock(&cache_lock);
        if (c->cached < c->keep) {
            c->cache[c->cached++] = m;
            m = NULL;
        }
        deck_mutex_unlock(&cache_lock);
    }
    free(m);
}

void deck_qmsg_cache_free(void)
{
    deck_mutex_lock(&cache_lock);
    for (int i = 0; i < NCLASSES; i++)
        while (classes[i].cached > 0) free(classes[i].cache[--classes[i].cached]);
    deck_mutex_unlock(&cache_lock);
}
