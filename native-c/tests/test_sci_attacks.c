/*
 * Attacks on the sci transport's shared memory (shared/spec/security.md, "shared memory").
 *
 * Where segments live: this user's directory /dev/shm/deck-<uid>, 0700. A directory there
 * that another user made, that others may enter, or that is a symbolic link is refused with an
 * error naming it, and nothing is mapped. A segment planted under a peer's name that is not
 * this user's 0600 file (another owner, a wider mode, a symbolic link) is refused, never mapped.
 * These run in a private mount namespace with its own tmpfs on /dev/shm (root only; skipped,
 * saying so, otherwise), so the planted files disturb nobody.
 *
 * Fail loudly: a process of this user that overwrites a receiver's mailbox segment with 0xFF
 * makes that mailbox's retrieves fail with DECK_EPROTO naming the segment, and one that
 * overwrites a sender's control segment (its flow lines) makes that sender's posts fail with
 * DECK_EPROTO naming it: neither crashes, hangs or delivers garbage.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util_deck.h"

#define FOREIGN_UID 65534          /* nobody */
#define SEG_OWNER_RECORD 64        /* the first line of a segment: its owner record (seg_shm.c) */

static char dir[64];

static void private_dir_path(void)
{
    snprintf(dir, sizeof dir, "/dev/shm/deck-%u", (unsigned)getuid());
}

/* Gives this (forked) process its own empty /dev/shm; 0 when that is not allowed here. */
static int own_dev_shm(void)
{
    if (unshare(CLONE_NEWNS) != 0) return 0;
    CHECK(mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
    CHECK(mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777") == 0);
    return 1;
}

/* Runs fn in a forked child with its own /dev/shm; prints SKIP when namespaces are not allowed. */
static void in_own_dev_shm(const char *name, void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(60);
        if (!own_dev_shm()) {
            printf("SKIP %s: no mount namespace here (%s); needs root\n", name, strerror(errno));
            exit(0);
        }
        fn();
        printf("PASS %s\n", name);
        exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void expect_refused(const char *nodes, const char *what)
{
    CHECK_RC(deck_init_static(0, 1, nodes), DECK_EPROTO);
    if (!strstr(deck_last_error(), dir) || !strstr(deck_last_error(), what))
        fprintf(stderr, "error does not name %s (%s): %s\n", dir, what, deck_last_error());
    CHECK(strstr(deck_last_error(), dir) != NULL);
    CHECK(strstr(deck_last_error(), what) != NULL);
    CHECK(!deck_is_initialized());
}

static void foreign_directories_refused(void)
{
    char nodes[64];
    util_nodes_file(1, nodes, sizeof nodes);
    setenv("DECK_TRANSPORT", "sci", 1);

    CHECK(mkdir(dir, 0755) == 0 && chmod(dir, 0755) == 0);          /* others may enter */
    expect_refused(nodes, "mode 755");
    CHECK(chmod(dir, 0700) == 0 && chown(dir, FOREIGN_UID, FOREIGN_UID) == 0);   /* another user's */
    expect_refused(nodes, "owner uid 65534");
    CHECK(rmdir(dir) == 0);
    CHECK(mkdir("/dev/shm/elsewhere", 0700) == 0 && symlink("/dev/shm/elsewhere", dir) == 0);
    expect_refused(nodes, "not a directory");
    CHECK(unlink(dir) == 0);

    /* once the impostor is gone, DECK makes its own directory, 0700, and runs */
    CHECK_OK(deck_init_static(0, 1, nodes));
    struct stat st;
    CHECK(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700 && st.st_uid == getuid());
    CHECK_OK(deck_done());
    CHECK(lstat(dir, &st) != 0 && errno == ENOENT);                 /* it goes with its last segment */
    unlink(nodes);
}

/* Node 0 of a 2-node run looks up a mailbox of node 1, which never starts: what it finds under
 * node 1's control segment name is a planted file, which must be refused (or not followed). */
static void expect_planted_refused(const char *nodes, const char *planted, int want)
{
    CHECK_OK(deck_init_static(0, 2, nodes));
    deck_mbox_t mb;
    CHECK_RC(deck_mbox_clone_at(&mb, 1, "anything"), want);
    if (want == DECK_EPROTO) {
        if (!strstr(deck_last_error(), planted)) fprintf(stderr, "error does not name %s: %s\n", planted, deck_last_error());
        CHECK(strstr(deck_last_error(), planted) != NULL);
        CHECK(strstr(deck_last_error(), "refused") != NULL);
    }
    CHECK_OK(deck_done());
}

static void plant(const char *path, mode_t mode, uid_t owner)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, 1 << 20) == 0 && fchmod(fd, mode) == 0 && fchown(fd, owner, owner) == 0);
    close(fd);
}

static void planted_segments_refused(void)
{
    char nodes[64], planted[128];
    util_nodes_file(2, nodes, sizeof nodes);
    setenv("DECK_TRANSPORT", "sci", 1);
    setenv("DECK_RUN_KEY", "planted", 1);
    setenv("DECK_CLONE_TIMEOUT_MS", "300", 1);
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(planted, sizeof planted, "%s/planted-1-0", dir);     /* node 1's control segment */

    plant(planted, 0600, FOREIGN_UID);
    expect_planted_refused(nodes, planted, DECK_EPROTO);
    CHECK(unlink(planted) == 0);
    plant(planted, 0666, getuid());
    expect_planted_refused(nodes, planted, DECK_EPROTO);
    CHECK(unlink(planted) == 0);
    plant("/dev/shm/bait", 0600, getuid());
    CHECK(symlink("/dev/shm/bait", planted) == 0);
    expect_planted_refused(nodes, planted, DECK_ENOTFOUND);       /* O_NOFOLLOW: never opened */
    CHECK(unlink(planted) == 0);
    unlink(nodes);
}

