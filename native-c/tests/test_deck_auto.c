/*
 * DECK_TRANSPORT=auto (dynamic runs): a peer on this host is reached through sci, one whose
 * contact names another host over tcp, and a process that takes over the shared-memory node
 * number of a killed one is a new peer, never mistaken for the old one:
 *
 *   R lives throughout. A, node 1 of the host, posts to R's mailbox and is killed; R's watched
 *   retrieve reports DECK_EPEER. C then starts, gets node 1 (A's segments were reclaimed) and
 *   mailbox indices equal to A's, and both directions between R and C work: R's mailbox sees a
 *   new sender in A's area, R's handle to C's mailbox is re-bound instead of writing into A's.
 *   A fourth process whose contact claims another boot id is reached over tcp: R answers it with
 *   a port it opens then (it listened on nothing while its peers were all on this host).
 * As a bootstrap would, each process tells R its deck_contact and R answers each one with
 * deck_contact_for; every pair proves itself with the same test key.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util_deck.h"

#define LINE_MAX_ (2 * DECK_CONTACT_MAX)

typedef struct { int id; char contact[DECK_CONTACT_MAX]; } who_t;

static void say(int fd, const char *text)
{
    size_t n = strlen(text);
    CHECK(write(fd, text, n) == (ssize_t)n && write(fd, "\n", 1) == 1);
}

static void hear(int fd, char *line, size_t len)
{
    size_t n = 0;
    while (n + 1 < len) {
        ssize_t r = read(fd, line + n, 1);
        CHECK(r == 1);
        if (line[n] == '\n') break;
        n++;
    }
    line[n] = '\0';
}

static void announce(int fd)
{
    char contact[DECK_CONTACT_MAX], line[LINE_MAX_];
    CHECK_OK(deck_contact(contact, sizeof contact));
    snprintf(line, sizeof line, "%d %s", deck_node(), contact);
    say(fd, line);
}

/* R's side of an introduction: hears who connects, answers with what that one needs. */
static who_t answer_who(int in, int out)
{
    char line[LINE_MAX_], contact[DECK_CONTACT_MAX];
    who_t w;
    hear(in, line, sizeof line);
    CHECK(sscanf(line, "%d %255s", &w.id, w.contact) == 2);
    CHECK_OK(deck_contact_for(w.contact, "127.0.0.1", contact, sizeof contact));
    snprintf(line, sizeof line, "%d %s", deck_node(), contact);
    say(out, line);
    return w;
}

static who_t hear_who(int fd)
{
    char line[LINE_MAX_];
    who_t w;
    hear(fd, line, sizeof line);
    CHECK(sscanf(line, "%d %255s", &w.id, w.contact) == 2);
    return w;
}

/* The shared-memory node number in a contact "shm=<boot>.<node>.<nonce>". */
static int shm_node(const char *contact)
{
    const char *shm = strstr(contact, "shm=");
    CHECK(shm != NULL);
    const char *dot = strchr(shm, '.');
    CHECK(dot != NULL);
    return atoi(dot + 1);
}

static void post_text(deck_mbox_t *to, const char *text)
{
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 64));
    CHECK_OK(deck_msg_pack(&m, DECK_STRING, text, 1));
    CHECK_OK(deck_mbox_post(to, &m));
    CHECK_OK(deck_msg_destroy(&m));
}

static void take_text(deck_mbox_t *from, char *got, int len)
{
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 64));
    CHECK_OK(deck_mbox_retrv(from, &m));
    CHECK_OK(deck_msg_unpack(&m, DECK_STRING, got, len));
    CHECK_OK(deck_msg_destroy(&m));
}

static void expect_text(deck_mbox_t *from, const char *text)
{
    char got[64];
    take_text(from, got, (int)sizeof got);
    if (strcmp(got, text) != 0) fprintf(stderr, "got '%s', expected '%s'\n", got, text);
    CHECK(strcmp(got, text) == 0);
}

static void expect_route(int id, const char *prefix)
{
    char how[256];
    CHECK_OK(deck_peer_describe(id, how, sizeof how));
    if (strncmp(how, prefix, strlen(prefix)) != 0) fprintf(stderr, "peer %d: '%s', expected '%s...'\n", id, how, prefix);
    CHECK(strncmp(how, prefix, strlen(prefix)) == 0);
}

