/*
 * Releasing the spin locks a dead shm peer held. libfabric's shm guards each endpoint's region
 * with a pthread spin lock inside the shared memory (fab_shm_region.h): the owner takes it to
 * read its queues, a sender takes the receiver's to push a command. A process killed while it
 * held one never releases it, and the next thread of ours to take it spins inside libfabric for
 * ever: a send to the dead peer (its own region's lock), or a read of our endpoint (our
 * region's lock, held by the peer that was sending to us). That thread holds its queue pair's
 * lock, so whoever else waits on the queue pair waits too: the application never learns of the
 * peer's death (test_fabric_death_writer hung so in CI; test_fabric_death_locked makes it
 * happen). fab_reap.c's look at the peer's pid before a send narrows the first case to a
 * millisecond; nothing narrows the second.
 *
 * So each connected shm queue pair maps the heads of both regions, its endpoint's and its
 * peer's, and a thread of this file's, which never calls into libfabric (any thread that does,
 * the keeper too, may be the one that spins), looks every RESCUE_MS and releases either lock
 * when it is held and the peer's process has ended (a lock is held rarely and briefly while
 * the peer lives: a look costs a load per region, and a look at /proc for each held one). That
 * is safe because a region of this library's has two users only, its owner and its one peer
 * (an endpoint per queue pair, one peer in its address vector), and in this process only the
 * holder of the queue pair's lock calls into that endpoint (shm has no wait object, so
 * fab_wait's fi_trywait never runs for it): with the peer dead, the lock's holder is either
 * the dead peer or that one thread of ours, and releasing it under our own thread lets no one
 * else in, since no one else is left to enter. What the dead peer was writing under the lock
 * is left half done: shm publishes a command only once it is whole, and the queue pair fails at
 * once (fab_progress.c: a peer that has ended), after which only our own cancelled receives
 * are read back.
 *
 * Queue pairs are watched from their connect to their endpoint's close, those of every HCA of
 * the process; the thread runs while one is watched (it is joined when the last one goes, so
 * a process's threads come back to what they were).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fab_internal.h"
#include "fab_shm_region.h"

#define RESCUE_MS 100

struct watched {
    const struct fab_qp        *qp;
    long                        peer_pid;
    struct fab_shm_region_head *regions[2];   /* ours, the peer's; either may be NULL */
};

/* A rescuer thread; a new one may start while the last one, told to stop, is being joined. */
struct rescuer {
    pthread_t thread;
    int       stop;   /* under lock */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;   /* a rescuer's stop */
static struct watched *list;
static uint32_t n, cap;
static struct rescuer *running;   /* the rescuer while anything is watched */

struct fab_shm_region_head *fab_shm_region_map(const char *object, long pid)
{
    int fd = shm_open(object, O_RDWR, 0);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(struct fab_shm_region_head))
        p = mmap(NULL, sizeof(struct fab_shm_region_head), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    struct fab_shm_region_head *head = p;
    if ((head->version != 4 && head->version != 5) || head->pid != pid) {
        fab_shm_region_unmap(head);
        return NULL;
    }
    return head;
}

void fab_shm_region_unmap(struct fab_shm_region_head *head)
{
    if (head)
        munmap(head, sizeof *head);
}

/* The word of an unlocked pthread spin lock: 1 on x86-64's glibc, 0 on most others. */
static int unlocked_word(void)
{
    _Static_assert(sizeof(pthread_spinlock_t) == sizeof(int), "a pthread spin lock is an int");
    pthread_spinlock_t l;
    pthread_spin_init(&l, PTHREAD_PROCESS_SHARED);
    int word;
    memcpy(&word, (const void *)&l, sizeof word);
    pthread_spin_destroy(&l);
    return word;
}

/* One look at every watched region, with lock held. */
static void round_locked(int unlocked)
{
    for (uint32_t i = 0; i < n; i++)
        for (int r = 0; r < 2; r++) {
            /* Looked at and released as a word, not through pthread_spin_trylock/unlock: the
             * lock is not ours to take, a live peer is not to be held up, and a sanitizer that
             * follows spin locks would see an unlock by a thread that never locked. */
            int *word = list[i].regions[r] ? (int *)&list[i].regions[r]->lock : NULL;
            if (word && __atomic_load_n(word, __ATOMIC_ACQUIRE) != unlocked
                && fab_shm_pid_ended(list[i].peer_pid))
                __atomic_store_n(word, unlocked, __ATOMIC_RELEASE);
        }
}

static void *rescuer_main(void *arg)
{
    struct rescuer *self = arg;
    int unlocked = unlocked_word();
    pthread_mutex_lock(&lock);
    while (!self->stop) {
        struct timespec until = vapi_realtime_in_ms(RESCUE_MS);
        pthread_cond_timedwait(&wake, &lock, &until);
        if (!self->stop)
            round_locked(unlocked);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

void fab_rescue_watch(const struct fab_qp *qp)
{
    const char *own, *peer;
    long own_pid = fab_shm_name_pid((const char *)qp->addr + FAB_ADDR_HEAD, &own);
    long peer_pid = fab_shm_name_pid((const char *)qp->peer_addr + FAB_ADDR_HEAD, &peer);
    if (own_pid <= 0 || peer_pid <= 0)
        return;   /* not shm */
    struct watched w = { qp, peer_pid, { fab_shm_region_map(own, own_pid), fab_shm_region_map(peer, peer_pid) } };
    if (!w.regions[0] && !w.regions[1])
        return;   /* another layout: only the look before a send is left (fab_reap.c) */
    pthread_mutex_lock(&lock);
    if (!running && (running = calloc(1, sizeof *running)) != NULL
        && pthread_create(&running->thread, NULL, rescuer_main, running) != 0) {
        free(running);
        running = NULL;
    }
    if (running && n == cap) {
        uint32_t c = cap ? cap * 2 : 16;
        struct watched *grown = realloc(list, c * sizeof *grown);
        if (grown) {
            list = grown;
            cap = c;
        }
    }
    if (running && n < cap) {
        list[n++] = w;
        w.regions[0] = w.regions[1] = NULL;
    }
    pthread_mutex_unlock(&lock);
    fab_shm_region_unmap(w.regions[0]);   /* no thread or memory for it: nothing watched */
    fab_shm_region_unmap(w.regions[1]);
}

void fab_rescue_forget(const struct fab_qp *qp)
{
    struct rescuer *done = NULL;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < n; i++)
        if (list[i].qp == qp) {
            fab_shm_region_unmap(list[i].regions[0]);
            fab_shm_region_unmap(list[i].regions[1]);
            list[i] = list[--n];
            break;
        }
    if (n == 0 && running) {
        free(list);
        list = NULL;
        cap = 0;
        done = running;
        running = NULL;
        done->stop = 1;
        pthread_cond_broadcast(&wake);
    }
    pthread_mutex_unlock(&lock);
    if (done) {
        pthread_join(done->thread, NULL);
        free(done);
    }
}