/* ---- fail loudly: 0xFF over a live run's segments ---- */

/* Overwrites the user area of the segment `name` in dir with 0xFF (the owner record stays, so
 * the owner is still seen alive). */
static void fill(const char *name)
{
    char path[192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDWR);
    if (fd < 0) fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size > SEG_OWNER_RECORD);
    unsigned char *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED);
    memset(p + SEG_OWNER_RECORD, 0xff, (size_t)st.st_size - SEG_OWNER_RECORD);
    munmap(p, (size_t)st.st_size);
    close(fd);
}

typedef struct { int ready[2], go[2]; char key[32]; } fill_run_t;

static void tell(int fd) { CHECK(write(fd, "x", 1) == 1); }
static void await(int fd) { char c; CHECK(read(fd, &c, 1) == 1); }

/* Node 0 receives what node 1 posts, 100 B (protocol 2) and 10 B (protocol 1); then, after the
 * test process has filled the segments, node 0 retrieves and node 1 posts again. */
static int filled_node(int id, int n, void *arg)
{
    fill_run_t *run = arg;
    deck_mbox_t mb;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 4096));
    if (id == 0) CHECK_OK(deck_mbox_create(&mb, "victim"));
    else CHECK_OK(deck_mbox_clone(&mb, "victim"));
    for (int i = 0; i < 20; i++) {
        if (id == 1) {
            m.len = i % 2 ? 100 : 10;
            memset(m.buf, i, m.len);
            CHECK_OK(deck_mbox_post(&mb, &m));
        } else {
            CHECK_OK(deck_mbox_retrv(&mb, &m));
            CHECK(m.len == (i % 2 ? 100u : 10u) && m.buf[0] == i && m.buf[m.len - 1] == i);
        }
    }
    CHECK_OK(deck_barrier());
    tell(run->ready[1]);
    await(run->go[0]);
    char own[128];
    snprintf(own, sizeof own, "%s/%s-%d-", dir, run->key, id);
    long t0 = util_now_ms();
    if (id == 0) {
        /* The mailbox admits every process, so the garbage closes the sender's area only:
         * nothing of it is delivered, and the mailbox goes on for the others (here, itself). */
        CHECK_RC(deck_mbox_retrv_timed(&mb, &m, 1000), DECK_ETIMEDOUT);
        deck_mbox_t self;
        CHECK_OK(deck_mbox_clone_at(&self, 0, "victim"));
        m.len = 10;
        memset(m.buf, 77, m.len);
        CHECK_OK(deck_mbox_post(&self, &m));
        CHECK_OK(deck_mbox_retrv_timed(&mb, &m, 1000));
        CHECK(m.len == 10 && m.buf[0] == 77 && m.src == 0);
        CHECK_OK(deck_mbox_destroy(&self));
    } else {
        int rc = DECK_OK;
        m.len = 10;
        for (int i = 0; i < 100 && rc == DECK_OK; i++) rc = deck_mbox_post(&mb, &m);
        CHECK_RC(rc, DECK_EPROTO);
        /* its own control segment, whose flow lines are garbage; or, when node 0 found its
         * mailbox segment garbage first and closed it, that segment */
        char theirs[128];
        snprintf(theirs, sizeof theirs, "%s/%s-0-", dir, run->key);
        if (!strstr(deck_last_error(), own) && !strstr(deck_last_error(), theirs))
            fprintf(stderr, "node 1: %s\n", deck_last_error());
        CHECK(strstr(deck_last_error(), own) != NULL || strstr(deck_last_error(), theirs) != NULL);
    }
    CHECK(util_now_ms() - t0 < 3000);
    CHECK_OK(deck_mbox_destroy(&mb));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

static void fill_when_ready(fill_run_t *run)
{
    for (int i = 0; i < 2; i++) await(run->ready[0]);
    char name[64];
    snprintf(name, sizeof name, "%s-0-%d", run->key, 2);    /* node 0's first mailbox segment */
    fill(name);
    snprintf(name, sizeof name, "%s-1-%d", run->key, 0);    /* node 1's control segment */
    fill(name);
    for (int i = 0; i < 2; i++) tell(run->go[1]);
}

static void filled_segments_fail_loudly(void)
{
    fill_run_t run;
    CHECK(pipe(run.ready) == 0 && pipe(run.go) == 0);
    snprintf(run.key, sizeof run.key, "fill%d", (int)getpid());
    setenv("DECK_RUN_KEY", run.key, 1);
    /* The filler is a process, not a thread: forking the nodes while a thread starts could
     * copy a lock it holds (ASan's, malloc's) into them, locked for ever. */
    fflush(NULL);
    pid_t filler = fork();
    CHECK(filler >= 0);
    if (filler == 0) {
        alarm(60);
        fill_when_ready(&run);
        _exit(0);
    }
    CHECK(util_run_nodes_on("sci", 2, filled_node, &run, 60) == 0);   /* they got their go: it filled */
    waitpid(filler, NULL, 0);                                           /* unless already reaped there */
    unsetenv("DECK_RUN_KEY");
    CHECK(util_shm_segments(run.key) == 0);
    for (int i = 0; i < 2; i++) { close(run.ready[i]); close(run.go[i]); }
    printf("PASS sci_filled_segments_fail_loudly_on_both_sides\n");
}

int main(void)
{
    private_dir_path();
    in_own_dev_shm("sci_foreign_segment_directory_refused", foreign_directories_refused);
    in_own_dev_shm("sci_planted_segments_refused", planted_segments_refused);
    filled_segments_fail_loudly();
    return 0;
}
