/*
 * Mailboxes: create (receive side, registered in this process's table), clone (send side,
 * resolved through the name service), post, retrieve, watch, destroy.
 *
 * The name service has no central registry: a name is looked up in this process first, then
 * by asking every peer in turn; until the owner has created it, clone retries with a short
 * sleep, bounded by DECK_CLONE_TIMEOUT_MS (default 10000).
 */
#include <string.h>
#include <time.h>
#include "transport.h"

#define CLONE_RETRY_MS 20

static int check_mbox(const deck_mbox_t *mb, int kind, const char *fn)
{
    int rc = deck_core_require_init(fn);
    if (rc) return rc;
    if (!mb) return deck_fail(DECK_EINVAL, "%s: null mailbox", fn);
    if (mb->kind != kind)
        return deck_fail(DECK_ESTATE, "%s: mailbox '%s' is not a %s mailbox", fn, mb->name,
                         kind == DECK_MBOX_CREATED ? "created (receiving)" : "cloned (sending)");
    return DECK_OK;
}

static int check_name(const char *name, const char *fn)
{
    if (!name || !*name || strlen(name) >= DECK_MBOX_NAME_MAX)
        return deck_fail(DECK_EINVAL, "%s: mailbox name empty or longer than %d bytes", fn, DECK_MBOX_NAME_MAX - 1);
    return DECK_OK;
}

int deck_mbox_create(deck_mbox_t *mb, const char *name)
{
    int rc = deck_core_require_init("deck_mbox_create");
    if (rc || (rc = check_name(name, "deck_mbox_create"))) return rc;
    if (!mb) return deck_fail(DECK_EINVAL, "deck_mbox_create: null mailbox");
    void *entry;
    int index;
    if ((rc = deck_table_add(name, &entry, &index))) return rc;
    const deck_transport_t *tp = deck_core_transport();
    if (tp->mbox_created && (rc = tp->mbox_created(index, name))) {
        deck_table_remove(entry);
        return rc;
    }
    mb->kind = DECK_MBOX_CREATED;
    mb->node = deck_core_self();
    mb->index = index;
    strcpy(mb->name, name);
    mb->impl = entry;
    return DECK_OK;
}

/* One pass over this process and every peer: DECK_OK with *node, *index, or ENOTFOUND. */
static int lookup_everywhere(const char *name, int *node, int *index)
{
    if (deck_table_find(name, index) == DECK_OK) { *node = deck_core_self(); return DECK_OK; }
    const deck_transport_t *tp = deck_core_transport();
    for (int i = 0; i < tp->peer_count(); i++) {
        int peer;
        if (tp->peer_at(i, &peer) != DECK_OK) break;      /* the peer list shrank meanwhile */
        int rc = tp->lookup(peer, name, index);
        if (rc == DECK_OK) { *node = peer; return DECK_OK; }
        /* A peer that cannot be reached yet (still starting) or has left does not own it. */
    }
    return DECK_ENOTFOUND;
}

/* One pass over `only` (>= 0) or over this process and every peer. */
static int lookup_pass(int only, const char *name, int *node, int *index)
{
    if (only == deck_core_self() || only < 0) {
        if (deck_table_find(name, index) == DECK_OK) { *node = deck_core_self(); return DECK_OK; }
        if (only >= 0) return DECK_ENOTFOUND;
    }
    if (only >= 0) {
        int rc = deck_core_transport()->lookup(only, name, index);
        if (rc == DECK_OK) *node = only;
        return rc == DECK_EPEER || rc == DECK_EPROTO ? rc : rc == DECK_OK ? DECK_OK : DECK_ENOTFOUND;
    }
    return lookup_everywhere(name, node, index);
}

static int clone_from(deck_mbox_t *mb, int only, const char *name, const char *fn)
{
    int rc = deck_core_require_init(fn);
    if (rc || (rc = check_name(name, fn))) return rc;
    if (!mb) return deck_fail(DECK_EINVAL, "%s: null mailbox", fn);
    int timeout = deck_env_int("DECK_CLONE_TIMEOUT_MS", 10000);
    struct timespec deadline;
    deck_deadline(&deadline, timeout);
    int node = -1, index = -1;   /* set by the pass that finds the name */
    while ((rc = lookup_pass(only, name, &node, &index)) == DECK_ENOTFOUND) {
        if (deck_deadline_passed(&deadline)) {
            if (only >= 0)
                return deck_fail(DECK_ENOTFOUND, "%s: no mailbox named '%s' at node %d after %d ms", fn, name, only, timeout);
            return deck_fail(DECK_ENOTFOUND, "%s: no mailbox named '%s' in any of the %d processes after %d ms", fn,
                             name, deck_numnodes(), timeout);
        }
        /* Bounded sleep: the owner has not created the name yet, nothing to wait on locally. */
        struct timespec pause = { 0, CLONE_RETRY_MS * 1000000L };
        nanosleep(&pause, NULL);
    }
    if (rc) return rc;
    mb->kind = DECK_MBOX_CLONED;
    mb->node = node;
    mb->index = index;
    strcpy(mb->name, name);
    mb->impl = NULL;
    return DECK_OK;
}

int deck_mbox_clone(deck_mbox_t *mb, const char *name)
{
    return clone_from(mb, -1, name, "deck_mbox_clone");
}

int deck_mbox_clone_at(deck_mbox_t *mb, int node, const char *name)
{
    if (node < 0) return deck_fail(DECK_EINVAL, "deck_mbox_clone_at: %d is not a node", node);
    return clone_from(mb, node, name, "deck_mbox_clone_at");
}

int deck_mbox_post(deck_mbox_t *mb, deck_msg_t *msg)
{
    return deck_mbox_post_keyed(mb, msg, -1);
}

