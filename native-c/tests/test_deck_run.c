/*
 * The deckrun launcher (path in $DECKRUN, set by the Makefile): exit status of good and failing
 * runs, the environment it gives, the time limit, and a real DECK program (this binary run as
 * "ring") that starts through deck_init from that environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util_deck.h"

/* Fig. 5.6 of the DECK text: a token (a float and two longs) goes once around the ring. */
static int ring_main(int argc, char **argv)
{
    CHECK_OK(deck_init(&argc, &argv));
    CHECK(argc == 2 && strcmp(argv[1], "ring") == 0);
    int me = deck_node(), n = deck_numnodes();
    char name[64];
    deck_mbox_t own, next;
    deck_msg_t m;
    snprintf(name, sizeof name, "Caixa postal - %d", me);
    CHECK_OK(deck_mbox_create(&own, name));
    snprintf(name, sizeof name, "Caixa postal - %d", (me + 1) % n);
    CHECK_OK(deck_mbox_clone(&next, name));
    CHECK_OK(deck_msg_create(&m, 64));
    float f = 56.89f;
    long l[2] = { 235, 189 };
    if (me == 0) {
        CHECK_OK(deck_msg_pack(&m, DECK_FLOAT, &f, 1));
        CHECK_OK(deck_msg_pack(&m, DECK_LONG, l, 2));
        CHECK_OK(deck_mbox_post(&next, &m));
        CHECK_OK(deck_mbox_retrv(&own, &m));
        float f2;
        long l2[2];
        CHECK_OK(deck_msg_unpack(&m, DECK_FLOAT, &f2, 1));
        CHECK_OK(deck_msg_unpack(&m, DECK_LONG, l2, 2));
        CHECK(f2 == f && l2[0] == 235 && l2[1] == 189);
    } else {
        CHECK_OK(deck_mbox_retrv(&own, &m));
        CHECK_OK(deck_mbox_post(&next, &m));
    }
    CHECK_OK(deck_barrier());
    CHECK_OK(deck_mbox_destroy(&own));
    CHECK_OK(deck_mbox_destroy(&next));
    CHECK_OK(deck_msg_destroy(&m));
    CHECK_OK(deck_done());
    return 0;
}

/* Node 1 fails at once while node 0 waits for a message that will never come. */
static int hang_main(int argc, char **argv)
{
    CHECK_OK(deck_init(&argc, &argv));
    if (deck_node() == 1) _exit(3);
    deck_mbox_t own;
    deck_msg_t m;
    CHECK_OK(deck_mbox_create(&own, "never"));
    CHECK_OK(deck_msg_create(&m, 8));
    deck_mbox_retrv(&own, &m);
    return 0;
}

/* Runs deckrun with the given arguments; returns its exit status (-1 if killed). */
static int deckrun(const char *const *args, long *ms)
{
    const char *path = getenv("DECKRUN");
    CHECK(path != NULL && "DECKRUN must name the deckrun binary (the Makefile sets it)");
    const char *argv[16] = { path };
    int n = 1;
    while (args[n - 1]) { argv[n] = args[n - 1]; n++; }
    argv[n] = NULL;
    long t0 = util_now_ms();
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execv(path, (char *const *)argv);
        _exit(126);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (ms) *ms = util_now_ms() - t0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[argc - 1], "ring") == 0) return ring_main(argc, argv);
    if (argc >= 2 && strcmp(argv[argc - 1], "hang") == 0) return hang_main(argc, argv);

    char nodes[64], self[4096];
    util_nodes_file(3, nodes, sizeof nodes);
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(len > 0);
    self[len] = '\0';
    long ms;

    CHECK(deckrun((const char *[]){ "-np", "3", "-f", nodes, "--", "/bin/true", NULL }, NULL) == 0);
    CHECK(deckrun((const char *[]){ "-np", "3", "-f", nodes, "--", "/bin/false", NULL }, NULL) == 1);
    CHECK(deckrun((const char *[]){ "-np", "3", "-f", nodes, NULL }, NULL) == 2);
    CHECK(deckrun((const char *[]){ "-np", "0", "-f", nodes, "--", "/bin/true", NULL }, NULL) == 2);
    char script[256];
    snprintf(script, sizeof script, "test \"$DECK_NODES\" = 3 && test \"$DECK_FILE\" = %s && "
             "test \"$DECK_ID\" -ge 0 && test \"$DECK_ID\" -lt 3", nodes);
    CHECK(deckrun((const char *[]){ "-np", "3", "-f", nodes, "--", "/bin/sh", "-c", script, NULL }, NULL) == 0);
    /* one process of three fails: the run fails */
    CHECK(deckrun((const char *[]){ "-np", "3", "-f", nodes, "--", "/bin/sh", "-c", "test $DECK_ID != 2", NULL }, NULL) == 1);
    /* the time limit stops a run that does not end */
    CHECK(deckrun((const char *[]){ "-np", "2", "-t", "1", "-f", nodes, "--", "/bin/sleep", "30", NULL }, &ms) == 1);
    CHECK(ms < 10000);

    CHECK(deckrun((const char *[]){ "-np", "3", "-f", nodes, "--", self, "ring", NULL }, NULL) == 0);
    /* a failed node makes deckrun stop the one left waiting for it */
    CHECK(deckrun((const char *[]){ "-np", "2", "-f", nodes, "--", self, "hang", NULL }, &ms) == 1);
    CHECK(ms < 10000);
    unlink(nodes);
    printf("PASS test_deck_run\n");
    return 0;
}
