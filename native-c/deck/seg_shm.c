/*
 * The POSIX shared-memory backend of the segment layer (seg.h): one host, segments are files of
 * the tmpfs /dev/shm, in this user's directory /dev/shm/deck-<uid> (mode 0700), named
 * "<owner's token>-<node>-<id>", mode 0600, mmap'ed; a dynamic process's claim of its node
 * number is "dyn-<node>" there, a small segment holding its token.
 *
 * The first 64 bytes of every object are its owner record {magic, available, pid, start time,
 * size}; the user area follows, so it is 64-byte aligned like the mapping. A segment whose
 * owner has died (pid gone, a zombie, or the pid reused by a process with another start time)
 * is unlinked by the next deck_seg_reclaim(), i.e. at the next deck_init or deck_done of any
 * run of this user; a connect never accepts such a left-over as the live segment of the same
 * name. The directory is removed with its last segment.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "auth.h"
#include "internal.h"
#include "seg.h"

#define SEG_MAGIC 0x4445434b53454731ull      /* "DECKSEG1" */
#define SEG_ROOT "/dev/shm"
#define CLAIM_ID (-1)                        /* a dynamic node's claim file, "dyn-<node>" */
#define TOKEN_LABEL "DECK sci segment names"
#define TOKEN_HEX 24                         /* characters of a token made here */
#define SEG_RETRY_MS 2
#define SEG_UNFINISHED_GRACE_S 60            /* a record never completed: creator died in create */
/* Room left in /dev/shm beyond the message segment, for mailbox segments: a write to a page
 * tmpfs cannot supply is a SIGBUS, so a dynamic start that would come close uses tcp instead. */
#define SEG_HEADROOM (16 << 20)

typedef struct seg_owner {
    uint64_t magic;
    uint32_t available;
    int32_t  pid;
    uint64_t start;                          /* the owner's start time (clock ticks since boot) */
    uint64_t size;                           /* bytes in the user area */
    uint8_t  pad[DECK_SEG_LINE - 32];
} seg_owner_t;

_Static_assert(sizeof(seg_owner_t) == DECK_SEG_LINE, "the owner record is one line");
_Static_assert(sizeof(deck_bell_t) == DECK_SEG_LINE, "a doorbell is one line");

static struct {
    int      self;
    char     token[DECK_SEG_TOKEN_MAX];
    char     dir[64];                        /* SEG_ROOT/deck-<uid> */
    pid_t    pid;
    uint64_t start;
} me;

/* Start time and state of a process from /proc/<pid>/stat; 0 when it does not exist. */
static int proc_info(pid_t pid, uint64_t *start, char *state)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');             /* the command name may hold spaces */
    if (!p || p[1] != ' ') return 0;
    *state = p[2];
    p += 2;
    for (int field = 3; field < 22; field++) {   /* starttime is field 22 */
        p = strchr(p, ' ');
        if (!p) return 0;
        p++;
    }
    *start = strtoull(p, NULL, 10);
    return 1;
}

static int owner_alive(const seg_owner_t *o)
{
    uint64_t start;
    char state;
    if (o->pid <= 0 || !proc_info(o->pid, &start, &state)) return 0;
    return start == o->start && state != 'Z' && state != 'X';
}

int deck_seg_token_valid(const char *token)
{
    size_t n = strlen(token);
    if (n == 0 || n >= DECK_SEG_TOKEN_MAX) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((token[i] >= '0' && token[i] <= '9') || (token[i] >= 'a' && token[i] <= 'z') ||
              (token[i] >= 'A' && token[i] <= 'Z')))
            return 0;
    return 1;
}

static void hex(const uint8_t *bytes, char *out, size_t chars)
{
    for (size_t i = 0; i < chars; i++) out[i] = "0123456789abcdef"[bytes[i / 2] >> (i % 2 ? 0 : 4) & 0xf];
    out[chars] = '\0';
}

int deck_seg_run_token(char *token, size_t len)
{
    const char *env = getenv("DECK_RUN_KEY");
    if (env && *env) {
        if (!deck_seg_token_valid(env) || strlen(env) > 24 || strlen(env) >= len)
            return deck_fail(DECK_ECONFIG, "deck_init: DECK_RUN_KEY='%s' must be 1..24 letters or digits", env);
        strcpy(token, env);
        return DECK_OK;
    }
    const uint8_t *key = deck_auth_run_key();
    if (!key) return deck_fail(DECK_ESTATE, "deck_init: the run secret was not loaded");
    uint8_t mac[DECK_MAC_BYTES];
    deck_auth_mac(key, TOKEN_LABEL, mac, 0);
    if (len <= TOKEN_HEX) return deck_fail(DECK_EINVAL, "deck_seg_run_token: buffer too small");
    hex(mac, token, TOKEN_HEX);
    return DECK_OK;
}

