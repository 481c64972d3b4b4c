/*
 * Dynamic mode: two processes with ids of their own learn each other through a pipe as a
 * bootstrap would introduce them: side 1 (the client) tells its id and deck_contact, side 0 (the
 * server) answers with its id and deck_contact_for that contact; both add the other with the
 * same pair key, clone each other's mailbox and exchange small and multi-MiB messages both ways;
 * once with DECK_TRANSPORT=tcp (only the server listens, and only once the client is added:
 * before, its port is bound and refuses connections; the client connects and the server
 * sends over that connection), once more over tcp with DECK_TCP_ENCRYPTION=on (TLS 1.3), once
 * over tcp with the server listening on another address than the bootstrap's (its contact says
 * "host=127.0.0.2"), once
 * with auto, which must reach the other process (same host) through sci, neither side
 * listening on any port. Where the host has IPv6 on loopback, tcp and auto once more with the
 * bootstrap on ::1 (spelt as Java's Inet6Address prints it; auto must still take sci), and tcp
 * with the server listening on ::1 while the bootstrap came to 127.0.0.1 ("host=::1").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util_deck.h"
#include "../deck/tcp.h"

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

/* The tcp ports this process listens on, from /proc/net/tcp or tcp6 (sockets in state LISTEN
 * whose inode is one of this process's descriptors). */
static int listening_ports_in(const char *table)
{
    char line[512], path[64], link[64];
    int count = 0;
    FILE *f = fopen(table, "r");
    if (!f) return 0;                                     /* tcp6: a host without IPv6 */
    CHECK(f != NULL);
    CHECK(fgets(line, sizeof line, f) != NULL);           /* the header */
    while (fgets(line, sizeof line, f)) {
        unsigned state;
        unsigned long inode;
        if (sscanf(line, "%*d: %*x:%*x %*x:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu", &state, &inode) != 2 || state != 0x0A)
            continue;
        for (int fd = 0; fd < 1024; fd++) {
            snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
            ssize_t n = readlink(path, link, sizeof link - 1);
            if (n <= 0) continue;
            link[n] = '\0';
            unsigned long own;
            if (sscanf(link, "socket:[%lu]", &own) == 1 && own == inode) count++;
        }
    }
    fclose(f);
    return count;
}

static int listening_ports(void)
{
    return listening_ports_in("/proc/net/tcp") + listening_ports_in("/proc/net/tcp6");
}

/* The address the bootstrap came to, as the server's Java names it, and another spelling of it
 * (adding the peer again there is fine). */
static const char *boot_at = "127.0.0.1", *boot_again = "127.1";

