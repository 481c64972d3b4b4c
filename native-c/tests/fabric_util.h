/*
 * Two processes joined by libaldeiafabric queue pairs, for the fabric library's tests: a
 * socketpair stands in for Aldeia's bootstrap (it carries the queue pairs' addresses), and
 * each side owns one `end`: HCA, CQs, queue pair and a registered area of RECVS receive
 * buffers and SENDS send slots of MTU bytes. Failures end the process with the call and the
 * library's last error.
 */
#ifndef FABRIC_UTIL_H
#define FABRIC_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "vapi.h"

#define VCHECK(call, want) do { VAPI_ret_t r_ = (call); if (r_ != (want)) { \
        fprintf(stderr, "[pid %d] %s:%d: %s returned %d (%s), expected %d\n  last error: %s\n", \
                (int)getpid(), __FILE__, __LINE__, #call, r_, VAPI_strerror(r_), (want), \
                EVAPI_last_error()); exit(1); } } while (0)
#define VOK(call) VCHECK(call, VAPI_OK)
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "[pid %d] %s:%d: check failed: %s\n", (int)getpid(), \
        __FILE__, __LINE__, #c); exit(1); } } while (0)

/* Block size: 4096 unless a tool sets it before fabric_select. */
extern uint32_t fabric_mtu;
#define MTU        fabric_mtu
#define RECVS      16u       /* receive buffers a side keeps posted */
#define SENDS      64u       /* send queue depth */
#define POLL_USEC  10000000u /* a blocking poll that takes this long is a hang */

/* The providers the tests run over: 0 libfabric's shm, 1 its tcp on loopback. */
#define FABRIC_PROVIDERS 2
/* Sets hca_id to provider's init string with fabric_mtu and `extra` ("" or ",key=value...")
 * and returns it. */
const char *fabric_select(int provider, const char *extra);
/* The init string of this run. */
extern const char *hca_id;

struct end {
    VAPI_hca_hndl_t hca;
    VAPI_pd_hndl_t  pd;
    VAPI_cq_hndl_t  scq, rcq;
    VAPI_qp_hndl_t  qp;
    VAPI_qp_prop_t  prop;
    uint8_t        *mem;     /* RECVS receive buffers, then the send area */
    VAPI_mr_hndl_t  mr;
    uint32_t        lkey;
};

void open_end(struct end *e);
void close_end(struct end *e);
/* The bootstrap: addresses and queue-pair numbers both ways, then connect (a wrong
 * dest_qp_num is refused first). */
void connect_end(struct end *e);
/* open_end, every receive buffer posted, connect_end: a side ready to take RECVS blocks. */
void open_and_connect_end(struct end *e);
/* CLOCK_MONOTONIC in seconds, for the tests' own timings. */
double fabric_now_s(void);
/* Both processes reach this point before either goes on. */
void sync_peer(void);
/* The socketpair to the other process. */
void write_all(const void *p, size_t n);
void read_all(void *p, size_t n);

uint8_t *recv_buf(struct end *e, uint32_t i);
uint8_t *send_buf(struct end *e, uint32_t i);
/* Posts receive buffer i (id i, MTU bytes). */
void post_recv(struct end *e, uint32_t i);
void post_recv_expect(struct end *e, VAPI_ret_t want);
/* The next completion of cq, within POLL_USEC. */
VAPI_wc_desc_t wait_wc(struct end *e, VAPI_cq_hndl_t cq);

/* Block k of a test stream: its length (0..MTU, every 97th empty) and bytes follow from k. */
uint32_t block_len(uint32_t k);
uint8_t block_byte(uint32_t k, uint32_t j);

/* Posts block k of a stream of `total` as a send (signalled every 8th and the last one),
 * taking send completions into *completions while the send queue is full. */
void send_block(struct end *e, uint32_t k, uint32_t total, uint32_t *completions);
/* Sends blocks 0..total-1, reusing a send slot only after a later signalled send completed
 * (as the channel's ring does), and waits for every signalled completion. */
void stream_send(struct end *e, uint32_t total);
/* Receives and checks blocks 0..total-1 in order (ids = receive buffers in posting order),
 * reposting each buffer; slow: pauses 2 ms every 64 blocks. */
void stream_receive(struct end *e, uint32_t total, int slow);

/* Runs side(1) in this process and side(0) in a child, joined by a socketpair; fails unless
 * the child exits 0. */
void run_pair(void (*side)(int sender));
/* As run_pair, but returns the child's wait status, whatever it is. */
int run_pair_status(void (*side)(int sender));
/* In the parent's side of a run: the child's process id. A side that waits for the child
 * itself sets it to 0 and leaves the status in fabric_child_status. */
extern pid_t fabric_child;
extern int fabric_child_status;

#endif