int deck_seg_random_token(char *token, size_t len)
{
    uint8_t bytes[TOKEN_HEX / 2];
    int rc = deck_auth_random(bytes, sizeof bytes);
    if (rc) return rc;
    if (len <= TOKEN_HEX) return deck_fail(DECK_EINVAL, "deck_seg_random_token: buffer too small");
    hex(bytes, token, TOKEN_HEX);
    return DECK_OK;
}

/* This user's directory of segments: made 0700 if it is not there; refused, naming it, when it
 * is not a directory of this user's that nobody else may enter (another user made it first). */
static int private_dir(void)
{
    snprintf(me.dir, sizeof me.dir, "%s/deck-%u", SEG_ROOT, (unsigned)getuid());
    if (mkdir(me.dir, 0700) != 0 && errno != EEXIST)
        return deck_fail_errno(DECK_EIO, errno, "deck: cannot make the segment directory %s", me.dir);
    struct stat st;
    if (lstat(me.dir, &st) != 0) return deck_fail_errno(DECK_EIO, errno, "deck: %s", me.dir);
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
        return deck_fail(DECK_EPROTO, "deck: %s is not this user's private segment directory (%s, owner uid %u, mode "
                         "%03o): shared memory is not used until it is removed", me.dir,
                         S_ISDIR(st.st_mode) ? "a directory" : "not a directory", (unsigned)st.st_uid,
                         (unsigned)(st.st_mode & 0777));
    return DECK_OK;
}

/* At exit, when deck_done did not run (below, beside deck_seg_reclaim). */
static void unlink_own_at_exit(void);

int deck_seg_open(int self, const char *token)
{
    static int at_exit_registered;
    if (!at_exit_registered && atexit(unlink_own_at_exit) == 0) at_exit_registered = 1;
    if (!deck_seg_token_valid(token)) return deck_fail(DECK_EINVAL, "deck: '%s' is not a segment token", token);
    int rc = private_dir();
    if (rc) return rc;
    char state;
    me.self = self;
    snprintf(me.token, sizeof me.token, "%s", token);
    me.pid = getpid();
    if (!proc_info(me.pid, &me.start, &state))
        return deck_fail(DECK_EIO, "deck_init: cannot read /proc/%d/stat for the segment owner record", (int)me.pid);
    deck_seg_reclaim();
    return DECK_OK;
}

/* What dead processes left goes, and the directory with the last segment: it stays only while
 * somebody's segments are in it (rmdir refuses otherwise). */
static void tidy_dir(void)
{
    deck_seg_reclaim();
    rmdir(me.dir);
}

void deck_seg_close(void)
{
    if (me.dir[0]) tidy_dir();
    memset(&me, 0, sizeof me);
}

static void seg_name(deck_seg_t *s, const char *token, int node, int id)
{
    s->node = node;
    s->id = id;
    if (id == CLAIM_ID) snprintf(s->name, sizeof s->name, "%s/dyn-%d", me.dir, node);
    else snprintf(s->name, sizeof s->name, "%s/%s-%d-%d", me.dir, token, node, id);
}

static int create_named(deck_seg_t *s, size_t size)
{
    s->size = deck_seg_roundup(size);
    s->fd = open(s->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (s->fd < 0 && errno == ENOENT && private_dir() == DECK_OK)   /* another process's tidy_dir */
        s->fd = open(s->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (s->fd < 0)
        return deck_fail_errno(errno == EEXIST ? DECK_EEXIST : DECK_EIO, errno,
                               "deck_init: cannot create shared segment %s (another run with the same key?)", s->name);
    fchmod(s->fd, 0600);                    /* the umask must not widen or narrow it */
    s->created = 1;
    return DECK_OK;
}

int deck_seg_create(deck_seg_t *s, int id, size_t size)
{
    memset(s, 0, sizeof *s);
    seg_name(s, me.token, me.self, id);
    return create_named(s, size);
}

int deck_seg_room(size_t size)
{
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) != 0)
        return deck_fail_errno(DECK_ENOMEM, errno, "deck: cannot look at /dev/shm");
    unsigned long long have = (unsigned long long)fs.f_bavail * fs.f_frsize, need = size + SEG_HEADROOM;
    if (have >= need) return DECK_OK;
    return deck_fail(DECK_ENOMEM, "deck: /dev/shm has %llu MiB free, shared segments need %llu MiB (DECK_MSEG_SIZE + "
                     "%d MiB)", have >> 20, need >> 20, SEG_HEADROOM >> 20);
}

