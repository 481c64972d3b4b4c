/*
 * The sci transport starts without waiting for its peers, as tcp does: a process that starts
 * alone finishes deck_init and creates its mailboxes; a peer that starts later is reached then
 * (streams both ways over the three protocols, the late receiver mapping its sender on the
 * first message); a peer that never starts makes clone and post fail within
 * DECK_CLONE_TIMEOUT_MS, not hang, and is not taken for dead; barriers hold whatever the start
 * order; a destroy reaches a sender that was never heard from, even one blocked on a full ring.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util_deck.h"

#define STREAM 200
static const unsigned long sizes[] = { 0, 1, 62, 63, 1000, 8192, 8193, 100000, 1ul << 20 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

static char nodes_path[64];
static int ready_fd = -1;          /* node 0 of the staggered test reports here */
static long t_start;               /* the monotonic clock is one for all processes */

/* Runs fn in a forked DECK process `id` of n that starts delay_ms from now. */
static pid_t spawn(int id, int n, int delay_ms, int (*fn)(int id, int n))
{
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(60);
        util_sleep_ms(delay_ms);
        CHECK_OK(deck_init_static(id, n, nodes_path));
        int rc = fn(id, n);
        if (rc == 0) CHECK_OK(deck_done());
        exit(rc);
    }
    return pid;
}

static int exited_ok(pid_t pid)
{
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
    fprintf(stderr, "  process %d ended with status 0x%x\n", (int)pid, status);
    return 0;
}

/* A fresh run of n nodes under its own run key, so that /dev/shm can be checked after it. */
static void new_run(int n, char *key, size_t len, const char *tag)
{
    snprintf(key, len, "stag%s%d", tag, (int)getpid());
    setenv("DECK_RUN_KEY", key, 1);
    util_nodes_file(n, nodes_path, sizeof nodes_path);
}

static void end_run(const char *key)
{
    unlink(nodes_path);
    unsetenv("DECK_RUN_KEY");
    CHECK(util_shm_segments(key) == 0);
}

static unsigned char pat(int from, int k, unsigned long j) { return (unsigned char)(from * 91 + k * 13 + j * 7 + (j >> 9)); }

static void send_stream(deck_mbox_t *to, deck_msg_t *m, int from)
{
    for (int k = 0; k < STREAM; k++) {
        unsigned long len = sizes[k % NSIZES];
        for (unsigned long j = 0; j < len; j++) m->buf[j] = (char)pat(from, k, j);
        m->len = len;
        CHECK_OK(deck_mbox_post(to, m));
    }
}

static void receive_stream(deck_mbox_t *own, deck_msg_t *m, int from)
{
    for (int k = 0; k < STREAM; k++) {
        CHECK_OK(deck_mbox_retrv(own, m));
        unsigned long len = sizes[k % NSIZES];
        if (m->len != len) fprintf(stderr, "message %d from node %d: %lu bytes, expected %lu\n", k, from, m->len, len);
        CHECK(m->len == len);
        for (unsigned long j = 0; j < len; j++) CHECK((unsigned char)m->buf[j] == pat(from, k, j));
    }
}

/* Node 0 streams to node 1, which only retrieves (it maps node 0 on the first message, for the
 * flow lines), then node 1 clones node 0's mailbox and streams back. */
static int staggered_node(int id, int n)
{
    char name[16];
    deck_mbox_t own, peer;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, (1ul << 20) + 64));
    snprintf(name, sizeof name, "stag-%d", id);
    CHECK_OK(deck_mbox_create(&own, name));
    if (id == 0) {
        CHECK(write(ready_fd, "r", 1) == 1);
        close(ready_fd);
        CHECK_OK(deck_mbox_clone(&peer, "stag-1"));          /* waits for node 1 to start */
        send_stream(&peer, &m, 0);
        receive_stream(&own, &m, 1);
    } else {
        receive_stream(&own, &m, 0);
        CHECK_OK(deck_mbox_clone(&peer, "stag-0"));
        send_stream(&peer, &m, 1);
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&peer));
    CHECK_OK(deck_mbox_destroy(&own));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

static void test_late_peer_is_reached(void)
{
    char key[32];
    int fds[2];
    new_run(2, key, sizeof key, "A");
    CHECK(pipe(fds) == 0);
    ready_fd = fds[1];
    pid_t first = spawn(0, 2, 0, staggered_node);
    close(fds[1]);
    /* Node 0 must finish deck_init and create its mailbox on its own: a collective start
     * would never get there, and the test fails here instead of hanging. */
    struct pollfd p = { .fd = fds[0], .events = POLLIN };
    char c;
    int ready = poll(&p, 1, 10000) == 1 && read(fds[0], &c, 1) == 1;
    close(fds[0]);
    if (!ready) kill(first, SIGKILL);
    CHECK(ready);
    util_sleep_ms(300);
    pid_t second = spawn(1, 2, 0, staggered_node);
    int ok = exited_ok(first);
    ok &= exited_ok(second);
    CHECK(ok);
    end_run(key);
    printf("PASS sci_late_peer_reached_both_ways\n");
}

