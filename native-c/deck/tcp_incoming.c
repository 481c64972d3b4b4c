/*
 * The receiving half of the TCP transport: one accept thread and one reader thread per
 * incoming connection. A reader blocks in recv, reads each message straight into a queue
 * element and hands it to its mailbox, so a slow or absent retriever never stalls the socket.
 * Stopping shuts the sockets down (blocked accept/recv return) and joins every thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "tcp.h"

/* A frame longer than this is treated as a corrupt stream, not as a request to allocate it. */
#define MAX_PAYLOAD (1ULL << 36)

typedef struct reader {
    int            fd;
    deck_thread_t  thread;
    struct reader *next;
} reader_t;

static int           listen_fd = -1;
static deck_thread_t accept_thread;
static atomic_int    stopping;
static deck_mutex_t  readers_lock = PTHREAD_MUTEX_INITIALIZER;
static reader_t     *readers;

static void answer_lookup(int fd, int self, uint64_t len)
{
    char name[DECK_MBOX_NAME_MAX];
    tcp_frame_t reply = { FRAME_LOOKUP_REPLY, self, -1, 0 };
    if (len >= sizeof name || tcp_read_full(fd, name, len) <= 0) {
        shutdown(fd, SHUT_RDWR);        /* corrupt request: end the conversation */
        return;
    }
    name[len] = '\0';
    int index;
    if (deck_table_find(name, &index) == DECK_OK) reply.index = index;
    tcp_send_frame(fd, &reply, NULL);   /* a failure shows up as EOF at the asking side */
}

/* Reads one DATA payload into a queue element and delivers it; 0 when the stream broke. */
static int receive_data(int fd, const tcp_frame_t *f)
{
    if (f->len > MAX_PAYLOAD) return 0;
    deck_qmsg_t *q = deck_qmsg_alloc((size_t)f->len);
    if (!q) return 0;
    if (tcp_read_full(fd, q->data, (size_t)f->len) <= 0) { free(q); return 0; }
    deck_core_deliver(f->index, q);     /* for a destroyed mailbox it is dropped */
    return 1;
}

static void *reader_main(void *arg)
{
    reader_t *r = arg;
    int self = deck_core_self();
    tcp_peer_t *from = NULL;
    tcp_frame_t f;
    while (!atomic_load(&stopping) && tcp_read_frame(r->fd, &f) > 0) {
        if (f.type == FRAME_HELLO && !from) {
            if (!(from = tcp_peer_learn(f.src))) break;     /* not a process of this run */
        } else if (!from) {
            break;                                          /* must greet first */
        } else if (f.type == FRAME_DATA) {
            if (!receive_data(r->fd, &f)) break;
        } else if (f.type == FRAME_LOOKUP) {
            answer_lookup(r->fd, self, f.len);
        } else if (f.type == FRAME_BARRIER_ARRIVE || f.type == FRAME_BARRIER_RELEASE) {
            tcp_barrier_on_frame(&f);
        } else {
            break;
        }
    }
    /* One connection per peer and run: when it ends, the peer has left. */
    if (from) tcp_peer_mark_gone(from);
    return NULL;
}

static void start_reader(int fd)
{
    reader_t *r = calloc(1, sizeof *r);
    if (!r) { close(fd); return; }
    r->fd = fd;
    deck_mutex_lock(&readers_lock);
    if (deck_thread_create(&r->thread, reader_main, r) != DECK_OK) {
        deck_mutex_unlock(&readers_lock);
        close(fd);
        free(r);
        return;
    }
    r->next = readers;
    readers = r;
    deck_mutex_unlock(&readers_lock);
}

static void *accept_main(void *arg)
{
    while (!atomic_load(&stopping)) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) { start_reader(fd); continue; }
        if (atomic_load(&stopping)) break;
        if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS) {
            /* Out of descriptors: wait a little instead of spinning on the same error. */
            struct timespec pause = { 0, 100 * 1000000L };
            nanosleep(&pause, NULL);
        }
    }
    return NULL;
}

int tcp_incoming_start(int port, int *bound_port, const char *what)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return deck_fail_errno(DECK_EIO, errno, "%s: socket", what);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_ANY) };
    socklen_t alen = sizeof addr;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 128) != 0
        || getsockname(fd, (struct sockaddr *)&addr, &alen) != 0) {
        int err = errno;
        close(fd);
        return deck_fail_errno(DECK_EIO, err, "%s: listening on port %d", what, port);
    }
    *bound_port = ntohs(addr.sin_port);
    listen_fd = fd;
    atomic_store(&stopping, 0);
    int rc = deck_thread_create(&accept_thread, accept_main, NULL);
    if (rc) { close(fd); listen_fd = -1; }
    return rc;
}

void tcp_incoming_stop(void)
{
    atomic_store(&stopping, 1);
    shutdown(listen_fd, SHUT_RDWR);        /* wakes accept() on Linux */
    deck_thread_join(accept_thread, NULL);
    close(listen_fd);
    listen_fd = -1;
    /* No new readers now; wake and join the existing ones. */
    deck_mutex_lock(&readers_lock);
    reader_t *list = readers;
    readers = NULL;
    deck_mutex_unlock(&readers_lock);
    for (reader_t *r = list; r; r = r->next) shutdown(r->fd, SHUT_RDWR);
    while (list) {
        reader_t *next = list->next;
        deck_thread_join(list->thread, NULL);
        close(list->fd);
        free(list);
        list = next;
    }
}
