/*
 * deckrun: starts the N processes of a static DECK run on this host.
 *
 *   deckrun -np N -f nodesfile [-t timeout_s] -- command args...
 *
 * Process i gets DECK_ID=i, DECK_NODES=N and DECK_FILE=nodesfile in its environment (what
 * deck_init reads), and DECK_SECRET_FILE: the run secret, 32 random bytes from the kernel
 * written as hex to a file of mode 0600 in a directory of mode 0700 that deckrun makes (under
 * $TMPDIR, else /tmp) and removes when the run ends; every connection of the run proves itself
 * with it. A DECK_SECRET_FILE already in the environment is used instead (a run across hosts:
 * give every host's deckrun the same file). deckrun waits for all of them; when one fails, or the time limit passes,
 * it stops the others (SIGTERM, then SIGKILL after a grace period) so a run never hangs on
 * processes waiting for a dead peer. Exit status: 0 if every process exited 0, 1 otherwise,
 * 2 for a usage error.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GRACE_S 3

/* Only there so that SIGCHLD is delivered (kept pending) rather than discarded. */
static void on_child(int sig) { (void)sig; }

static int usage(const char *why)
{
    fprintf(stderr, "deckrun: %s\nusage: deckrun -np N -f nodesfile [-t timeout_s] -- command args...\n", why);
    return 2;
}

static char secret_dir[4096], secret_file[4096 + 16];

/* The run secret of this run, unless the environment names one; 0 or -1 (message printed). */
static int make_secret(void)
{
    if (getenv("DECK_SECRET_FILE") && *getenv("DECK_SECRET_FILE")) return 0;
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(secret_dir, sizeof secret_dir, "%s/deckrun-XXXXXX", tmp);
    if (!mkdtemp(secret_dir)) { perror("deckrun: creating the run secret's directory"); secret_dir[0] = 0; return -1; }
    snprintf(secret_file, sizeof secret_file, "%s/secret", secret_dir);
    unsigned char key[32];
    char hex[2 * sizeof key + 1];
    if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key) { perror("deckrun: getrandom"); return -1; }
    for (size_t i = 0; i < sizeof key; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
    int fd = open(secret_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int ok = fd >= 0 && write(fd, hex, 2 * sizeof key) == (ssize_t)(2 * sizeof key);
    if (fd >= 0) close(fd);
    memset(key, 0, sizeof key);
    if (!ok) { perror("deckrun: writing the run secret"); return -1; }
    setenv("DECK_SECRET_FILE", secret_file, 1);
    return 0;
}

static void remove_secret(void)
{
    if (secret_file[0]) unlink(secret_file);
    if (secret_dir[0]) rmdir(secret_dir);
}

static void spawn(int id, int n, const char *file, char **cmd, pid_t *pids)
{
    pid_t pid = fork();
    if (pid < 0) { perror("deckrun: fork"); return; }
    if (pid > 0) { pids[id] = pid; return; }
    char v[16];
    snprintf(v, sizeof v, "%d", id);
    setenv("DECK_ID", v, 1);
    snprintf(v, sizeof v, "%d", n);
    setenv("DECK_NODES", v, 1);
    setenv("DECK_FILE", file, 1);
    execvp(cmd[0], cmd);
    fprintf(stderr, "deckrun: node %d: cannot run %s: %s\n", id, cmd[0], strerror(errno));
    _exit(127);
}

static void signal_all(pid_t *pids, int n, int sig)
{
    for (int i = 0; i < n; i++)
        if (pids[i] > 0) kill(pids[i], sig);
}

static int find(const pid_t *pids, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (pids[i] == pid) return i;
    return -1;
}

/* First step of stopping the run: SIGTERM now, SIGKILL when the grace period is over. */
static void stop_all(pid_t *pids, int n, int *stopping, time_t *deadline)
{
    signal_all(pids, n, SIGTERM);
    *stopping = 1;
    *deadline = time(NULL) + GRACE_S;
}

/* Reports how process `id` ended; returns 1 if it failed. */
static int report(int id, int status)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (WIFEXITED(status)) fprintf(stderr, "deckrun: node %d exited with status %d\n", id, WEXITSTATUS(status));
    else fprintf(stderr, "deckrun: node %d killed by signal %d (%s)\n", id, WTERMSIG(status), strsignal(WTERMSIG(status)));
    return 1;
}

int main(int argc, char **argv)
{
    int n = 0, timeout = 0, i;
    const char *file = NULL;
    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (i + 1 >= argc) return usage("option without a value");
        if (strcmp(argv[i], "-np") == 0) n = atoi(argv[++i]);
        else if (strcmp(argv[i], "-f") == 0) file = argv[++i];
        else if (strcmp(argv[i], "-t") == 0) timeout = atoi(argv[++i]);
        else return usage("unknown option");
    }
    if (i + 1 >= argc) return usage("no command after --");
    if (n < 1 || n > 4096) return usage("-np needs a process count in 1..4096");
    if (!file || access(file, R_OK) != 0) return usage("-f needs a readable nodes file");
    char **cmd = &argv[i + 1];

    /* SIGCHLD stays blocked and is taken with sigtimedwait: waiting for "a child ended or the
     * time is up" then has no window where a signal is lost. */
    struct sigaction sa = { .sa_handler = on_child };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);

    pid_t *pids = calloc((size_t)n, sizeof *pids);
    if (!pids) return usage("out of memory");
    if (make_secret() != 0) { remove_secret(); free(pids); return 1; }
    for (int id = 0; id < n; id++) spawn(id, n, file, cmd, pids);
    int failed = 0, running = 0, stopping = 0;
    time_t deadline = timeout > 0 ? time(NULL) + timeout : 0;
    for (int id = 0; id < n; id++) {
        if (pids[id] > 0) running++;
        else { fprintf(stderr, "deckrun: node %d could not be started\n", id); failed++; }
    }
    if (failed) stop_all(pids, n, &stopping, &deadline);

    while (running > 0) {
        int status;
        pid_t pid;
        while (running > 0 && (pid = waitpid(-1, &status, WNOHANG)) > 0) {
            int id = find(pids, n, pid);
            if (id < 0) continue;
            pids[id] = 0;
            running--;
            int bad = report(id, status);
            failed += bad;
            if (bad && !stopping) {
                fprintf(stderr, "deckrun: stopping the other processes\n");
                stop_all(pids, n, &stopping, &deadline);
            }
        }
        if (running == 0) break;
        time_t now = time(NULL);
        if (deadline && now >= deadline) {
            if (!stopping) {
                fprintf(stderr, "deckrun: time limit of %d s reached, stopping the run\n", timeout);
                failed++;
                stop_all(pids, n, &stopping, &deadline);
            } else {
                signal_all(pids, n, SIGKILL);
                deadline = 0;
            }
            continue;
        }
        struct timespec wait = { deadline ? deadline - now : 3600, 0 };
        sigtimedwait(&chld, NULL, &wait);
    }
    free(pids);
    remove_secret();
    return failed ? 1 : 0;
}