/* Node 1 of 2 never starts. */
static int alone_node(int id, int n)
{
    deck_mbox_t mb, own;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 16));
    long t0 = util_now_ms();
    CHECK_RC(deck_mbox_clone(&mb, "absent"), DECK_ENOTFOUND);
    long took = util_now_ms() - t0;
    CHECK(took >= 250 && took < 3000);
    CHECK(strstr(deck_last_error(), "'absent'") != NULL);
    /* a handle to node 1 that came from elsewhere: post gives up within the same bound */
    mb = (deck_mbox_t){ .kind = DECK_MBOX_CLONED, .node = 1, .index = 1, .name = "absent" };
    m.len = 10;
    t0 = util_now_ms();
    CHECK_RC(deck_mbox_post(&mb, &m), DECK_ENOTFOUND);
    took = util_now_ms() - t0;
    CHECK(took >= 250 && took < 3000);
    CHECK(strstr(deck_last_error(), "node 1") != NULL);
    /* not started is not dead: a retrieve watching it runs into its own time bound */
    CHECK_OK(deck_mbox_create(&own, "alone"));
    CHECK_OK(deck_mbox_watch(&own, 1));
    CHECK_RC(deck_mbox_retrv_timed(&own, &m, 200), DECK_ETIMEDOUT);
    CHECK_OK(deck_mbox_destroy(&own));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

static void test_peer_that_never_starts(void)
{
    char key[32];
    new_run(2, key, sizeof key, "B");
    setenv("DECK_CLONE_TIMEOUT_MS", "300", 1);
    CHECK(exited_ok(spawn(0, 2, 0, alone_node)));
    unsetenv("DECK_CLONE_TIMEOUT_MS");
    end_run(key);
    printf("PASS sci_peer_that_never_starts_fails_in_time\n");
}

/* Node 0 (where everybody reports) starts last. */
static const int barrier_delay[] = { 400, 0, 200 };

static int barrier_node(int id, int n)
{
    for (int round = 0; round < 3; round++) {
        CHECK_OK(deck_barrier());
        CHECK(util_now_ms() >= t_start + barrier_delay[0]);   /* nobody left before node 0 came */
    }
    return 0;
}

static void test_barrier_with_staggered_start(void)
{
    char key[32];
    pid_t pids[3];
    new_run(3, key, sizeof key, "C");
    t_start = util_now_ms();
    for (int i = 0; i < 3; i++) pids[i] = spawn(i, 3, barrier_delay[i], barrier_node);
    int ok = 1;
    for (int i = 0; i < 3; i++) ok &= exited_ok(pids[i]);
    CHECK(ok);
    end_run(key);
    printf("PASS sci_barrier_with_staggered_start\n");
}

/* Node 0 never retrieves from node 1, so it learns of it only by its hello: its destroy must
 * still stop node 1's posts, one blocked on the full protocol-1 ring included. */
static int quiet_node(int id, int n)
{
    deck_mbox_t mb;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 16));
    if (id == 0) CHECK_OK(deck_mbox_create(&mb, "quiet"));
    CHECK_OK(deck_barrier());
    if (id == 1) {
        CHECK_OK(deck_mbox_clone(&mb, "quiet"));
        m.len = 8;
        for (int k = 0; k < 64; k++) CHECK_OK(deck_mbox_post(&mb, &m));    /* the ring is full */
    }
    CHECK_OK(deck_barrier());
    if (id == 0) {
        util_sleep_ms(200);
        CHECK_OK(deck_mbox_destroy(&mb));
    } else {
        long t0 = util_now_ms();
        CHECK_RC(deck_mbox_post(&mb, &m), DECK_ENOTFOUND);
        CHECK(util_now_ms() - t0 < 5000);
        CHECK_RC(deck_mbox_post(&mb, &m), DECK_ENOTFOUND);
        CHECK_OK(deck_mbox_destroy(&mb));
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

static void test_destroy_reaches_unheard_sender(void)
{
    char key[32];
    pid_t pids[2];
    new_run(2, key, sizeof key, "D");
    for (int i = 0; i < 2; i++) pids[i] = spawn(i, 2, 0, quiet_node);
    int ok = exited_ok(pids[0]);
    ok &= exited_ok(pids[1]);
    CHECK(ok);
    end_run(key);
    printf("PASS sci_destroy_reaches_sender_never_heard_from\n");
}

int main(void)
{
    setenv("DECK_TRANSPORT", "sci", 1);
    test_late_peer_is_reached();
    test_peer_that_never_starts();
    test_barrier_with_staggered_start();
    test_destroy_reaches_unheard_sender();
    return 0;
}
