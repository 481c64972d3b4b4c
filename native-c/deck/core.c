/*
 * Process-wide DECK state: which transport, this process's id, static or dynamic run.
 * deck_init/deck_done are not thread-safe against other DECK calls (as in DECK): call them
 * from one thread while nothing else uses the library. deck_done returns the library to its
 * initial state, so a process may initialise it again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "auth.h"
#include "seg.h"
#include "transport.h"

enum { MODE_NONE, MODE_STATIC, MODE_DYNAMIC };

static struct {
    int mode;
    int self;
    int nnodes;                       /* static runs only */
    const deck_transport_t *tp;
    char nodes_file[4096];            /* static runs only */
    int post_timeout_ms;              /* DECK_POST_TIMEOUT_MS, read at init (0: not running) */
} core;

int deck_env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return (*end || x < 0 || x > 0x7fffffff) ? dflt : (int)x;
}

int deck_env_range(const char *name, long long dflt, long long min, long long max, long long *out)
{
    const char *v = getenv(name);
    if (!v || !*v) { *out = dflt; return DECK_OK; }
    char *e;
    errno = 0;
    long long x = strtoll(v, &e, 10);
    if (*e || errno || x < min || x > max)
        return deck_fail(DECK_ECONFIG, "deck_init: %s='%s' is not a number in %lld..%lld", name, v, min, max);
    *out = x;
    return DECK_OK;
}

int deck_spin_us(long long *out) { return deck_env_range("DECK_SPIN_US", 30, -1, 1000000, out); }

/* DECK_TRANSPORT: static runs take tcp (also for auto, and when unset) or sci; dynamic runs
 * take auto (also when unset) or tcp: sci needs a run of known processes, auto reaches the
 * peers on this host through it. */
static int pick_transport(int dynamic, const deck_transport_t **tp)
{
    const char *name = getenv("DECK_TRANSPORT");
    int unset_or_auto = !name || !*name || strcmp(name, deck_auto_transport.name) == 0;
    if (unset_or_auto) {
        *tp = dynamic ? &deck_auto_transport : &deck_tcp_transport;
        return DECK_OK;
    }
    if (strcmp(name, deck_tcp_transport.name) == 0) {
        *tp = &deck_tcp_transport;
        return DECK_OK;
    }
    if (strcmp(name, deck_sci_transport.name) == 0) {
        if (!dynamic) {
            *tp = &deck_sci_transport;
            return DECK_OK;
        }
        return deck_fail(DECK_ECONFIG, "DECK_TRANSPORT=sci needs a static run (deck_init with a nodes file); a dynamic "
                         "run uses auto, which takes sci for the peers on this host");
    }
    return deck_fail(DECK_ECONFIG, "DECK_TRANSPORT='%s' is not a transport of this libdeck (known: tcp, sci, auto)", name);
}

int deck_is_initialized(void) { return core.mode != MODE_NONE; }

int deck_core_require_init(const char *fn)
{
    return core.mode != MODE_NONE ? DECK_OK : deck_fail(DECK_ESTATE, "%s: DECK is not initialised", fn);
}

int deck_core_self(void) { return core.self; }

int deck_core_peer_gone(int node) { return core.tp && core.tp->peer_gone(node); }

int deck_reclaim(void)
{
    const deck_transport_t *tp = core.tp;
    return tp && tp->msg_alloc ? deck_seg_reclaim() : 0;   /* transports with segments (sci) */
}

/* Read once per run: a post that waits for its receiver asked for it each time, and getenv
 * walks the whole environment (with its strlen, 0.8% of the samples of a 1 MiB ping-pong over sci). */
static int read_post_timeout_ms(void) { return deck_env_int("DECK_POST_TIMEOUT_MS", 10000); }

int deck_post_timeout_ms(void) { return core.post_timeout_ms ? core.post_timeout_ms : read_post_timeout_ms(); }

int deck_peer_gone(int id) { return id != core.self && deck_core_peer_gone(id); }

const deck_transport_t *deck_core_transport(void) { return core.tp; }

int deck_core_read_waiting(const struct timespec *deadline)
{
    return core.tp && core.tp->read_waiting ? core.tp->read_waiting(deadline) : 0;
}

void deck_core_wake_reading(void)
{
    if (core.tp && core.tp->wake_reading) core.tp->wake_reading();
}

int deck_core_deliver(int index, deck_qmsg_t *m)
{
    int rc = deck_table_deliver(index, m);
    if (!rc && core.tp->delivered) core.tp->delivered(index);
    return rc;
}

