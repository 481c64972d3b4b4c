/*
 * Helpers for the C tests: assertion macros that name the failed check and DECK's last error,
 * free TCP ports, nodes files, and running a function in N forked DECK processes.
 */
#ifndef UTIL_DECK_H
#define UTIL_DECK_H

#include <stddef.h>
#include "deck.h"

/* Prints where and what failed (with deck_last_error) and exits the process with 1. */
void util_fail(const char *file, int line, const char *what, int got, int want);

#define CHECK(cond) do { if (!(cond)) util_fail(__FILE__, __LINE__, #cond, 0, 0); } while (0)
#define CHECK_RC(call, want) do { int rc_ = (call); \
        if (rc_ != (want)) util_fail(__FILE__, __LINE__, #call, rc_, (want)); } while (0)
#define CHECK_OK(call) CHECK_RC(call, DECK_OK)

/* First of n consecutive TCP ports that could all be bound just now (random start). */
int util_free_ports(int n);
/* Makes sure DECK_SECRET_FILE names a run secret (a 0600 file of random bytes, removed when the
 * process that made it exits): what deckrun gives a static run. */
void util_run_secret(void);
/* A random pair key, the same in every process forked after the first call (dynamic tests). */
const unsigned char *util_pair_key(void);
/* Writes a temporary nodes file "127.0.0.1:port" for n nodes on free ports; path gets its name;
 * also makes the run secret (util_run_secret). */
void util_nodes_file(int n, char *path, size_t len);
/* The host the nodes files name from now on (127.0.0.1 at first; an IPv6 literal is written
 * "[v6]:port"): util_run_nodes runs over IPv6 as well. */
void util_nodes_host(const char *host);
/* Whether this host has IPv6 on loopback (::1 can be bound): a test that needs it skips without. */
int util_have_ipv6_loopback(void);
/* This process's deck_contact (auto transport) with its boot id altered, as a process on another
 * host gives it: a peer on this host reaches it over tcp all the same. */
void util_contact_elsewhere(char *contact, size_t len);
/* Entries of /proc/self/fd: this process's open descriptors (and the one reading them). */
int util_open_fds(void);
/* Milliseconds on the monotonic clock. */
long util_now_ms(void);
void util_sleep_ms(int ms);

/* Runs fn(id, n, arg) in n forked processes, each inside deck_init_static on a fresh nodes
 * file; deck_done follows a zero return. A child is killed after timeout_s. Returns 0 when
 * every child exited 0, else prints which failed, kills the rest and returns 1. Other children
 * of the caller that end meanwhile are reaped and ignored. */
typedef int (*util_node_fn)(int id, int n, void *arg);
int util_run_nodes(int n, util_node_fn fn, void *arg, int timeout_s);

/* Same, with DECK_TRANSPORT set to `transport` ("tcp", "sci") in the children. */
int util_run_nodes_on(const char *transport, int n, util_node_fn fn, void *arg, int timeout_s);

/* How many shared segments (and claims) of this user whose names start with `prefix` (a
 * static run's DECK_RUN_KEY, "dyn" for dynamic claims, "" for all) are in its directory
 * /dev/shm/deck-<uid> (sci transport). */
int util_shm_segments(const char *prefix);

/* Removes what dead processes left in this user's segment directory (as every sci deck_init
 * does first), so that a count of it taken next changes only with the caller's own processes. */
void util_shm_reclaim(void);

/* Runs the named test function and prints PASS/FAIL; returns 1 on failure. */
int util_run_test(const char *name, int n, util_node_fn fn, void *arg);
/* Same, with DECK_TRANSPORT set to `transport` in the children. */
int util_run_test_on(const char *transport, const char *name, int n, util_node_fn fn, void *arg);

#endif