/* ---- the processes; `in`/`out` are their pipes from and to the test ---- */

static int run_r(int in, int out)
{
    deck_mbox_t rbox, rfar, abox, cbox, fbox;
    CHECK_OK(deck_init_dynamic());
    CHECK_OK(deck_mbox_create(&rbox, "r-box"));
    CHECK_OK(deck_mbox_create(&rfar, "r-far"));        /* unwatched: any introduced process may post */

    who_t a = answer_who(in, out);
    CHECK_OK(deck_add_peer(a.id, "127.0.0.1", a.contact, util_pair_key()));
    expect_route(a.id, "sci (same host");
    CHECK_OK(deck_mbox_watch(&rbox, a.id));
    CHECK_OK(deck_mbox_clone(&abox, "a-box"));
    unsigned long hint = 0;
    CHECK_OK(deck_mbox_post_hint(&abox, &hint));
    CHECK(hint > 0 && hint < DECK_TCP_POST_HINT);   /* sci's eager bound, not tcp's frame */
    post_text(&abox, "for A only");
    for (int k = 0; k < 3; k++) {
        char text[32];
        snprintf(text, sizeof text, "A says %d", k);
        expect_text(&rbox, text);
    }
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 64));
    CHECK_RC(deck_mbox_retrv(&rbox, &m), DECK_EPEER);             /* A was killed */
    CHECK(deck_numnodes() == 2);
    say(out, "A is gone");

    who_t c = answer_who(in, out);
    CHECK(shm_node(c.contact) == shm_node(a.contact));
    CHECK_OK(deck_add_peer(c.id, "127.0.0.1", c.contact, util_pair_key()));
    expect_route(c.id, "sci (same host");
    CHECK_OK(deck_mbox_watch(&rbox, c.id));
    CHECK_OK(deck_mbox_clone(&cbox, "c-box"));
    CHECK(cbox.node == c.id && cbox.index == abox.index);        /* what makes the old binding tempting */
    CHECK_RC(deck_mbox_post(&abox, &m), DECK_EPEER);              /* A's handle does not reach C */
    post_text(&cbox, "for C");
    for (int k = 0; k < 3; k++) {
        char text[32];
        snprintf(text, sizeof text, "C says %d", k);
        expect_text(&rbox, text);
    }

    who_t f = answer_who(in, out);                                /* claims another boot id */
    CHECK_OK(deck_add_peer(f.id, "127.0.0.1", f.contact, util_pair_key()));
    expect_route(f.id, "tcp (another host)");
    CHECK_OK(deck_mbox_clone(&fbox, "f-box"));
    CHECK_OK(deck_mbox_post_hint(&fbox, &hint));
    CHECK(hint == DECK_TCP_POST_HINT);
    post_text(&fbox, "for F over tcp");
    expect_text(&rfar, "F says hello over tcp");
    expect_text(&rbox, "C is done");                              /* rbox admits C alone */

    CHECK_OK(deck_msg_destroy(&m));
    CHECK_OK(deck_mbox_destroy(&rbox));
    CHECK_OK(deck_mbox_destroy(&rfar));
    CHECK_OK(deck_done());
    return 0;
}

/* A and C: take R's contact, post three texts to R and take the one R posts to them; then A
 * waits to be killed, C goes on. */
static int run_sender(int in, int out, const char *name)
{
    deck_mbox_t mine, rbox;
    char box[16];
    CHECK_OK(deck_init_dynamic());
    snprintf(box, sizeof box, "%c-box", name[0] + 'a' - 'A');
    CHECK_OK(deck_mbox_create(&mine, box));
    announce(out);
    who_t r = hear_who(in);
    CHECK_OK(deck_add_peer(r.id, "127.0.0.1", r.contact, util_pair_key()));
    expect_route(r.id, "sci (same host");
    CHECK_OK(deck_mbox_clone(&rbox, "r-box"));
    for (int k = 0; k < 3; k++) {
        char text[32];
        snprintf(text, sizeof text, "%s says %d", name, k);
        post_text(&rbox, text);
    }
    expect_text(&mine, name[0] == 'A' ? "for A only" : "for C");   /* C: not A's */
    if (name[0] == 'A') {
        say(out, "sent");
        for (;;) pause();
    }
    say(out, "got it");
    hear(in, box, sizeof box);                                    /* F has posted */
    post_text(&rbox, "C is done");
    CHECK_OK(deck_mbox_destroy(&mine));
    CHECK_OK(deck_done());
    return 0;
}