int deck_mbox_post_keyed(deck_mbox_t *mb, deck_msg_t *msg, int key)
{
    if (!msg || (!msg->buf && msg->len)) return deck_fail(DECK_EINVAL, "deck_mbox_post: null message");
    struct iovec whole = { .iov_base = msg->buf, .iov_len = msg->len };
    return deck_mbox_postv_keyed(mb, &whole, 1, key);
}

/* A transport's key: the mailbox key modulo DECK_MBOX_KEYS, or -1, with DECK_KEY_QUIET when
 * asked for (transport.h). */
static int post_with(deck_mbox_t *mb, const struct iovec *iov, int cnt, int key)
{
    int rc = check_mbox(mb, DECK_MBOX_CLONED, "deck_mbox_post");
    if (rc) return rc;
    size_t len;
    if ((rc = deck_gather_check(iov, cnt, &len, "deck_mbox_post"))) return rc;
    const deck_transport_t *tp = deck_core_transport();
    if (mb->node != deck_core_self() || tp->retrv) {   /* such a transport receives everything itself */
        return tp->postv_keyed(mb->node, mb->index, iov, cnt, len, key);
    }
    return deck_core_post_self(mb->index, iov, cnt, len);
}

int deck_mbox_postv_keyed(deck_mbox_t *mb, const struct iovec *iov, int cnt, int key)
{
    return post_with(mb, iov, cnt, key >= 0 ? key % DECK_MBOX_KEYS : -1);
}

int deck_mbox_postv_quiet(deck_mbox_t *mb, const struct iovec *iov, int cnt, int key)
{
    if (key < 0) return deck_fail(DECK_EINVAL, "deck_mbox_postv_quiet: key %d: a quiet post needs a key", key);
    return post_with(mb, iov, cnt, key % DECK_MBOX_KEYS | DECK_KEY_QUIET);
}

int deck_mbox_retrv_timed(deck_mbox_t *mb, deck_msg_t *msg, int timeout_ms)
{
    int rc = check_mbox(mb, DECK_MBOX_CREATED, "deck_mbox_retrv");
    if (rc) return rc;
    if (!msg || (!msg->buf && msg->size)) return deck_fail(DECK_EINVAL, "deck_mbox_retrv: null message");
    const deck_transport_t *tp = deck_core_transport();
    if (tp->retrv) return tp->retrv(mb->index, mb->impl, msg, timeout_ms);
    return deck_entry_take(mb->impl, msg, timeout_ms);
}

int deck_mbox_retrv_apply(deck_mbox_t *mb, deck_msg_t *scratch, int timeout_ms, deck_msg_fn fn, void *arg)
{
    if (!fn) return deck_fail(DECK_EINVAL, "deck_mbox_retrv_apply: no function");
    int rc = check_mbox(mb, DECK_MBOX_CREATED, "deck_mbox_retrv_apply");
    if (rc) return rc;
    if (!scratch || (!scratch->buf && scratch->size)) return deck_fail(DECK_EINVAL, "deck_mbox_retrv_apply: null message");
    const deck_transport_t *tp = deck_core_transport();
    if (tp->retrv_apply) return tp->retrv_apply(mb->index, mb->impl, scratch, timeout_ms, fn, arg);
    return deck_entry_take_apply(mb->impl, scratch, timeout_ms, fn, arg);
}

int deck_mbox_retrv(deck_mbox_t *mb, deck_msg_t *msg)
{
    return deck_mbox_retrv_timed(mb, msg, -1);
}

int deck_mbox_watch(deck_mbox_t *mb, int node)
{
    int rc = check_mbox(mb, DECK_MBOX_CREATED, "deck_mbox_watch");
    if (rc) return rc;
    if ((node < 0 && node != DECK_NOBODY) || node == deck_core_self())
        return deck_fail(DECK_EINVAL, "deck_mbox_watch: %d is not another process", node);
    deck_entry_watch(mb->impl, node);
    return DECK_OK;
}

int deck_mbox_post_hint(deck_mbox_t *mb, unsigned long *bytes)
{
    int rc = check_mbox(mb, DECK_MBOX_CLONED, "deck_mbox_post_hint");
    if (rc) return rc;
    if (!bytes) return deck_fail(DECK_EINVAL, "deck_mbox_post_hint: bytes is NULL");
    const deck_transport_t *tp = deck_core_transport();
    *bytes = tp->post_hint(mb->node);
    return DECK_OK;
}

int deck_mbox_limit(deck_mbox_t *mb, unsigned long max_len)
{
    int rc = check_mbox(mb, DECK_MBOX_CREATED, "deck_mbox_limit");
    if (rc) return rc;
    if (max_len > deck_msg_max())
        return deck_fail(DECK_EINVAL, "deck_mbox_limit: %lu is above DECK_MSG_MAX (%lu)", max_len, deck_msg_max());
    deck_entry_limit(mb->impl, max_len);
    return DECK_OK;
}

int deck_mbox_destroy(deck_mbox_t *mb)
{
    if (!mb) return deck_fail(DECK_EINVAL, "deck_mbox_destroy: null mailbox");
    if (mb->kind == DECK_MBOX_CREATED) {
        int rc = deck_core_require_init("deck_mbox_destroy");
        if (rc) return rc;
        const deck_transport_t *tp = deck_core_transport();
        if (tp->mbox_destroyed) tp->mbox_destroyed(mb->index);
        deck_table_remove(mb->impl);
    } else if (mb->kind != DECK_MBOX_CLONED) {
        return deck_fail(DECK_ESTATE, "deck_mbox_destroy: mailbox was never created or cloned");
    }
    mb->kind = DECK_MBOX_NONE;
    mb->impl = NULL;
    return DECK_OK;
}

size_t deck_sizeof_mbox(void) { return sizeof(deck_mbox_t); }