/* What a claim file's user area holds: the claiming process's token. */
typedef struct seg_claim {
    char    token[DECK_SEG_TOKEN_MAX];
    uint8_t pad[DECK_SEG_LINE - DECK_SEG_TOKEN_MAX];
} seg_claim_t;

_Static_assert(sizeof(seg_claim_t) == DECK_SEG_LINE, "a claim is one line");

int deck_seg_claim(deck_seg_t *claim, int nodes, int *node)
{
    for (int n = 0; n < nodes; n++) {
        memset(claim, 0, sizeof *claim);
        seg_name(claim, NULL, n, CLAIM_ID);
        int rc = create_named(claim, sizeof(seg_claim_t));
        if (rc == DECK_EEXIST) continue;
        if (rc) return rc;
        me.self = n;
        if ((rc = deck_seg_prepare(claim)) || (rc = deck_seg_map_local(claim))) {
            deck_seg_remove(claim);
            return rc;
        }
        snprintf(((seg_claim_t *)claim->addr)->token, DECK_SEG_TOKEN_MAX, "%s", me.token);
        *node = n;
        return deck_seg_set_available(claim);
    }
    return deck_fail(DECK_ENOTFOUND, "deck: all %d node numbers are taken on this host", nodes);
}

int deck_seg_prepare(deck_seg_t *s)
{
    seg_owner_t o = { .magic = SEG_MAGIC, .pid = me.pid, .start = me.start, .size = s->size };
    if (ftruncate(s->fd, (off_t)(sizeof o + s->size)) != 0)
        return deck_fail_errno(DECK_ENOMEM, errno, "deck_init: cannot size segment %s to %zu bytes", s->name, s->size);
    if (pwrite(s->fd, &o, sizeof o, 0) != (ssize_t)sizeof o)
        return deck_fail_errno(DECK_EIO, errno, "deck_init: cannot write the owner record of %s", s->name);
    return DECK_OK;
}

static int map_fd(deck_seg_t *s)
{
    void *p = mmap(NULL, sizeof(seg_owner_t) + s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    int err = errno;
    close(s->fd);                            /* the mapping keeps the object; no fd is kept */
    s->fd = -1;
    if (p == MAP_FAILED) return deck_fail_errno(DECK_ENOMEM, err, "deck: cannot map segment %s", s->name);
    s->base = p;
    s->addr = (char *)p + sizeof(seg_owner_t);
    return DECK_OK;
}

int deck_seg_map_local(deck_seg_t *s) { return map_fd(s); }

int deck_seg_set_available(deck_seg_t *s)
{
    seg_owner_t *o = s->base;
    __atomic_store_n(&o->available, 1, __ATOMIC_RELEASE);
    return DECK_OK;
}

int deck_seg_export(deck_seg_t *s, int id, size_t size)
{
    int rc = deck_seg_create(s, id, size);
    if (rc) return rc;
    if ((rc = deck_seg_prepare(s)) || (rc = deck_seg_map_local(s))) {
        if (s->fd >= 0) close(s->fd);
        unlink(s->name);
        return rc;
    }
    return deck_seg_set_available(s);
}

/* One try: 1 with s->fd open on an available segment of a live owner; -1 when the segment is
 * there but its owner has died (a left-over, or a peer that died after setting it up); -2 when
 * it is not a file of this user's that only this user may use; 0 when it is not (yet) there or
 * not finished. */
static int try_open(deck_seg_t *s)
{
    int fd = open(s->name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return 0;
    seg_owner_t o;
    struct stat st;
    int got = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
        close(fd);
        return -2;                           /* not a segment of this user's: never mapped */
    }
    if (pread(fd, &o, sizeof o, 0) == (ssize_t)sizeof o && o.magic == SEG_MAGIC) {
        /* The size is the owner's word: it must fit in the file (no wrap), else the mapping would
         * be smaller than what its users take it for. */
        int fits = (uint64_t)st.st_size >= sizeof o && o.size <= (uint64_t)st.st_size - sizeof o;
        if (!owner_alive(&o)) got = -1;
        else if (o.available && fits) got = 1;
    }
    if (got == 1) {
        s->fd = fd;
        s->size = o.size;
    } else {
        close(fd);
    }
    return got;
}

int deck_seg_connect(deck_seg_t *s, const char *token, int node, int id, int timeout_ms)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    if (id != CLAIM_ID && !deck_seg_token_valid(token))
        return deck_fail(DECK_EPROTO, "deck: node %d's segments are named with an invalid token", node);
    seg_name(s, token, node, id);
    struct timespec deadline;
    deck_deadline(&deadline, timeout_ms);
    int got;
    while ((got = try_open(s)) == 0) {
        if (deck_deadline_passed(&deadline))
            return deck_fail(DECK_ENOTFOUND, "deck: shared segment %s of node %d not available after %d ms",
                             s->name, node, timeout_ms);
        struct timespec pause = { 0, SEG_RETRY_MS * 1000000L };   /* the owner is still starting */
        nanosleep(&pause, NULL);
    }
    if (got == -2)
        return deck_fail(DECK_EPROTO, "deck: shared segment %s is not this user's private segment (owner or mode): "
                         "refused", s->name);
    if (got < 0) return deck_fail(DECK_EPEER, "deck: shared segment %s: its owner, node %d, has died", s->name, node);
    return DECK_OK;
}

