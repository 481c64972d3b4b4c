/* Two processes joined by libaldeiafabric queue pairs (fabric_util.h). */
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <time.h>

#include "fabric_util.h"

uint32_t fabric_mtu = 4096;
const char *hca_id;
static char hca_id_text[256];

const char *fabric_select(int provider, const char *extra)
{
    static const char *const providers[FABRIC_PROVIDERS] = { "provider=shm", "provider=tcp,domain=lo" };
    snprintf(hca_id_text, sizeof hca_id_text, "fabric:%s,mtu=%u%s", providers[provider], fabric_mtu, extra);
    return hca_id = hca_id_text;
}
static int link_fd;          /* this process's end of the socketpair */

void open_end(struct end *e)
{
    VOK(EVAPI_get_hca_hndl(hca_id, &e->hca));
    VOK(VAPI_alloc_pd(e->hca, &e->pd));
    uint32_t n;
    VOK(VAPI_create_cq(e->hca, SENDS + 1, &e->scq, &n));
    VOK(VAPI_create_cq(e->hca, RECVS, &e->rcq, &n));
    VAPI_qp_init_attr_t a = { .sq_cq_hndl = e->scq, .rq_cq_hndl = e->rcq, .max_send_wr = SENDS,
                              .max_recv_wr = RECVS };
    VOK(VAPI_create_qp(e->hca, &a, &e->qp, &e->prop));
    size_t bytes = (size_t)MTU * (RECVS + SENDS);
    e->mem = aligned_alloc(4096, bytes);
    CHECK(e->mem);
    memset(e->mem, 0, bytes);
    VOK(VAPI_register_mr(e->hca, e->pd, (uint64_t)(uintptr_t)e->mem, bytes, &e->mr, &e->lkey));
}

void close_end(struct end *e)
{
    VOK(VAPI_destroy_qp(e->hca, e->qp));
    VOK(VAPI_deregister_mr(e->hca, e->mr));
    VOK(VAPI_destroy_cq(e->hca, e->scq));
    VOK(VAPI_destroy_cq(e->hca, e->rcq));
    VOK(VAPI_dealloc_pd(e->hca, e->pd));
    VOK(EVAPI_release_hca_hndl(e->hca));
    free(e->mem);
}

void write_all(const void *p, size_t n)
{
    CHECK(write(link_fd, p, n) == (ssize_t)n);
}

void read_all(void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(link_fd, (char *)p + got, n - got);
        CHECK(r > 0);
        got += (size_t)r;
    }
}

void open_and_connect_end(struct end *e)
{
    open_end(e);
    for (uint32_t i = 0; i < RECVS; i++)
        post_recv(e, i);
    connect_end(e);
}

double fabric_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

void connect_end(struct end *e)
{
    uint8_t mine[EVAPI_QP_ADDRESS_MAX], theirs[EVAPI_QP_ADDRESS_MAX];
    uint32_t len = sizeof mine, their_len, their_num;
    VOK(EVAPI_query_qp_address(e->hca, e->qp, mine, &len));
    write_all(&len, sizeof len);
    write_all(mine, len);
    write_all(&e->prop.qp_num, sizeof e->prop.qp_num);
    read_all(&their_len, sizeof their_len);
    CHECK(their_len <= sizeof theirs);
    read_all(theirs, their_len);
    read_all(&their_num, sizeof their_num);
    VOK(EVAPI_set_qp_dest_address(e->hca, e->qp, theirs, their_len));
    VAPI_qp_attr_t attr = { .qp_state = VAPI_RTS, .dest_qp_num = their_num, .path_mtu = MTU };
    VAPI_qp_attr_t wrong = attr;
    wrong.dest_qp_num = their_num + 1;
    VCHECK(VAPI_modify_qp(e->hca, e->qp, &wrong), VAPI_EINVAL_PARAM);
    VOK(VAPI_modify_qp(e->hca, e->qp, &attr));
}

void sync_peer(void)
{
    char c = 's';
    write_all(&c, 1);
    read_all(&c, 1);
}

uint8_t *recv_buf(struct end *e, uint32_t i)
{
    return e->mem + (size_t)i * MTU;
}

uint8_t *send_buf(struct end *e, uint32_t i)
{
    return e->mem + (size_t)(RECVS + i % SENDS) * MTU;
}

void post_recv(struct end *e, uint32_t i)
{
    VAPI_rr_desc_t r = { .id = i, .opcode = VAPI_RECEIVE, .addr = (uint64_t)(uintptr_t)recv_buf(e, i),
                         .len = MTU, .lkey = e->lkey };
    VOK(VAPI_post_rr(e->hca, e->qp, &r));
}

