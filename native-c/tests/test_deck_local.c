/*
 * One process: initialisation paths (options, environment, bad configuration, init again after
 * done), mailboxes inside one process, destroy waking a retriever, the threads wrapper.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util_deck.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

static void test_init_from_options_and_environment(void)
{
    char path[64], id[] = "-deck_id", zero[] = "0", nodes[] = "-deck_nodes", one[] = "1",
         file[] = "-deck_file", prog[] = "prog", keep[] = "keep";
    util_nodes_file(1, path, sizeof path);
    char *argv[] = { prog, id, zero, keep, nodes, one, file, path, NULL };
    int argc = 8;
    char **av = argv;
    unsetenv("DECK_ID");
    CHECK_OK(deck_init(&argc, &av));
    CHECK(argc == 2 && strcmp(av[0], "prog") == 0 && strcmp(av[1], "keep") == 0 && av[2] == NULL);
    CHECK(deck_is_initialized() && deck_node() == 0 && deck_numnodes() == 1);
    CHECK_OK(deck_barrier());                                  /* one node: returns at once */
    CHECK_RC(deck_init(&argc, &av), DECK_ESTATE);
    CHECK_RC(deck_add_peer(5, "127.0.0.1", "port=1", util_pair_key()), DECK_ESTATE);
    CHECK_OK(deck_done());
    CHECK(!deck_is_initialized());
    CHECK_RC(deck_done(), DECK_ESTATE);

    /* The environment deckrun sets, twice in a row: deck_done leaves nothing behind. */
    setenv("DECK_ID", "0", 1);
    setenv("DECK_NODES", "1", 1);
    setenv("DECK_FILE", path, 1);
    for (int round = 0; round < 2; round++) {
        argc = 1;
        CHECK_OK(deck_init(&argc, &av));
        CHECK(deck_node() == 0);
        CHECK_OK(deck_done());
    }
    unsetenv("DECK_ID");
    argc = 1;
    CHECK_RC(deck_init(&argc, &av), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), "deckrun") != NULL);
    unlink(path);
}

static void test_configuration_errors_name_the_file(void)
{
    char path[] = "/tmp/deck_test_bad_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    write_file(path, "# two nodes\n127.0.0.1:1\n\n127.0.0.1:notaport\n");
    CHECK_RC(deck_init_static(0, 2, path), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), path) && strstr(deck_last_error(), "line 4"));
    write_file(path, "127.0.0.1\n");
    CHECK_RC(deck_init_static(0, 3, path), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), "lists 1 node"));
    write_file(path, "127.0.0.1\nno-such-host.invalid\n");
    CHECK_RC(deck_init_static(0, 2, path), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), "no-such-host.invalid"));
    CHECK_RC(deck_init_static(0, 0, path), DECK_ECONFIG);
    CHECK_RC(deck_init_static(2, 2, path), DECK_ECONFIG);
    CHECK_RC(deck_init_static(0, 1, "/nonexistent/nodes"), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), "/nonexistent/nodes"));
    setenv("DECK_TRANSPORT", "carrier-pigeon", 1);
    CHECK_RC(deck_init_dynamic(), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), "carrier-pigeon"));
    unsetenv("DECK_TRANSPORT");
    CHECK(!deck_is_initialized());
    unlink(path);
}

/* A static run needs its run secret, in a file only this user can read; the error names it. */
static void test_run_secret_is_checked(void)
{
    char nodes[64], secret[] = "/tmp/deck_test_secret_XXXXXX";
    util_nodes_file(1, nodes, sizeof nodes);
    char *saved = strdup(getenv("DECK_SECRET_FILE"));
    int fd = mkstemp(secret);
    CHECK(fd >= 0);
    close(fd);
    unsetenv("DECK_SECRET_FILE");
    CHECK_RC(deck_init_static(0, 1, nodes), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), "DECK_SECRET_FILE") && strstr(deck_last_error(), "deckrun"));
    setenv("DECK_SECRET_FILE", secret, 1);
    write_file(secret, "short");
    CHECK_RC(deck_init_static(0, 1, nodes), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), secret) && strstr(deck_last_error(), "5 bytes"));
    write_file(secret, "0123456789abcdef0123456789abcdef");
    CHECK(chmod(secret, 0644) == 0);
    CHECK_RC(deck_init_static(0, 1, nodes), DECK_ECONFIG);
    CHECK(strstr(deck_last_error(), secret) && strstr(deck_last_error(), "0600"));
    CHECK(chmod(secret, 0600) == 0);
    CHECK_OK(deck_init_static(0, 1, nodes));
    /* Every pair of a static run proves itself with the run key. */
    unsigned char run[DECK_KEY_BYTES];
    CHECK_OK(deck_peer_key(0, run));
    CHECK_RC(deck_peer_key(1, run), DECK_ENOTFOUND);           /* not a node of this run */
    CHECK_OK(deck_done());
    setenv("DECK_SECRET_FILE", saved, 1);
    free(saved);
    unlink(secret);
    unlink(nodes);
}

