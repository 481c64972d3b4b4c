/*
 * libaldeiafabric with a socket's two threads: in each of two processes a writer thread
 * streams blocks to the other process while a reader thread receives the other's stream, on
 * one queue pair, as Aldeia's channel does. Both threads progress the one libfabric CQ of the
 * queue pair, each taking the other's completions off it at times (the reader finds the
 * writer's send completions and credits, the writer finds the reader's data): nothing may be
 * lost, reordered or left unannounced to a thread asleep on its own CQ. Over shm and tcp,
 * plain, under ASan/UBSan and under TSan (the locking of the queue pair and the CQs).
 */
#include <pthread.h>
#include <stdio.h>

#include "fabric_util.h"

#define BLOCKS 20000u

static void *writer(void *arg)
{
    stream_send(arg, BLOCKS);
    return NULL;
}

static void side(int sender)
{
    struct end e;
    open_and_connect_end(&e);
    pthread_t w;
    CHECK(pthread_create(&w, NULL, writer, &e) == 0);
    stream_receive(&e, BLOCKS, sender);   /* one side's reader is slow now and then */
    CHECK(pthread_join(w, NULL) == 0);
    sync_peer();
    close_end(&e);
}

int main(void)
{
    for (int i = 0; i < FABRIC_PROVIDERS; i++) {
        printf("%s\n", fabric_select(i, ""));
        run_pair(side);
    }
    printf("test_fabric_threads: ok\n");
    return 0;
}