int deck_seg_claim_token(int node, char *token, size_t len)
{
    deck_seg_t claim;
    int rc = deck_seg_attach(&claim, NULL, node, CLAIM_ID, 0);
    if (rc) return rc;
    seg_claim_t copy;
    memcpy(&copy, claim.addr, sizeof copy);
    deck_seg_disconnect(&claim);
    copy.token[DECK_SEG_TOKEN_MAX - 1] = '\0';
    if (!deck_seg_token_valid(copy.token) || strlen(copy.token) >= len)
        return deck_fail(DECK_EPROTO, "deck: the claim of node %d (%s/dyn-%d) holds no valid token", node, me.dir, node);
    strcpy(token, copy.token);
    return DECK_OK;
}

int deck_seg_map_remote(deck_seg_t *s) { return map_fd(s); }

int deck_seg_attach(deck_seg_t *s, const char *token, int node, int id, int timeout_ms)
{
    int rc = deck_seg_connect(s, token, node, id, timeout_ms);
    return rc ? rc : deck_seg_map_remote(s);
}

void deck_seg_flush(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }

int deck_seg_owner_alive(const deck_seg_t *s) { return s->base && owner_alive(s->base); }

void deck_seg_disconnect(deck_seg_t *s)
{
    if (s->base) munmap(s->base, sizeof(seg_owner_t) + s->size);
    s->base = s->addr = NULL;
}

void deck_seg_remove(deck_seg_t *s)
{
    deck_seg_disconnect(s);
    if (s->created && s->fd >= 0) close(s->fd);      /* created but never mapped */
    if (s->created) unlink(s->name);
    s->created = 0;
}

/* Whether to unlink one of this user's segments, given its owner record (NULL while its
 * creator has not written one yet). */
typedef int (*seg_doomed_fn)(const seg_owner_t *o, const struct stat *st);

/* Unlinks every segment in this user's directory that `doomed` picks; returns how many. */
static int unlink_segments(seg_doomed_fn doomed)
{
    int count = 0;
    DIR *d = me.dir[0] ? opendir(me.dir) : NULL;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[sizeof me.dir + 256];
        snprintf(path, sizeof path, "%s/%s", me.dir, e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) continue;
        seg_owner_t o;
        struct stat st;
        int doom = 0;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid()) {
            int has_record = pread(fd, &o, sizeof o, 0) == (ssize_t)sizeof o && o.magic == SEG_MAGIC;
            doom = doomed(has_record ? &o : NULL, &st);
        }
        close(fd);
        count += doom && unlink(path) == 0;
    }
    closedir(d);
    return count;
}

/* A left-over: its owner has died, or never finished creating it. */
static int left_over(const seg_owner_t *o, const struct stat *st)
{
    return o ? !owner_alive(o) : time(NULL) - st->st_mtime > SEG_UNFINISHED_GRACE_S;
}

static int owned_by_this_process(const seg_owner_t *o, const struct stat *st)
{
    return o && o->pid == me.pid && o->start == me.start;
}

int deck_seg_reclaim(void) { return unlink_segments(left_over); }

/* A JVM may end with sockets still open, so deck_done never runs: unlink every segment this
 * process owns. Only names go; mappings stay valid for threads still running, and peers see
 * the owner gone as they would after a crash. */
static void unlink_own_at_exit(void)
{
    if (me.pid && me.pid == getpid()) {                      /* not closed, not a forked child */
        unlink_segments(owned_by_this_process);
        tidy_dir();
    }
}

/* ---- doorbells: a futex on a shared word (not FUTEX_PRIVATE: the waker is another process) ---- */

/* Futex bit sets: bit k for the sleepers of key k, the top bit for plain waiters. A plain
 * wake (FUTEX_WAKE) matches every bit, so it wakes keyed sleepers too. */