int deck_core_post_self(int index, const struct iovec *iov, int cnt, size_t len)
{
    deck_qmsg_t *q = deck_qmsg_alloc(len, core.self);
    if (!q) return deck_fail(DECK_ENOMEM, "deck_mbox_post: cannot queue %zu bytes", len);
    deck_gather_copy(q->data, iov, cnt, 0, len);
    return deck_core_deliver(index, q);
}

const char *deck_core_nodes_file(void) { return core.nodes_file; }

int deck_init_static(int id, int nnodes, const char *nodes_file)
{
    if (core.mode != MODE_NONE) return deck_fail(DECK_ESTATE, "deck_init: DECK is already initialised");
    if (nnodes < 1 || nnodes > DECK_MAX_NODES || id < 0 || id >= nnodes)
        return deck_fail(DECK_ECONFIG, "deck_init: id %d / %d nodes is not a valid run (1..%d nodes)",
                         id, nnodes, DECK_MAX_NODES);
    if (!nodes_file) return deck_fail(DECK_ECONFIG, "deck_init: no nodes file given");
    const deck_transport_t *tp;
    int rc = pick_transport(0, &tp);
    if (rc) return rc;
    deck_node_addr_t *nodes;
    if ((rc = deck_auth_load_run_secret())) return rc;
    if ((rc = deck_nodes_read(nodes_file, nnodes, &nodes))) { deck_auth_clear(); return rc; }
    deck_table_init();
    snprintf(core.nodes_file, sizeof core.nodes_file, "%s", nodes_file);
    core.self = id;
    core.nnodes = nnodes;
    core.tp = tp;
    core.post_timeout_ms = read_post_timeout_ms();
    core.mode = MODE_STATIC;      /* before init: reader threads may ask deck_core_self() */
    rc = tp->init_static(id, nnodes, nodes);
    free(nodes);
    if (rc) { memset(&core, 0, sizeof core); deck_table_done(); deck_auth_clear(); }
    return rc;
}

int deck_init_dynamic(void)
{
    if (core.mode != MODE_NONE) return deck_fail(DECK_ESTATE, "deck_init_dynamic: DECK is already initialised");
    const deck_transport_t *tp;
    int rc = pick_transport(1, &tp);
    if (rc) return rc;
    /* Ids above 65535 never collide with the ids of a static run; 31 random bits make two
     * dynamic processes of one job colliding negligible. */
    uint32_t r;
    do {
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            return deck_fail_errno(DECK_EIO, errno, "deck_init_dynamic: getrandom");
        r &= 0x7fffffff;
    } while (r <= 65535);
    deck_table_init();
    core.self = (int)r;
    core.tp = tp;
    core.post_timeout_ms = read_post_timeout_ms();
    core.mode = MODE_DYNAMIC;
    if ((rc = tp->init_dynamic(core.self))) { memset(&core, 0, sizeof core); deck_table_done(); }
    return rc;
}

/* Takes "-name value" out of argv, if there; returns the value or NULL. */
static const char *take_option(int *argc, char **argv, const char *name)
{
    for (int i = 1; i + 1 < *argc; i++) {
        if (strcmp(argv[i], name) != 0) continue;
        const char *v = argv[i + 1];
        memmove(&argv[i], &argv[i + 2], (size_t)(*argc - i - 1) * sizeof *argv);  /* keeps argv[argc] NULL */
        *argc -= 2;
        return v;
    }
    return NULL;
}

static int parse_count(const char *what, const char *v, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (!*v || *end || x < 0 || x > DECK_MAX_NODES)
        return deck_fail(DECK_ECONFIG, "deck_init: %s '%s' is not a number in 0..%d", what, v, DECK_MAX_NODES);
    *out = (int)x;
    return DECK_OK;
}

/* Options on the command line win over the environment that deckrun sets. */
int deck_init(int *argc, char ***argv)
{
    const char *id = NULL, *nodes = NULL, *file = NULL;
    if (core.mode != MODE_NONE) return deck_fail(DECK_ESTATE, "deck_init: DECK is already initialised");
    if (argc && argv && *argv) {
        id = take_option(argc, *argv, "-deck_id");
        nodes = take_option(argc, *argv, "-deck_nodes");
        file = take_option(argc, *argv, "-deck_file");
    }
    if (!id) id = getenv("DECK_ID");
    if (!nodes) nodes = getenv("DECK_NODES");
    if (!file) file = getenv("DECK_FILE");
    if (!id || !nodes)
        return deck_fail(DECK_ECONFIG, "deck_init: no DECK_ID/DECK_NODES in the environment and no "
                         "-deck_id/-deck_nodes options (start the program with deckrun)");
    int nid, nn, rc;
    if ((rc = parse_count("DECK_ID", id, &nid)) || (rc = parse_count("DECK_NODES", nodes, &nn))) return rc;
    return deck_init_static(nid, nn, file ? file : "nodes");
}

