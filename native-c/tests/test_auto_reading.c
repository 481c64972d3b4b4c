/*
 * The auto transport with no peer through shared memory (deck/auto_transport.c): a keyed waiter
 * reads the tcp connections itself, as tcp's retrievers do, instead of sleeping on the doorbell
 * while tcp's reader thread and a plain waiter hand the message on. Two dynamic processes, both
 * with shared memory up: W waits, F claims another boot id in its contact (as test_deck_auto's
 * far process), so each reaches the other over tcp. The wait slice is 5 s
 * (DECK_TCP_WAIT_SLICE_MS): a wait that ends well before it was ended by the wake-up under test.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util_deck.h"
#include "util_numbered.h"
#include "../deck/tcp.h"

#define ROUNDS   2000
#define SLICE_MS 5000
#define EARLY_MS (SLICE_MS / 2)
#define KEY      5
#define LINE     (2 * DECK_CONTACT_MAX)
#define NUMBERED_HEAD 8    /* {int sender, int seq} before a numbered message's body */

static void say(int fd, const char *text)
{
    size_t n = strlen(text) + 1;
    CHECK(write(fd, text, n) == (ssize_t)n);
}

static void hear(int fd, char *line)
{
    size_t n = 0;
    while (n + 1 < LINE && read(fd, line + n, 1) == 1 && line[n]) n++;
    line[n] = '\0';
}

/* One keyed wait as MicroVAPI's readers do it: the bell first, then a look, then the wait. A
 * keyed sleeper on the doorbell is not woken by tcp's deliveries (their plain rings wake the
 * plain waiters, of which this process has none): the message must end the wait early. */
static void retrv_keyed(deck_mbox_t *box, deck_msg_t *m)
{
    long t0 = util_now_ms();
    for (;;) {
        uint32_t seen;
        CHECK_OK(deck_mbox_key_seen(box, &seen));
        int rc = deck_mbox_retrv_timed(box, m, 0);
        if (rc == DECK_OK) return;
        CHECK_RC(rc, DECK_ETIMEDOUT);
        CHECK_OK(deck_mbox_key_wait(box, KEY, seen, SLICE_MS));
        CHECK(util_now_ms() - t0 < EARLY_MS);
    }
}

typedef struct {
    deck_mbox_t *box;        /* rung */
    deck_mbox_t *self;       /* posted to instead, when not NULL */
    int          reading;    /* the waiter held the role when the ring came */
} later_t;

static void *ring_later(void *arg)
{
    later_t *l = arg;
    util_sleep_ms(100);
    l->reading = tcp_wait_role_held();
    if (l->self) {
        deck_msg_t m;
        CHECK_OK(deck_msg_create(&m, NUMBERED_HEAD));
        util_post_numbered(l->self, &m, 0, 7, 0);
        CHECK_OK(deck_msg_destroy(&m));
    } else {
        CHECK_OK(deck_mbox_key_ring(l->box, KEY));
    }
    return NULL;
}

/* A keyed wait that something else of this process ends: a ring of its key, or a post. */
static void wait_ended_by(deck_mbox_t *box, deck_mbox_t *self)
{
    later_t l = { box, self, 0 };
    pthread_t t;
    uint32_t seen;
    CHECK_OK(deck_mbox_key_seen(box, &seen));
    long t0 = util_now_ms();
    CHECK(pthread_create(&t, NULL, ring_later, &l) == 0);
    CHECK_OK(deck_mbox_key_wait(box, KEY, seen, 4 * SLICE_MS));
    long waited = util_now_ms() - t0;
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(l.reading);                /* it waited by reading tcp */
    CHECK(waited >= 90 && waited < EARLY_MS);
}