#define PLAIN_BIT (1u << 31)
_Static_assert(DECK_BELL_KEYS < 31, "a key's bit is below the plain waiters' bit");

void deck_bell_arm(deck_bell_t *b)    { __atomic_fetch_add(&b->waiters, 1, __ATOMIC_SEQ_CST); }
void deck_bell_disarm(deck_bell_t *b) { __atomic_fetch_sub(&b->waiters, 1, __ATOMIC_SEQ_CST); }
uint32_t deck_bell_read(deck_bell_t *b) { return __atomic_load_n(&b->bell, __ATOMIC_SEQ_CST); }

/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time, which deck_deadline gives. */
static void wait_bits(deck_bell_t *b, uint32_t seen, int timeout_ms, uint32_t bits)
{
    struct timespec until;
    deck_deadline(&until, timeout_ms);
    syscall(SYS_futex, &b->bell, FUTEX_WAIT_BITSET, seen, &until, NULL, bits);
}

void deck_bell_wait(deck_bell_t *b, uint32_t seen, int timeout_ms) { wait_bits(b, seen, timeout_ms, PLAIN_BIT); }

/* The writer's CPU, for the waiters' yield hint; written only when it changes: the line stays
 * shared while the writer keeps its CPU. */
static void note_cpu(deck_bell_t *b)
{
    int cpu = sched_getcpu();
    if (cpu >= 0 && __atomic_load_n(&b->ringer_cpu, __ATOMIC_RELAXED) != (uint32_t)cpu + 1)
        __atomic_store_n(&b->ringer_cpu, (uint32_t)cpu + 1, __ATOMIC_RELAXED);
}

/* Bumps the bell after the writer's stores; the waker's CPU is noted for the yield hint. */
static void bump(deck_bell_t *b)
{
    note_cpu(b);
    __atomic_fetch_add(&b->bell, 1, __ATOMIC_SEQ_CST);
}

void deck_bell_ring(deck_bell_t *b)
{
    /* seq_cst on both sides (Dekker): either the waiter sees the new bell value, or this load
     * sees it armed and wakes it. */
    bump(b);
    if (__atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST) || __atomic_load_n(&b->keyed, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &b->bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void deck_bell_ring_armed(deck_bell_t *b)
{
    note_cpu(b);
    if (__atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST)) {
        __atomic_fetch_add(&b->bell, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, &b->bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
}

void deck_bell_ring_plain(deck_bell_t *b)
{
    bump(b);
    if (__atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &b->bell, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, PLAIN_BIT);
}

void deck_bell_key_arm(deck_bell_t *b, unsigned key)
{
    __atomic_fetch_add(&b->key_sleepers[key % DECK_BELL_KEYS], 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&b->keyed, 1, __ATOMIC_SEQ_CST);
}

void deck_bell_key_disarm(deck_bell_t *b, unsigned key)
{
    __atomic_fetch_sub(&b->keyed, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_sub(&b->key_sleepers[key % DECK_BELL_KEYS], 1, __ATOMIC_SEQ_CST);
}

void deck_bell_key_wait(deck_bell_t *b, unsigned key, uint32_t seen, int timeout_ms)
{
    wait_bits(b, seen, timeout_ms, 1u << (key % DECK_BELL_KEYS));
}

void deck_bell_key_polling(deck_bell_t *b, uint32_t mark)
{
    if (__atomic_load_n(&b->key_poller, __ATOMIC_RELAXED) != mark)   /* keep the line shared */
        __atomic_store_n(&b->key_poller, mark, __ATOMIC_SEQ_CST);
}

void deck_bell_ring_key_only(deck_bell_t *b, unsigned key)
{
    key %= DECK_BELL_KEYS;
    /* Not bump(): the hand-on's thread has done its part, so a poller on its CPU need not yield
     * to it (it did: every reader that dispatched its own message then polled with sched_yield,
     * 0.53 -> 1.09 us one-way). */
    __atomic_fetch_add(&b->bell, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&b->key_sleepers[key], __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &b->bell, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, 1u << key);
}

void deck_bell_ring_key(deck_bell_t *b, unsigned key)
{
    key %= DECK_BELL_KEYS;
    bump(b);
    /* The same Dekker pairing as deck_bell_ring: a sleeper arms, then looks at the bell. A
     * poller that looks for key takes the message when it looks next (before it sleeps). */
    if (__atomic_load_n(&b->key_sleepers[key], __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &b->bell, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, 1u << key);
    else if (__atomic_load_n(&b->key_poller, __ATOMIC_SEQ_CST) != key + 1
             && __atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &b->bell, FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, PLAIN_BIT);
}
