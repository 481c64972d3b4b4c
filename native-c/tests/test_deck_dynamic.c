/*
 * Dynamic mode: two processes with ids of their own learn each other through a pipe (id and
 * deck_contact text), add each other as peers, clone each other's mailbox and exchange small
 * and multi-MiB messages both ways; once with DECK_TRANSPORT=tcp, once with auto, which must
 * reach the other process (same host) through sci.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util_deck.h"

#define BIG (6 * 1024 * 1024 + 13)

static void fill(deck_msg_t *m, int who, unsigned long len)
{
    for (unsigned long k = 0; k < len; k++) m->buf[k] = (char)(k * 13 + (unsigned long)who);
    CHECK_OK(deck_msg_setlength(m, len));
}

static void check_filled(const deck_msg_t *m, int who, unsigned long len)
{
    CHECK(m->len == len);
    for (unsigned long k = 0; k < len; k++)
        if (m->buf[k] != (char)(k * 13 + (unsigned long)who)) CHECK(!"payload byte differs");
}

static int side(int who, int wfd, int rfd, const char *transport)
{
    char contact[DECK_CONTACT_MAX], peer_contact[DECK_CONTACT_MAX], line[2 * DECK_CONTACT_MAX];
    alarm(60);
    CHECK_OK(deck_init_dynamic());
    int self = deck_node(), peer;
    CHECK(self > 65535);
    CHECK(deck_numnodes() == 1);
    CHECK_RC(deck_barrier(), DECK_ESTATE);
    CHECK_OK(deck_contact(contact, sizeof contact));
    CHECK(strncmp(contact, "port=", 5) == 0);
    int n = snprintf(line, sizeof line, "%d %s\n", self, contact);
    CHECK(write(wfd, line, (size_t)n) == n);
    FILE *in = fdopen(rfd, "r");
    CHECK(in && fscanf(in, "%d %255s", &peer, peer_contact) == 2);
    fclose(in);
    CHECK(peer != self);

    CHECK_RC(deck_add_peer(peer, "127.0.0.1", "bogus"), DECK_EINVAL);
    CHECK_OK(deck_add_peer(peer, "127.0.0.1", peer_contact));
    CHECK_OK(deck_add_peer(peer, "localhost", peer_contact));       /* same address again: fine */
    CHECK_RC(deck_add_peer(peer, "127.0.0.1", "port=1"), DECK_EEXIST);
    CHECK(deck_numnodes() == 2);
    char how[256];
    CHECK_OK(deck_peer_describe(peer, how, sizeof how));
    CHECK(strncmp(how, transport, strlen(transport)) == 0);

    deck_mbox_t mine, theirs;
    deck_msg_t m;
    char name[32];
    CHECK_OK(deck_msg_create(&m, BIG));
    snprintf(name, sizeof name, "box-of-%d", who);
    CHECK_OK(deck_mbox_create(&mine, name));
    snprintf(name, sizeof name, "box-of-%d", 1 - who);
    CHECK_OK(deck_mbox_clone(&theirs, name));
    CHECK(theirs.node == peer);
    CHECK_OK(deck_mbox_watch(&mine, peer));

    /* Side 0 posts first, side 1 answers: with sci a message above DECK_MSG_BUF_LIMIT is a
     * rendezvous with the receiver's retrieve (deck.h), so both posting at once would wait on
     * each other. */
    for (int round = 0; round < 3; round++) {
        unsigned long len = round == 1 ? BIG : (unsigned long)(round * 1000 + 7);
        for (int turn = 0; turn < 2; turn++) {
            if (turn == who) {
                fill(&m, who, len);
                CHECK_OK(deck_mbox_post(&theirs, &m));
            } else {
                CHECK_OK(deck_msg_clear(&m));
                CHECK_OK(deck_mbox_retrv(&mine, &m));
                check_filled(&m, 1 - who, len);
            }
        }
    }
    /* Side 0 has received everything; a last message so side 1 does not leave before. */
    CHECK_OK(deck_msg_setlength(&m, 0));
    if (who == 0) CHECK_OK(deck_mbox_post(&theirs, &m));
    else CHECK_OK(deck_mbox_retrv(&mine, &m));
    CHECK(m.len == 0);
    CHECK_OK(deck_mbox_destroy(&mine));
    CHECK_OK(deck_mbox_destroy(&theirs));
    CHECK_OK(deck_msg_destroy(&m));
    CHECK_OK(deck_done());
    return 0;
}

static int run_pair(const char *transport)
{
    setenv("DECK_TRANSPORT", transport, 1);
    int a_to_b[2], b_to_a[2];
    CHECK(pipe(a_to_b) == 0 && pipe(b_to_a) == 0);
    fflush(NULL);
    pid_t pids[2];
    for (int who = 0; who < 2; who++) {
        pids[who] = fork();
        CHECK(pids[who] >= 0);
        if (pids[who] == 0) {
            int wfd = who == 0 ? a_to_b[1] : b_to_a[1], rfd = who == 0 ? b_to_a[0] : a_to_b[0];
            close(who == 0 ? a_to_b[0] : b_to_a[0]);
            close(who == 0 ? b_to_a[1] : a_to_b[1]);
            int rc = side(who, wfd, rfd, strcmp(transport, "auto") == 0 ? "sci" : transport);
            close(wfd);
            exit(rc);
        }
    }
    for (int i = 0; i < 2; i++) { close(a_to_b[i]); close(b_to_a[i]); }
    int failed = 0;
    for (int who = 0; who < 2; who++) {
        int status;
        CHECK(waitpid(pids[who], &status, 0) == pids[who]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "dynamic side %d (%s) failed (status 0x%x)\n", who, transport, status);
            failed = 1;
        }
    }
    return failed;
}

int main(void)
{
    int failed = run_pair("tcp") | run_pair("auto");
    printf("%s test_deck_dynamic\n", failed ? "FAIL" : "PASS");
    return failed;
}