/* F: its contact's boot id is altered, as if it ran on another host. */
static int run_far(int in, int out)
{
    deck_mbox_t mine, rbox;
    char contact[DECK_CONTACT_MAX], line[LINE_MAX_];
    CHECK_OK(deck_init_dynamic());
    CHECK_OK(deck_mbox_create(&mine, "f-box"));
    util_contact_elsewhere(contact, sizeof contact);
    snprintf(line, sizeof line, "%d %s", deck_node(), contact);
    say(out, line);
    who_t r = hear_who(in);
    CHECK(strncmp(r.contact, "port=", 5) == 0);                   /* R listens for F alone */
    char bad[DECK_CONTACT_MAX + 16];
    snprintf(bad, sizeof bad, "%s,shm=nonsense", r.contact);
    CHECK_RC(deck_add_peer(r.id, "127.0.0.1", bad, util_pair_key()), DECK_EINVAL);
    CHECK_OK(deck_add_peer(r.id, "127.0.0.1", r.contact, util_pair_key()));
    expect_route(r.id, "tcp (the peer offers no shared memory)");
    CHECK_OK(deck_mbox_clone(&rbox, "r-far"));
    expect_text(&mine, "for F over tcp");
    post_text(&rbox, "F says hello over tcp");
    say(out, "posted");
    CHECK_OK(deck_mbox_destroy(&mine));
    CHECK_OK(deck_done());
    return 0;
}

typedef struct { pid_t pid; int in, out; } child_t;   /* in: we write to it; out: we read */

static child_t start(int (*fn)(int, int), const char *name)
{
    int to[2], from[2];
    CHECK(pipe(to) == 0 && pipe(from) == 0);
    fflush(NULL);
    child_t c = { fork(), to[1], from[0] };
    CHECK(c.pid >= 0);
    if (c.pid == 0) {
        alarm(60);
        close(to[1]);
        close(from[0]);
        exit(fn ? fn(to[0], from[1]) : run_sender(to[0], from[1], name));
    }
    close(to[0]);
    close(from[1]);
    return c;
}

static void relay(child_t from, child_t to)
{
    char line[LINE_MAX_];
    hear(from.out, line, sizeof line);
    say(to.in, line);
}

static int finished(child_t c, const char *name)
{
    int status;
    CHECK(waitpid(c.pid, &status, 0) == c.pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
    fprintf(stderr, "process %s failed (status 0x%x)\n", name, status);
    return 0;
}

int main(void)
{
    char line[LINE_MAX_];
    unsetenv("DECK_TRANSPORT");                                    /* auto is the dynamic default */
    util_pair_key();                                               /* before the forks: shared */
    util_shm_reclaim();                                            /* left-overs of killed processes */
    int segments = util_shm_segments("");
    child_t r = start(run_r, "R");

    child_t a = start(NULL, "A");
    relay(a, r);
    relay(r, a);
    hear(a.out, line, sizeof line);                                /* "sent" */
    CHECK(kill(a.pid, SIGKILL) == 0);
    int status;
    CHECK(waitpid(a.pid, &status, 0) == a.pid && WIFSIGNALED(status));
    hear(r.out, line, sizeof line);                                /* "A is gone" */

    child_t c = start(NULL, "C");
    relay(c, r);
    relay(r, c);
    hear(c.out, line, sizeof line);                                /* "got it" */

    child_t f = start(run_far, "F");
    relay(f, r);
    relay(r, f);
    hear(f.out, line, sizeof line);                                /* "posted" */
    say(c.in, "go");

    int ok = finished(f, "F") & finished(c, "C") & finished(r, "R");
    ok &= util_shm_segments("dyn") == 0 && util_shm_segments("") == segments;
    printf("%s test_deck_auto\n", ok ? "PASS" : "FAIL");
    return !ok;
}