void post_recv_expect(struct end *e, VAPI_ret_t want)
{
    VAPI_rr_desc_t r = { .id = 0, .opcode = VAPI_RECEIVE, .addr = (uint64_t)(uintptr_t)recv_buf(e, 0),
                         .len = MTU, .lkey = e->lkey };
    VCHECK(VAPI_post_rr(e->hca, e->qp, &r), want);
}

VAPI_wc_desc_t wait_wc(struct end *e, VAPI_cq_hndl_t cq)
{
    VAPI_wc_desc_t wc;
    VOK(EVAPI_poll_cq_block(e->hca, cq, POLL_USEC, &wc));
    return wc;
}

uint32_t block_len(uint32_t k)
{
    return k % 97 == 0 ? 0 : (k * 2654435761u) % MTU + 1;
}

uint8_t block_byte(uint32_t k, uint32_t j)
{
    return (uint8_t)(k * 31 + j * 7);
}

/* Posts send k (signalled every 8th and the last one), retrying while the queue is full. */
void send_block(struct end *e, uint32_t k, uint32_t total, uint32_t *completions)
{
    uint8_t *b = send_buf(e, k);
    uint32_t len = block_len(k);
    for (uint32_t j = 0; j < len; j++)
        b[j] = block_byte(k, j);
    VAPI_sr_desc_t s = { .id = k, .opcode = VAPI_SEND, .addr = (uint64_t)(uintptr_t)b, .len = len,
                         .lkey = e->lkey,
                         .comp_type = (k % 8 == 7 || k + 1 == total) ? VAPI_SIGNALED : VAPI_UNSIGNALED };
    VAPI_ret_t r;
    while ((r = VAPI_post_sr(e->hca, e->qp, &s)) == VAPI_EAGAIN) {
        VAPI_wc_desc_t wc = wait_wc(e, e->scq);
        CHECK(wc.status == VAPI_SUCCESS && wc.opcode == VAPI_SEND);
        (*completions)++;
    }
    VOK(r);
}

/* The stream: `total` blocks one way; the sender's slots are reused only after a later
 * signalled completion, as the channel's send ring does. */
void stream_send(struct end *e, uint32_t total)
{
    uint32_t completions = 0, signalled = 0;
    for (uint32_t k = 0; k < total; k++) {
        /* a slot is written again only after the completion of a later signalled send */
        while (k >= SENDS && completions * 8 + SENDS <= k) {
            VAPI_wc_desc_t wc = wait_wc(e, e->scq);
            CHECK(wc.status == VAPI_SUCCESS && wc.opcode == VAPI_SEND);
            completions++;
        }
        send_block(e, k, total, &completions);
    }
    for (uint32_t k = 0; k < total; k++)
        signalled += k % 8 == 7 || k + 1 == total;
    while (completions < signalled) {
        VAPI_wc_desc_t wc = wait_wc(e, e->scq);
        CHECK(wc.status == VAPI_SUCCESS);
        completions++;
    }
    VAPI_wc_desc_t none;
    VCHECK(VAPI_poll_cq(e->hca, e->scq, &none), VAPI_CQ_EMPTY);   /* none for unsignalled sends */
}

void stream_receive(struct end *e, uint32_t total, int slow)
{
    for (uint32_t k = 0; k < total; k++) {
        VAPI_wc_desc_t wc = wait_wc(e, e->rcq);
        CHECK(wc.status == VAPI_SUCCESS && wc.opcode == VAPI_RECEIVE);
        CHECK(wc.id == k % RECVS);                 /* posting order */
        if (wc.byte_len != block_len(k)) {
            fprintf(stderr, "block %u: %u bytes, expected %u\n", k, wc.byte_len, block_len(k));
            exit(1);
        }
        const uint8_t *b = recv_buf(e, (uint32_t)wc.id);
        for (uint32_t j = 0; j < wc.byte_len; j++)
            CHECK(b[j] == block_byte(k, j));
        if (slow && k % 64 == 0)
            usleep(2000);
        post_recv(e, (uint32_t)wc.id);
    }
}

pid_t fabric_child;
int fabric_child_status;

int run_pair_status(void (*side)(int sender))
{
    int sv[2];
    signal(SIGPIPE, SIG_IGN);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        link_fd = sv[1];
        close(sv[0]);
        side(0);
        exit(0);
    }
    link_fd = sv[0];
    close(sv[1]);
    fabric_child = pid;
    side(1);
    int status = fabric_child_status;
    CHECK(fabric_child == 0 || waitpid(pid, &status, 0) == pid);
    close(link_fd);
    return status;
}

void run_pair(void (*side)(int sender))
{
    int status = run_pair_status(side);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
