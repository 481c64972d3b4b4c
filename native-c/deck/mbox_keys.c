/*
 * Keyed wake-ups of a created mailbox (deck.h, "keyed wake-ups"): waiting for the messages of
 * one key without retrieving, on transports whose mailboxes have a doorbell (sci, and auto while
 * shared memory is up). A process whose threads each wait for different messages of one
 * mailbox (MicroVAPI: a reader per queue pair) lets the sender wake the thread a message is for,
 * instead of waking a retriever that then wakes that thread: one wake-up where there were two.
 */
#include "internal.h"
#include "transport.h"

static int keyed_mbox(deck_mbox_t *mb, const char *fn, const deck_transport_t **tp)
{
    if (!mb || mb->kind != DECK_MBOX_CREATED)
        return deck_fail(DECK_ESTATE, "%s: not a mailbox created by this process", fn);
    *tp = deck_core_transport();
    if (!*tp || !(*tp)->mbox_bell_read)
        return deck_fail(DECK_ESTATE, "%s: transport %s has no keyed wake-ups", fn, *tp ? (*tp)->name : "(none)");
    return DECK_OK;
}

static int valid_key(int key) { return key >= DECK_KEY_ANY; }
static int slot_of(int key) { return key == DECK_KEY_ANY ? key : key % DECK_MBOX_KEYS; }

int deck_mbox_key_seen(deck_mbox_t *mb, uint32_t *seen)
{
    const deck_transport_t *tp;
    int rc = keyed_mbox(mb, "deck_mbox_key_seen", &tp);
    if (rc) return rc;
    if (!seen) return deck_fail(DECK_EINVAL, "deck_mbox_key_seen: seen is NULL");
    return tp->mbox_bell_read(mb->index, seen);
}

int deck_mbox_key_wait(deck_mbox_t *mb, int key, uint32_t seen, int timeout_ms)
{
    const deck_transport_t *tp;
    int rc = keyed_mbox(mb, "deck_mbox_key_wait", &tp);
    if (rc) return rc;
    if (!valid_key(key)) return deck_fail(DECK_EINVAL, "deck_mbox_key_wait: key %d is not a key", key);
    return tp->mbox_key_wait(mb->index, slot_of(key), seen, timeout_ms);
}

int deck_mbox_key_poller(deck_mbox_t *mb, int key)
{
    const deck_transport_t *tp;
    int rc = keyed_mbox(mb, "deck_mbox_key_poller", &tp);
    if (rc) return rc;
    if (!valid_key(key)) return deck_fail(DECK_EINVAL, "deck_mbox_key_poller: key %d is not a key", key);
    return tp->mbox_key_poller(mb->index, slot_of(key));
}

int deck_mbox_key_ring(deck_mbox_t *mb, int key)
{
    const deck_transport_t *tp;
    int rc = keyed_mbox(mb, "deck_mbox_key_ring", &tp);
    if (rc) return rc;
    if (!valid_key(key)) return deck_fail(DECK_EINVAL, "deck_mbox_key_ring: key %d is not a key", key);
    tp->mbox_key_ring(mb->index, slot_of(key));
    return DECK_OK;
}