int deck_done(void)
{
    if (core.mode == MODE_NONE) return deck_fail(DECK_ESTATE, "deck_done: DECK is not initialised");
    core.tp->done();
    deck_table_done();
    deck_auth_clear();
    memset(&core, 0, sizeof core);
    return DECK_OK;
}

int deck_node(void) { return core.mode != MODE_NONE ? core.self : deck_core_require_init("deck_node"); }

int deck_numnodes(void)
{
    if (core.mode == MODE_NONE) return deck_core_require_init("deck_numnodes");
    return core.mode == MODE_STATIC ? core.nnodes : 1 + core.tp->peer_count();
}

int deck_barrier(void)
{
    if (core.mode != MODE_STATIC)
        return deck_fail(DECK_ESTATE, "deck_barrier: only a static run (deck_init) has a barrier");
    return core.tp->barrier();
}

int deck_contact(char *buf, size_t len)
{
    int rc = deck_core_require_init("deck_contact");
    if (rc) return rc;
    if (!buf || !len) return deck_fail(DECK_EINVAL, "deck_contact: no buffer");
    return core.tp->contact(buf, len);
}

int deck_contact_for(const char *peer_contact, const char *local_addr, char *buf, size_t len)
{
    if (core.mode != MODE_DYNAMIC)
        return deck_fail(DECK_ESTATE, "deck_contact_for: only a dynamic run (deck_init_dynamic) has contacts");
    if (!peer_contact || !local_addr || !buf || !len) return deck_fail(DECK_EINVAL, "deck_contact_for: null argument");
    /* A client's contact is deck_contact's: "tcp" or "shm=...". One that names a port or a host
     * would have this process connect wherever the client says, not to the client. */
    for (const char *part = peer_contact; part; part = strchr(part, ',') ? strchr(part, ',') + 1 : NULL)
        if (strncmp(part, "port=", 5) == 0 || strncmp(part, "host=", 5) == 0)
            return deck_fail(DECK_EINVAL, "deck_contact_for: the peer's contact '%s' names a port or a host, which only "
                             "a server's does", peer_contact);
    return core.tp->contact_for ? core.tp->contact_for(peer_contact, local_addr, buf, len) : core.tp->contact(buf, len);
}

int deck_add_peer(int id, const char *host, const char *contact, const unsigned char key[DECK_KEY_BYTES])
{
    if (core.mode != MODE_DYNAMIC)
        return deck_fail(DECK_ESTATE, "deck_add_peer: only a dynamic run (deck_init_dynamic) adds peers");
    if (!host || !contact || !key || id < 0 || id == core.self)
        return deck_fail(DECK_EINVAL, "deck_add_peer: bad peer %d (this process is %d)", id, core.self);
    return core.tp->add_peer(id, host, contact, key);
}

int deck_peer_key(int id, unsigned char key[DECK_KEY_BYTES])
{
    int rc = deck_core_require_init("deck_peer_key");
    if (rc) return rc;
    if (!key) return deck_fail(DECK_EINVAL, "deck_peer_key: no buffer");
    const uint8_t *k = core.mode == MODE_STATIC && id >= 0 && id < core.nnodes ? deck_auth_run_key() : NULL;
    if (k) {
        memcpy(key, k, DECK_KEY_BYTES);
        return DECK_OK;
    }
    if (core.mode == MODE_DYNAMIC && id != core.self && core.tp->peer_key && core.tp->peer_key(id, key) == DECK_OK)
        return DECK_OK;
    return deck_fail(DECK_ENOTFOUND, "deck_peer_key: node %d was never introduced to this process", id);
}

int deck_peer_describe(int id, char *buf, size_t len)
{
    int rc = deck_core_require_init("deck_peer_describe");
    if (rc) return rc;
    if (!buf || !len) return deck_fail(DECK_EINVAL, "deck_peer_describe: no buffer");
    if (core.tp->describe_peer) return core.tp->describe_peer(id, buf, len);
    snprintf(buf, len, "%s", core.tp->name);
    return DECK_OK;
}
