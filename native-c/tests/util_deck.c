#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "util_deck.h"

void util_fail(const char *file, int line, const char *what, int got, int want)
{
    fprintf(stderr, "[pid %d] %s:%d: CHECK failed: %s", (int)getpid(), file, line, what);
    if (got != want) fprintf(stderr, " returned %d (%s), expected %d", got, deck_strerror(got), want);
    fprintf(stderr, "\n  last DECK error: %s\n", deck_last_error());
    exit(1);
}

long util_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

void util_sleep_ms(int ms)
{
    struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static int port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_ANY) };
    int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

int util_free_ports(int n)
{
    for (int attempt = 0; attempt < 200; attempt++) {
        unsigned r = 0;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (unsigned)getpid() * 7919u + (unsigned)attempt;
        int base = 20000 + (int)(r % 30000u), i;
        for (i = 0; i < n && port_free(base + i); i++) {}
        if (i == n) return base;
    }
    fprintf(stderr, "util_free_ports: no %d free consecutive ports found\n", n);
    exit(1);
}

static char secret_path[64];
static pid_t secret_owner;

static void remove_secret(void)
{
    if (secret_owner == getpid()) unlink(secret_path);   /* not in forked children */
}

void util_run_secret(void)
{
    if (getenv("DECK_SECRET_FILE")) return;
    snprintf(secret_path, sizeof secret_path, "/tmp/deck_test_secret_XXXXXX");
    int fd = mkstemp(secret_path);                       /* mode 0600 */
    CHECK(fd >= 0);
    unsigned char bytes[32];
    CHECK(getrandom(bytes, sizeof bytes, 0) == (ssize_t)sizeof bytes);
    CHECK(write(fd, bytes, sizeof bytes) == (ssize_t)sizeof bytes);
    close(fd);
    secret_owner = getpid();
    atexit(remove_secret);
    setenv("DECK_SECRET_FILE", secret_path, 1);
}

const unsigned char *util_pair_key(void)
{
    static unsigned char key[DECK_KEY_BYTES];
    static int made;
    if (!made) CHECK(getrandom(key, sizeof key, 0) == (ssize_t)sizeof key);
    made = 1;
    return key;
}

static const char *nodes_host = "127.0.0.1";

void util_nodes_host(const char *host) { nodes_host = host; }

int util_have_ipv6_loopback(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
    int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

void util_nodes_file(int n, char *path, size_t len)
{
    util_run_secret();
    snprintf(path, len, "/tmp/deck_test_nodes_XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CHECK(f != NULL);
    int base = util_free_ports(n);
    fprintf(f, "# nodes of a test run\n");
    for (int i = 0; i < n; i++) fprintf(f, strchr(nodes_host, ':') ? "[%s]:%d\n" : "%s:%d\n", nodes_host, base + i);
    fclose(f);
}

static void kill_all(pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        if (pids[i] > 0) kill(pids[i], SIGKILL);
}

int util_run_nodes(int n, util_node_fn fn, void *arg, int timeout_s)
{
    char path[64];
    util_nodes_file(n, path, sizeof path);
    fflush(NULL);                         /* no duplicated stdio buffers in the children */
    pid_t pids[64] = { 0 };
    CHECK(n <= 64);
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        CHECK(pids[i] >= 0);
        if (pids[i] == 0) {
            alarm((unsigned)timeout_s);   /* a hung child dies with SIGALRM */
            CHECK_OK(deck_init_static(i, n, path));
            int rc = fn(i, n, arg);
            if (rc == 0) CHECK_OK(deck_done());
            exit(rc);                     /* exit, not _exit: LeakSanitizer checks the child */
        }
    }
    int failed = 0;
    for (int left = n; left > 0; left--) {
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        CHECK(pid > 0);
        int id = 0;
        while (id < n && pids[id] != pid) id++;
        if (id == n) {                    /* another child of the test's (a helper process) */
            left++;
            continue;
        }
        pids[id] = 0;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        if (WIFEXITED(status)) fprintf(stderr, "  node %d exited with %d\n", id, WEXITSTATUS(status));
        else fprintf(stderr, "  node %d killed by signal %d\n", id, WTERMSIG(status));
        if (!failed) kill_all(pids, n);
        failed = 1;
    }
    unlink(path);
    return failed;
}

int util_run_nodes_on(const char *transport, int n, util_node_fn fn, void *arg, int timeout_s)
{
    const char *old = getenv("DECK_TRANSPORT");
    char *saved = old ? strdup(old) : NULL;
    setenv("DECK_TRANSPORT", transport, 1);
    int failed = util_run_nodes(n, fn, arg, timeout_s);
    if (saved) setenv("DECK_TRANSPORT", saved, 1); else unsetenv("DECK_TRANSPORT");
    free(saved);
    return failed;
}

int util_open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL);
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

int util_shm_segments(const char *prefix)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/dev/shm/deck-%u", (unsigned)getuid());
    int count = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;                                  /* no segment was ever made */
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strncmp(e->d_name, prefix, strlen(prefix)) == 0) count++;
    closedir(d);
    return count;
}

static int no_work(int id, int n, void *arg) { return 0; }

void util_shm_reclaim(void)
{
    CHECK(util_run_nodes_on("sci", 1, no_work, NULL, 30) == 0);
}

int util_run_test(const char *name, int n, util_node_fn fn, void *arg)
{
    return util_run_test_on(getenv("DECK_TRANSPORT") ? getenv("DECK_TRANSPORT") : "tcp", name, n, fn, arg);
}

int util_run_test_on(const char *transport, const char *name, int n, util_node_fn fn, void *arg)
{
    long t0 = util_now_ms();
    int failed = util_run_nodes_on(transport, n, fn, arg, 60);
    printf("%s %s (%d processes, %ld ms)\n", failed ? "FAIL" : "PASS", name, n, util_now_ms() - t0);
    fflush(stdout);
    return failed;
}

void util_contact_elsewhere(char *contact, size_t len)
{
    CHECK_OK(deck_contact(contact, len));
    char *shm = strstr(contact, "shm=");
    CHECK(shm != NULL);
    shm[4] = shm[4] == '0' ? '1' : '0';
}