static int run_waiter(int fd)
{
    deck_mbox_t box, self, far;
    deck_msg_t m;
    char line[LINE], contact[DECK_CONTACT_MAX];
    int id;
    CHECK_OK(deck_init_dynamic());
    CHECK_OK(deck_mbox_create(&box, "w-box"));
    hear(fd, line);
    CHECK(sscanf(line, "%d %255s", &id, contact) == 2);
    char mine[DECK_CONTACT_MAX];
    CHECK_OK(deck_contact_for(contact, "127.0.0.1", mine, sizeof mine));
    snprintf(line, sizeof line, "%d %s", deck_node(), mine);
    say(fd, line);
    CHECK_OK(deck_add_peer(id, "127.0.0.1", contact, util_pair_key()));
    CHECK_OK(deck_mbox_clone(&far, "f-box"));
    unsigned long hint = 0;
    CHECK_OK(deck_mbox_post_hint(&far, &hint));
    CHECK(hint == DECK_TCP_POST_HINT);           /* F's route is tcp's */
    CHECK_OK(deck_msg_create(&m, 64));

    /* Its messages reach it through its own reading of the connection. */
    for (int r = 0; r < ROUNDS; r++) {
        int head[2];
        retrv_keyed(&box, &m);
        CHECK_OK(deck_msg_unpack(&m, DECK_INT, head, 2));
        CHECK(head[0] == 1 && head[1] == r && m.len == 40);
        CHECK_OK(deck_mbox_post(&far, &m));
    }
    long held = tcp_wait_frames_held();
    if (held < ROUNDS / 2) fprintf(stderr, "%ld of %d frames read by the waiter\n", held, ROUNDS);
    CHECK(held >= ROUNDS / 2);

    /* Its wait ends at its deadline, and on a ring of its key or a post by another thread. */
    uint32_t seen;
    CHECK_OK(deck_mbox_key_seen(&box, &seen));
    long t0 = util_now_ms();
    CHECK_OK(deck_mbox_key_wait(&box, KEY, seen, 150));
    long waited = util_now_ms() - t0;
    CHECK(waited >= 140 && waited < EARLY_MS);
    wait_ended_by(&box, NULL);
    CHECK_OK(deck_mbox_clone_at(&self, deck_node(), "w-box"));
    wait_ended_by(&box, &self);
    int seq;
    CHECK(util_retrv_numbered(&box, &m, &seq) == 0 && seq == 7);   /* the post that ended it */

    say(fd, "done");
    CHECK_OK(deck_mbox_destroy(&self));
    CHECK_OK(deck_mbox_destroy(&far));
    CHECK_OK(deck_mbox_destroy(&box));
    CHECK_OK(deck_msg_destroy(&m));
    CHECK_OK(deck_done());
    return 0;
}

/* F: its contact's boot id altered, as if it ran on another host; it pings, W answers. */
static int run_far(int fd)
{
    deck_mbox_t mine, wbox;
    deck_msg_t m;
    char line[LINE], contact[DECK_CONTACT_MAX];
    int id;
    CHECK_OK(deck_init_dynamic());
    CHECK_OK(deck_mbox_create(&mine, "f-box"));
    util_contact_elsewhere(contact, sizeof contact);
    snprintf(line, sizeof line, "%d %s", deck_node(), contact);
    say(fd, line);
    hear(fd, line);
    CHECK(sscanf(line, "%d %255s", &id, contact) == 2);
    CHECK_OK(deck_add_peer(id, "127.0.0.1", contact, util_pair_key()));
    CHECK_OK(deck_mbox_clone(&wbox, "w-box"));
    CHECK_OK(deck_msg_create(&m, 64));
    for (int r = 0; r < ROUNDS; r++) {
        int seq;
        util_post_numbered(&wbox, &m, 1, r, 40 - NUMBERED_HEAD);
        CHECK(util_retrv_numbered(&mine, &m, &seq) == 1 && seq == r);
    }
    hear(fd, line);                   /* "done": W no longer needs the connection */
    CHECK_OK(deck_mbox_destroy(&wbox));
    CHECK_OK(deck_mbox_destroy(&mine));
    CHECK_OK(deck_msg_destroy(&m));
    CHECK_OK(deck_done());
    return 0;
}

static pid_t start(int (*fn)(int), int fd, int other)
{
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(60);
        close(other);
        exit(fn(fd));
    }
    return pid;
}

static int finished(pid_t pid, const char *name)
{
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
    fprintf(stderr, "process %s failed (status 0x%x)\n", name, status);
    return 0;
}

int main(void)
{
    char slice[16];
    snprintf(slice, sizeof slice, "%d", SLICE_MS);
    setenv("DECK_TCP_WAIT_SLICE_MS", slice, 1);
    unsetenv("DECK_TRANSPORT");                  /* auto is the dynamic default */
    util_pair_key();                             /* before the forks: shared */
    util_shm_reclaim();
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t w = start(run_waiter, sv[0], sv[1]);
    pid_t f = start(run_far, sv[1], sv[0]);
    close(sv[0]);
    close(sv[1]);
    int ok = finished(f, "F") & finished(w, "W");
    printf("%s test_auto_reading\n", ok ? "PASS" : "FAIL");
    return !ok;
}
