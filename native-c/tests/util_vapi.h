/*
 * One end of a MicroVAPI connection for the C tests: open an HCA, its CQs and a QP, connect it
 * (after the bootstrap's exchange of qp_num and DECK id, here through DECK mailboxes), close.
 * Failures end the process (the tests fork a process per node).
 */
#ifndef UTIL_VAPI_H
#define UTIL_VAPI_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util_deck.h"
#include "vapi.h"

#define VCHECK(call, want) do { VAPI_ret_t r_ = (call); if (r_ != (want)) { \
        fprintf(stderr, "[pid %d] %s:%d: %s returned %d (%s), expected %d\n  last error: %s\n", \
                (int)getpid(), __FILE__, __LINE__, #call, r_, VAPI_strerror(r_), (want), \
                EVAPI_last_error()); exit(1); } } while (0)
#define VOK(call) VCHECK(call, VAPI_OK)

/* Everything one end of a connection owns. */
struct conn {
    VAPI_hca_hndl_t hca;
    VAPI_pd_hndl_t  pd;
    VAPI_cq_hndl_t  scq, rcq;
    VAPI_qp_hndl_t  qp;
    VAPI_qp_prop_t  prop;
};

void open_conn_on(struct conn *c, const char *hca_id, uint32_t max_send_wr, uint32_t max_recv_wr);
/* Connects to the peer's QP: RTR then RTS, or straight to RTS. Then, for a QP of another
 * process, waits (a barrier) until that process has connected its own. */
void connect_conn(struct conn *c, uint32_t peer_qp, uint32_t peer_id, int via_rtr, uint32_t path_mtu);
void close_qp(struct conn *c);
void close_rest(struct conn *c);
/* Aldeia's bootstrap step: hand (qp_num, DECK id) to the other node of a 2-node run and get
 * its pair back. */
void exchange(int id, const struct conn *c, uint32_t *peer_qp, uint32_t *peer_id);
/* Hands values[0..n) to the other node of a 2-node run (through DECK mailboxes named after
 * tag) and replaces them with the other node's. */
void exchange_uints(int id, const char *tag, unsigned *values, int n);

#endif
