/*
 * Life cycle of the sci transport's shared segments: a normal run leaves nothing in /dev/shm;
 * a process killed with SIGKILL mid-run leaves its segments, its peers notice (a watched
 * retrieve and a post blocked on it fail with DECK_EPEER instead of hanging), and the left-overs
 * go at the deck_done of a peer that outlives it, or, when none does, at the next deck_init of
 * any run. Bad thresholds are refused naming the variable.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util_deck.h"

/* A token of 100000 bytes (protocol 3) and one of 10 goes around the ring. */
static int ring_node(int id, int n, void *arg)
{
    char name[32];
    deck_mbox_t own, next;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 100000));
    snprintf(name, sizeof name, "ring-%d", id);
    CHECK_OK(deck_mbox_create(&own, name));
    snprintf(name, sizeof name, "ring-%d", (id + 1) % n);
    CHECK_OK(deck_mbox_clone(&next, name));
    for (unsigned long len = 100000; len >= 10; len /= 10000) {
        if (id == 0) {
            memset(m.buf, 7, len);
            m.len = len;
            CHECK_OK(deck_mbox_post(&next, &m));
            CHECK_OK(deck_mbox_retrv(&own, &m));
        } else {
            CHECK_OK(deck_mbox_retrv(&own, &m));
            CHECK_OK(deck_mbox_post(&next, &m));
        }
        CHECK(m.len == len && m.buf[len - 1] == 7);
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&own));
    CHECK_OK(deck_mbox_destroy(&next));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

static void test_normal_run_leaves_nothing(void)
{
    char key[32];
    snprintf(key, sizeof key, "cleanA%d", (int)getpid());
    setenv("DECK_RUN_KEY", key, 1);
    CHECK(util_run_nodes_on("sci", 3, ring_node, NULL, 60) == 0);
    unsetenv("DECK_RUN_KEY");
    CHECK(util_shm_segments(key) == 0);
    printf("PASS sci_normal_run_leaves_dev_shm_clean\n");
}

/* A process that ends (exit) without deck_done, as a JVM with sockets still open does. */
static int exit_without_done(int id, int n, void *arg)
{
    deck_mbox_t mb;
    CHECK_OK(deck_mbox_create(&mb, id ? "one" : "zero"));
    CHECK_OK(deck_barrier());
    exit(0);
}

static void test_exit_without_done_leaves_nothing(void)
{
    char key[32];
    snprintf(key, sizeof key, "cleanX%d", (int)getpid());
    setenv("DECK_RUN_KEY", key, 1);
    CHECK(util_run_nodes_on("sci", 2, exit_without_done, NULL, 60) == 0);
    unsetenv("DECK_RUN_KEY");
    CHECK(util_shm_segments(key) == 0);
    printf("PASS sci_exit_without_deck_done_leaves_dev_shm_clean\n");
}

/* Node 2 is killed once every node is set up; node 0 retrieves on a mailbox watching it,
 * node 1 posts to it until its ring is full. Both must end with DECK_EPEER. */
static void killed_node(int id, int n, int ready_fd)
{
    deck_mbox_t mb;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 32));
    if (id == 0) CHECK_OK(deck_mbox_create(&mb, "watcher"));
    if (id == 1) CHECK_OK(deck_mbox_clone(&mb, "victim"));
    if (id == 2) CHECK_OK(deck_mbox_create(&mb, "victim"));
    CHECK_OK(deck_barrier());
    if (id == 2) {
        CHECK(write(ready_fd, "k", 1) == 1);
        for (;;) pause();                         /* until SIGKILL */
    }
    long t0 = util_now_ms();
    if (id == 0) {
        CHECK_OK(deck_mbox_watch(&mb, 2));
        CHECK_RC(deck_mbox_retrv(&mb, &m), DECK_EPEER);
    } else {
        m.len = 20;
        int rc = DECK_OK;
        for (int i = 0; i < 1000 && rc == DECK_OK; i++) rc = deck_mbox_post(&mb, &m);
        CHECK_RC(rc, DECK_EPEER);
    }
    CHECK(util_now_ms() - t0 < 5000);
    CHECK_OK(deck_mbox_destroy(&mb));
    CHECK_OK(deck_msg_destroy(&m));
}