typedef struct { deck_mbox_t *mb; int rc; } waiter_t;

static void *retrieve_until_destroyed(void *arg)
{
    waiter_t *w = arg;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 16));
    w->rc = deck_mbox_retrv(w->mb, &m);
    CHECK_OK(deck_msg_destroy(&m));
    return NULL;
}

static void test_mailboxes_in_one_process(void)
{
    char path[64];
    util_nodes_file(1, path, sizeof path);
    CHECK_OK(deck_init_static(0, 1, path));
    deck_mbox_t own, to_own, doomed;
    deck_msg_t m;
    CHECK_OK(deck_msg_create(&m, 16));
    CHECK_OK(deck_mbox_create(&own, "own"));
    CHECK_OK(deck_mbox_clone(&to_own, "own"));                 /* found locally, at once */
    CHECK(to_own.node == 0 && to_own.index == own.index);
    for (int i = 0; i < 100; i++) {
        CHECK_OK(deck_msg_clear(&m));
        CHECK_OK(deck_msg_pack(&m, DECK_INT, &i, 1));
        CHECK_OK(deck_mbox_post(&to_own, &m));
    }
    for (int i = 0; i < 100; i++) {
        int v;
        CHECK_OK(deck_mbox_retrv(&own, &m));
        CHECK_OK(deck_msg_unpack(&m, DECK_INT, &v, 1));
        CHECK(v == i);
    }
    CHECK_RC(deck_mbox_post(&own, &m), DECK_ESTATE);           /* a created mailbox receives */
    CHECK_RC(deck_mbox_watch(&own, 0), DECK_EINVAL);
    CHECK_RC(deck_mbox_create(&doomed, ""), DECK_EINVAL);

    /* destroy wakes a blocked retriever with ECLOSED */
    CHECK_OK(deck_mbox_create(&doomed, "doomed"));
    waiter_t w = { &doomed, 1 };
    deck_thread_t t;
    CHECK_OK(deck_thread_create(&t, retrieve_until_destroyed, &w));
    util_sleep_ms(100);
    CHECK_OK(deck_mbox_destroy(&doomed));
    CHECK_OK(deck_thread_join(t, NULL));
    CHECK(w.rc == DECK_ECLOSED);
    /* the name is free again; a post through the old clone of a destroyed mailbox is dropped */
    deck_mbox_t again, stale;
    CHECK_OK(deck_mbox_create(&again, "again"));
    CHECK_OK(deck_mbox_clone(&stale, "again"));
    CHECK_OK(deck_mbox_destroy(&again));
    CHECK_OK(deck_mbox_create(&again, "again"));
    CHECK(again.index != stale.index);
    CHECK_RC(deck_mbox_post(&stale, &m), DECK_ENOTFOUND);
    CHECK_RC(deck_mbox_retrv_timed(&again, &m, 0), DECK_ETIMEDOUT);
    /* messages still queued at deck_done are freed by it (LeakSanitizer checks) */
    CHECK_OK(deck_mbox_post(&to_own, &m));
    CHECK_OK(deck_mbox_destroy(&to_own));
    CHECK_OK(deck_msg_destroy(&m));
    CHECK_OK(deck_done());
    CHECK_RC(deck_mbox_create(&own, "x"), DECK_ESTATE);
    unlink(path);
}

static deck_sema_t sema;

static void *post_sema(void *arg)
{
    util_sleep_ms(50);
    CHECK_OK(deck_sema_post(&sema));
    return (void *)0x2a;
}

static void test_threads_wrapper(void)
{
    deck_mutex_t mu;
    deck_cond_t cv;
    CHECK_OK(deck_mutex_init(&mu));
    CHECK_OK(deck_cond_init(&cv));
    CHECK_OK(deck_mutex_lock(&mu));
    long t0 = util_now_ms();
    CHECK_RC(deck_cond_timedwait_ms(&cv, &mu, 80), DECK_ETIMEDOUT);
    CHECK(util_now_ms() - t0 >= 80);
    CHECK_OK(deck_cond_signal(&cv));
    CHECK_OK(deck_cond_broadcast(&cv));
    CHECK_OK(deck_mutex_unlock(&mu));
    CHECK_OK(deck_cond_destroy(&cv));
    CHECK_OK(deck_mutex_destroy(&mu));

    CHECK_OK(deck_sema_init(&sema, 0));
    deck_thread_t t;
    void *result;
    CHECK_OK(deck_thread_create(&t, post_sema, NULL));
    CHECK_OK(deck_sema_wait(&sema));
    CHECK_OK(deck_thread_join(t, &result));
    CHECK(result == (void *)0x2a);
    CHECK_OK(deck_sema_destroy(&sema));
}

int main(void)
{
    test_init_from_options_and_environment();
    test_configuration_errors_name_the_file();
    test_run_secret_is_checked();
    test_mailboxes_in_one_process();
    test_threads_wrapper();
    printf("PASS test_deck_local\n");
    return 0;
}
