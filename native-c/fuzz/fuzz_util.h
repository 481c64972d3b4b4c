/*
 * What the fuzz targets (fuzz/fuzz_*.c) share: the libFuzzer entry points, a run secret and a
 * nodes file for the in-process DECK run each target starts once, a silent logger, and the
 * abort that turns a broken invariant into a finding. Header-only (static functions), so that a
 * target is one source file whether libFuzzer (clang, `make fuzz`) or the corpus replay (gcc,
 * fuzz/replay_main.c, `make test`) links it.
 */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "deck.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: says which and aborts, which libFuzzer and the replay report as a crash
 * (with the input that caused it). */
static void fuzz_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn, unused));
static void fuzz_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FUZZ INVARIANT BROKEN: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n  last DECK error: %s\n", deck_last_error());
    va_end(ap);
    abort();
}

/* Log lines (a bad frame ended its connection) are formatted as always, then dropped: an
 * input that sends garbage makes one per run. Reading the line keeps its bytes checked. */
static volatile size_t fuzz_log_bytes __attribute__((unused));
static void __attribute__((unused)) fuzz_quiet(const char *line) { fuzz_log_bytes += strlen(line); }

/* A run secret (mode 0600, random bytes) for the static init, given with deck_set_secret_file
 * and removed again once the init read it. */
static void __attribute__((unused)) fuzz_run_secret(char *path, size_t len)
{
    snprintf(path, len, "/tmp/deck_fuzz_secret_XXXXXX");
    int fd = mkstemp(path);
    unsigned char bytes[32];
    if (fd < 0 || getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes
        || write(fd, bytes, sizeof bytes) != (ssize_t)sizeof bytes)
        fuzz_die("cannot write a run secret in /tmp: %s", strerror(errno));
    close(fd);
    if (deck_set_secret_file(path) != DECK_OK) fuzz_die("deck_set_secret_file");
}

/* A TCP port of 127.0.0.1 that was free just now (the kernel's pick). */
static int __attribute__((unused)) fuzz_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr *)&a, &alen) != 0)
        fuzz_die("cannot find a free port: %s", strerror(errno));
    close(fd);
    return ntohs(a.sin_port);
}

/* A nodes file of n nodes on 127.0.0.1, each on a port that was free. */
static void __attribute__((unused)) fuzz_nodes_file(int n, char *path, size_t len)
{
    snprintf(path, len, "/tmp/deck_fuzz_nodes_XXXXXX");
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) fuzz_die("cannot write a nodes file in /tmp: %s", strerror(errno));
    fprintf(f, "# nodes of an in-process fuzz run\n");
    for (int i = 0; i < n; i++) fprintf(f, "127.0.0.1:%d\n", fuzz_free_port());
    fclose(f);
}

/* Starts node 0 of a static run of n nodes on `transport`, in this process, once. The files
 * the init reads are removed at once (nothing reads them later). */
static void __attribute__((unused)) fuzz_start_static(const char *transport, int n)
{
    char secret[64], nodes[64];
    setenv("DECK_TRANSPORT", transport, 1);
    deck_set_log(fuzz_quiet);
    fuzz_run_secret(secret, sizeof secret);
    fuzz_nodes_file(n, nodes, sizeof nodes);
    int rc = deck_init_static(0, n, nodes);
    unlink(nodes);
    unlink(secret);
    if (rc != DECK_OK) fuzz_die("deck_init_static(0, %d, %s) on %s: %s", n, nodes, transport, deck_strerror(rc));
}

/* Milliseconds on the monotonic clock. */
static long __attribute__((unused)) fuzz_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

#endif