static void test_killed_process_is_reclaimed(void)
{
    char key[32], path[64], fresh[64];
    snprintf(key, sizeof key, "cleanB%d", (int)getpid());
    setenv("DECK_RUN_KEY", key, 1);
    setenv("DECK_TRANSPORT", "sci", 1);
    util_nodes_file(3, path, sizeof path);
    int ready[2];
    CHECK(pipe(ready) == 0);
    fflush(NULL);
    pid_t pids[3];
    for (int i = 0; i < 3; i++) {
        pids[i] = fork();
        CHECK(pids[i] >= 0);
        if (pids[i] == 0) {
            alarm(60);
            close(ready[0]);
            CHECK_OK(deck_init_static(i, 3, path));
            killed_node(i, 3, ready[1]);
            CHECK_OK(deck_done());
            exit(0);
        }
    }
    close(ready[1]);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    CHECK(kill(pids[2], SIGKILL) == 0);
    for (int i = 0; i < 3; i++) {
        int status;
        CHECK(waitpid(pids[i], &status, 0) == pids[i]);
        if (i < 2) CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        else CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    }
    unlink(path);
    /* the survivors' deck_done removed what the dead node left */
    CHECK(util_shm_segments(key) == 0);

    /* A node killed with nobody to outlive it: its control, message and mailbox segments are
     * left... */
    snprintf(key, sizeof key, "cleanL%d", (int)getpid());
    setenv("DECK_RUN_KEY", key, 1);
    util_nodes_file(1, path, sizeof path);
    CHECK(pipe(ready) == 0);
    fflush(NULL);
    pid_t lone = fork();
    CHECK(lone >= 0);
    if (lone == 0) {
        alarm(60);
        deck_mbox_t mb;
        CHECK_OK(deck_init_static(0, 1, path));
        CHECK_OK(deck_mbox_create(&mb, "lone"));
        CHECK(write(ready[1], "k", 1) == 1);
        for (;;) pause();                         /* until SIGKILL */
    }
    close(ready[1]);
    CHECK(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    CHECK(kill(lone, SIGKILL) == 0);
    CHECK(waitpid(lone, NULL, 0) == lone);
    unlink(path);
    CHECK(util_shm_segments(key) == 3);
    /* ... until the next deck_init, here of another run */
    unsetenv("DECK_RUN_KEY");
    util_nodes_file(1, fresh, sizeof fresh);
    CHECK_OK(deck_init_static(0, 1, fresh));
    CHECK(util_shm_segments(key) == 0);
    CHECK_OK(deck_done());
    unlink(fresh);
    unsetenv("DECK_TRANSPORT");
    printf("PASS sci_killed_process_noticed_and_reclaimed\n");
}

static void expect_config_error(const char *var, const char *value, const char *path)
{
    setenv(var, value, 1);
    CHECK_RC(deck_init_static(0, 1, path), DECK_ECONFIG);
    if (!strstr(deck_last_error(), var)) fprintf(stderr, "error does not name %s: %s\n", var, deck_last_error());
    CHECK(strstr(deck_last_error(), var) != NULL);
    CHECK(!deck_is_initialized());
    unsetenv(var);
}

static void test_bad_configuration(void)
{
    char path[64];
    util_nodes_file(1, path, sizeof path);
    setenv("DECK_TRANSPORT", "sci", 1);
    expect_config_error("DECK_MSG_BUF_LIMIT", "abc", path);
    expect_config_error("DECK_MSG_BUF_LIMIT", "10", path);
    expect_config_error("DECK_MEDBUF_SIZE", "8000", path);      /* < 8192 + 64 */
    expect_config_error("DECK_MSEG_SIZE", "-5", path);
    expect_config_error("DECK_SPIN_US", "-2", path);
    expect_config_error("DECK_RUN_KEY", "a/b", path);
    CHECK_RC(deck_init_dynamic(), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), "static") != NULL);
    setenv("DECK_TRANSPORT", "carrier-pigeon", 1);
    CHECK_RC(deck_init_static(0, 1, path), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), "tcp, sci") != NULL);
    /* a good configuration still starts after all that */
    setenv("DECK_TRANSPORT", "sci", 1);
    setenv("DECK_MSG_BUF_LIMIT", "1000", 1);
    setenv("DECK_MEDBUF_SIZE", "1088", 1);
    int fds = util_open_fds();
    CHECK_OK(deck_init_static(0, 1, path));
    CHECK(util_open_fds() == fds);                 /* segments are mapped, their descriptors closed */
    CHECK_OK(deck_done());
    CHECK(util_open_fds() == fds);
    unsetenv("DECK_MSG_BUF_LIMIT");
    unsetenv("DECK_MEDBUF_SIZE");
    setenv("DECK_TRANSPORT", "tcp", 1);           /* tcp's waiters poll for DECK_SPIN_US too */
    expect_config_error("DECK_SPIN_US", "-2", path);
    expect_config_error("DECK_SPIN_US", "abc", path);
    unsetenv("DECK_TRANSPORT");
    unlink(path);
    printf("PASS sci_bad_configuration_named\n");
}

int main(void)
{
    test_bad_configuration();
    test_normal_run_leaves_nothing();
    test_killed_process_is_reclaimed();
    test_exit_without_done_leaves_nothing();
    return 0;
}