/* Whether a connection to boot_at:port is refused (nothing listens there). */
static int refused(int port)
{
    tcp_sockaddr_t a;
    CHECK_OK(tcp_resolve(boot_at, port, 1, &a, "test"));
    int fd = socket(a.sa.sa_family, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    int rc = connect(fd, &a.sa, tcp_addr_len(&a)), err = errno;
    close(fd);
    return rc != 0 && err == ECONNREFUSED;
}

/* deck_listen_address of the server side, or NULL: it listens where the bootstrap came to. */
static const char *listen_at;

static int side(int who, int wfd, int rfd, const char *transport)
{
    char contact[DECK_CONTACT_MAX], peer_contact[DECK_CONTACT_MAX], line[2 * DECK_CONTACT_MAX];
    alarm(60);
    CHECK_OK(deck_init_dynamic());
    int self = deck_node(), peer;
    CHECK(self > 65535);
    CHECK(deck_numnodes() == 1);
    CHECK_RC(deck_barrier(), DECK_ESTATE);
    CHECK(listening_ports() == 0);                          /* no port before a peer needs one */
    FILE *in = fdopen(rfd, "r");
    CHECK(in != NULL);
    if (who == 1) {
        CHECK_OK(deck_contact(contact, sizeof contact));
        CHECK(strcmp(contact, "tcp") == 0 || strncmp(contact, "shm=", 4) == 0);
        int n = snprintf(line, sizeof line, "%d %s\n", self, contact);
        CHECK(write(wfd, line, (size_t)n) == n);
    }
    CHECK(fscanf(in, "%d %255s", &peer, peer_contact) == 2);
    if (who == 0) {
        /* A client's contact never names a port or a host: this side would connect there. */
        CHECK_RC(deck_contact_for("tcp,port=22,host=10.0.0.1", "127.0.0.1", contact, sizeof contact), DECK_EINVAL);
        CHECK_RC(deck_contact_for("port=22", "127.0.0.1", contact, sizeof contact), DECK_EINVAL);
        /* The bootstrap came to 127.0.0.1; a server with deck_listen_address listens elsewhere
         * and says where (DeckPeerIntroducer appends the host part). */
        CHECK_OK(deck_contact_for(peer_contact, listen_at ? listen_at : boot_at, contact, sizeof contact));
        if (listen_at && strncmp(contact, "port=", 5) == 0)
            snprintf(contact + strlen(contact), sizeof contact - strlen(contact), ",host=%s", listen_at);
        int n = snprintf(line, sizeof line, "%d %s\n", self, contact);
        CHECK(write(wfd, line, (size_t)n) == n);
    }
    fclose(in);
    CHECK(peer != self);
    /* tcp: the server binds a port, on the bootstrap's address, for this peer, and listens
     * there only once a peer proved itself (deck_add_peer); auto: nobody does either. */
    int tcp = strcmp(transport, "tcp") == 0;
    const char *server = who == 0 ? contact : peer_contact;
    CHECK(tcp ? strncmp(server, "port=", 5) == 0 : strncmp(server, "shm=", 4) == 0);
    CHECK(listening_ports() == 0);
    if (tcp && who == 0) CHECK(refused(atoi(contact + 5)));

    const unsigned char *key = util_pair_key();
    unsigned char other[DECK_KEY_BYTES], got[DECK_KEY_BYTES];
    memcpy(other, key, sizeof other);
    other[0] ^= 1;
    CHECK_RC(deck_peer_key(peer, got), DECK_ENOTFOUND);
    CHECK_RC(deck_add_peer(peer, boot_at, "bogus", key), DECK_EINVAL);
    CHECK(listening_ports() == 0);
    CHECK_OK(deck_add_peer(peer, boot_at, peer_contact, key));
    CHECK(listening_ports() == (tcp && who == 0));
    CHECK_OK(deck_add_peer(peer, boot_again, peer_contact, key));  /* same address again: fine */
    CHECK_RC(deck_add_peer(peer, boot_at, peer_contact, other), DECK_EEXIST); /* another key: never */
    if (who == 1 && tcp) CHECK_RC(deck_add_peer(peer, boot_at, "port=1", key), DECK_EEXIST);
    CHECK_OK(deck_peer_key(peer, got));
    CHECK(memcmp(got, key, sizeof got) == 0);
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
    CHECK_OK(deck_mbox_watch(&mine, peer));
    snprintf(name, sizeof name, "box-of-%d", 1 - who);
    if (who == 0) CHECK_OK(deck_mbox_clone_at(&theirs, peer, name));
    else CHECK_OK(deck_mbox_clone(&theirs, name));
    CHECK(theirs.node == peer);

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
    util_pair_key();                      /* made here: both forked sides share it */
    int failed = run_pair("tcp");
    setenv("DECK_TCP_ENCRYPTION", "on", 1);
    failed |= run_pair("tcp");
    unsetenv("DECK_TCP_ENCRYPTION");
    listen_at = "127.0.0.2";              /* a loopback address the client's bootstrap did not use */
    failed |= run_pair("tcp");
    listen_at = NULL;
    failed |= run_pair("auto");
    if (util_have_ipv6_loopback()) {
        boot_at = "0:0:0:0:0:0:0:1";      /* Inet6Address.getHostAddress() of ::1 */
        boot_again = "[::1]";
        failed |= run_pair("tcp");
        failed |= run_pair("auto");       /* same host: sci, whatever the bootstrap's family */
        boot_at = "127.0.0.1";
        boot_again = "127.1";
        listen_at = "::1";
        failed |= run_pair("tcp");
        listen_at = NULL;
    } else {
        printf("SKIP test_deck_dynamic over IPv6: this host has no IPv6 on loopback (::1 cannot be bound)\n");
    }
    printf("%s test_deck_dynamic\n", failed ? "FAIL" : "PASS");
    return failed;
}
