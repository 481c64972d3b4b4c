/*
 * Lookups over DECK tcp (deck_mbox_clone asks the owner of a name for its index) against an
 * owner slower than the asker's DECK_AUTH_TIMEOUT_MS. A static run of 2 forked processes:
 * node 0 owns the names; node 1 stops it (SIGSTOP, as a debugger, a swapped-out or overloaded
 * host would) for SLOW_MS while it asks.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util_deck.h"
#include "../deck/tcp.h"

#define SLOW_MS    600
#define GIVE_UP_MS "200"             /* node 1's DECK_AUTH_TIMEOUT_MS while node 0 is stopped */

/* Whether every thread of `pid` is stopped (state T in /proc/<pid>/task/<tid>/stat). */
static int all_stopped(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return 0;
    int stopped = 1;
    for (struct dirent *e; stopped && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char stat[400], line[512];
        snprintf(stat, sizeof stat, "%s/%s/stat", path, e->d_name);
        FILE *f = fopen(stat, "r");
        const char *close_paren = f && fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
        stopped = close_paren && close_paren[1] == ' ' && close_paren[2] == 'T';
        if (f) fclose(f);
    }
    closedir(d);
    return stopped;
}

/* SIGSTOP is only sent when kill returns: a thread of the target that is running finishes
 * what it is at first, and answered the lookup asked right after (26 ms, a CI run). */
static void stop_and_wait(pid_t pid)
{
    CHECK(kill(pid, SIGSTOP) == 0);
    for (int i = 0; i < 1000 && !all_stopped(pid); i++) util_sleep_ms(1);
    CHECK(all_stopped(pid));
}

static void *continue_later(void *arg)
{
    util_sleep_ms(SLOW_MS);
    CHECK(kill(*(pid_t *)arg, SIGCONT) == 0);
    return NULL;
}

/* A lookup whose asker gave up is answered late: the answer is dropped, the connection stays,
 * and the next lookup (of another name, asked before the late answer came) gets its own
 * index, not the late one. */
static int late_answer_node(int id, int n, void *arg)
{
    deck_mbox_t first, second, pids;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, sizeof(int)));
    if (id == 0) {
        CHECK_OK(deck_mbox_create(&first, "first"));
        CHECK_OK(deck_mbox_create(&second, "second"));
    } else {
        CHECK_OK(deck_mbox_create(&pids, "pids"));
    }
    CHECK_OK(deck_barrier());                  /* the names exist; node 1's connection is up */
    if (id == 0) {
        int pid = (int)getpid();
        CHECK_OK(deck_mbox_clone(&pids, "pids"));
        CHECK_OK(deck_msg_pack(&m, DECK_INT, &pid, 1));
        CHECK_OK(deck_mbox_post(&pids, &m));
    } else {
        int pid;
        CHECK_OK(deck_mbox_retrv(&pids, &m));
        CHECK_OK(deck_msg_unpack(&m, DECK_INT, &pid, 1));
        tcp_conn_t *before, *after;
        CHECK_OK(tcp_peer_conn(0, 1000, "test", &before));
        pid_t stopped = (pid_t)pid;
        pthread_t t;
        stop_and_wait(stopped);
        CHECK(pthread_create(&t, NULL, continue_later, &stopped) == 0);
        setenv("DECK_AUTH_TIMEOUT_MS", GIVE_UP_MS, 1);
        int index = -1, late = -1, again = -1;
        CHECK_RC(tcp_peer_lookup(0, "first", 1000, &index), DECK_EPEER);   /* gave up */
        unsetenv("DECK_AUTH_TIMEOUT_MS");
        CHECK_OK(tcp_peer_lookup(0, "second", 1000, &late));  /* answered after "first"'s answer */
        CHECK(pthread_join(t, NULL) == 0);
        CHECK_OK(tcp_peer_lookup(0, "first", 1000, &index));
        CHECK_OK(tcp_peer_lookup(0, "second", 1000, &again));
        if (late != again || late == index)
            fprintf(stderr, "node 1: \"second\" is %d (asked while slow), %d (after); \"first\" %d\n", late, again, index);
        CHECK(late == again && late != index);
        CHECK_OK(tcp_peer_conn(0, 1000, "test", &after));
        CHECK(after == before && !atomic_load(&after->closed));
        tcp_conn_unref(after);
        tcp_conn_unref(before);
    }
    CHECK_OK(deck_barrier());                  /* node 0 is still here: the connection never ended */
    if (id == 0) {
        CHECK_OK(deck_mbox_destroy(&first));
        CHECK_OK(deck_mbox_destroy(&second));
    }
    CHECK_OK(deck_mbox_destroy(&pids));
    CHECK_OK(deck_msg_destroy(&m));
    return 0;
}

int main(void)
{
    return util_run_test_on("tcp", "a late lookup answer is dropped, not taken for the next one", 2,
                            late_answer_node, NULL) ? 1 : 0;
}
