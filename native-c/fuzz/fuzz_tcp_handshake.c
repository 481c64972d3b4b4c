/*
 * Fuzz target: what the accepting side of a DECK tcp connection checks of a stranger before it
 * has proved itself (tcp_auth.c, driven by tcp_listen.c's handshake loop): the AUTH1 greeting
 * (tcp_auth_check1), the AUTH2 answer made for it (tcp_auth_answer) and the AUTH3 proof
 * (tcp_auth_check3), each frame header decoded by tcp_frame_decode.
 *
 * The process is node 0 of a static run of 2 nodes (tcp_peers_init after the run secret, as
 * tests/test_tcp_attacks.c does: no listener, no thread). Input, as the handshake loop would
 * have read it from the socket (a part the input does not reach is zero):
 *
 *     [0,24)    AUTH1 frame header          [48,72)   AUTH3 frame header
 *     [24,48)   AUTH1 payload (24 bytes)    [72,104)  AUTH3 payload (32 bytes)
 *     [104]     bit 0: the AUTH3 payload is XORed onto the correct proof of the connector
 *               (so that inputs reach the accepted proof and proofs one bit away from it)
 *
 * Besides crashes it checks what each step must decide: check1 accepts exactly a greeting of
 * this run's version and flags from node 1 to node 0; the answer is a well-formed AUTH2 whose
 * MAC proves the acceptor; check3 accepts exactly the correct proof in a well-formed AUTH3.
 */
#include <arpa/inet.h>
#include "fuzz_util.h"
#include "../deck/tcp.h"

#define SELF   0
#define NODES  2
#define LABEL_ACCEPTOR  "DECK tcp acceptor"     /* tcp_auth.c's labels (the wire format) */
#define LABEL_CONNECTOR "DECK tcp connector"

/* The pair key the answer is made with: any key; the one tcp_listen.c would look up. */
static const uint8_t KEY[DECK_KEY_BYTES] = {
    0x42, 0x17, 0x99, 0x01, 0xfe, 0x33, 0x7a, 0x5c, 0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70,
    0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0, 0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78,
};

static uint32_t get32(const uint8_t *p) { uint32_t n; memcpy(&n, p, 4); return ntohl(n); }

static void ids(uint8_t out[8], int32_t connector, int32_t acceptor)
{
    uint32_t c = htonl((uint32_t)connector), a = htonl((uint32_t)acceptor);
    memcpy(out, &c, 4);
    memcpy(out + 4, &a, 4);
}

static void done(void)
{
    tcp_peers_done();
    deck_auth_clear();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char secret[64];
    deck_set_log(fuzz_quiet);
    unsetenv("DECK_TCP_ENCRYPTION");              /* flags 0: the greeting must say unencrypted */
    fuzz_run_secret(secret, sizeof secret);
    int rc = deck_auth_load_run_secret();
    unlink(secret);
    if (rc != DECK_OK) fuzz_die("deck_auth_load_run_secret");
    deck_node_addr_t nodes[NODES] = { { "127.0.0.1", 24600 }, { "127.0.0.1", 24601 } };
    if (tcp_peers_init(SELF, NODES, nodes) != DECK_OK) fuzz_die("tcp_peers_init");
    atexit(done);
    return 0;
}

/* A header re-encodes to itself but for bytes 12..15, reserved, which are sent as zero. */
static void check_codec(const unsigned char h[TCP_FRAME_BYTES], const tcp_frame_t *f)
{
    unsigned char again[TCP_FRAME_BYTES], want[TCP_FRAME_BYTES];
    memcpy(want, h, sizeof want);
    memset(want + 12, 0, 4);
    tcp_frame_encode(again, f);
    if (memcmp(again, want, sizeof want) != 0) fuzz_die("tcp_frame_encode(tcp_frame_decode(h)) != h");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The bytes the handshake loop would hold: exactly what each step reads, no more. */
    unsigned char h1[TCP_FRAME_BYTES] = { 0 }, h3[TCP_FRAME_BYTES] = { 0 };
    uint8_t p1[TCP_AUTH1_BYTES] = { 0 }, p3[TCP_AUTH3_BYTES] = { 0 };
    uint8_t mode = 0;
    const uint8_t *end = data + size, *at = data;
#define TAKE(dst) do { size_t n_ = (size_t)(end - at) < sizeof(dst) ? (size_t)(end - at) : sizeof(dst); \
                       memcpy((dst), at, n_); at += n_; } while (0)
    TAKE(h1);
    TAKE(p1);
    TAKE(h3);
    TAKE(p3);
    if (at < end) mode = *at;
#undef TAKE

    tcp_frame_t f1, f3;
    tcp_frame_decode(h1, &f1);
    check_codec(h1, &f1);
    tcp_auth_state_t s;
    memset(&s, 0xa5, sizeof s);                   /* what check1 leaves unset stays visible */
    int rc = tcp_auth_check1(&f1, p1, &s);
    int valid1 = f1.type == FRAME_AUTH1 && f1.len == TCP_AUTH1_BYTES && f1.index == SELF && f1.src == 1
                 && f1.reserved == 0 && get32(p1) == TCP_AUTH_VERSION && get32(p1 + 4) == 0;
    if ((rc == DECK_OK) != valid1)
        fuzz_die("tcp_auth_check1 returned %d for type %u src %d index %d len %llu version %u flags %u", rc, f1.type,
                 f1.src, f1.index, (unsigned long long)f1.len, get32(p1), get32(p1 + 4));
    if (rc != DECK_OK) {
        if (rc != DECK_EPROTO && rc != DECK_ECONFIG) fuzz_die("tcp_auth_check1 failed with %d", rc);
        return 0;
    }
    if (s.claimed != 1 || memcmp(s.nonce_c, p1 + 8, DECK_NONCE_BYTES) != 0) fuzz_die("check1 kept the wrong greeting");

    /* The answer: AUTH2 from node 0 to the claimed node, proving the acceptor. */
    unsigned char out[TCP_FRAME_BYTES + TCP_AUTH2_BYTES];
    if (tcp_auth_answer(&s, KEY, out) != DECK_OK) fuzz_die("tcp_auth_answer");
    tcp_frame_t f2;
    tcp_frame_decode(out, &f2);
    const uint8_t *p2 = out + TCP_FRAME_BYTES;
    uint8_t mac[DECK_MAC_BYTES], who[8];
    ids(who, 1, SELF);
    deck_auth_mac(KEY, LABEL_ACCEPTOR, mac, 3, who, sizeof who, p1 + 8, (size_t)DECK_NONCE_BYTES, p2 + 8,
                  (size_t)DECK_NONCE_BYTES);
    if (f2.type != FRAME_AUTH2 || f2.src != SELF || f2.index != 1 || f2.len != TCP_AUTH2_BYTES
        || get32(p2) != TCP_AUTH_VERSION || get32(p2 + 4) != 0 || memcmp(p2 + 8, s.nonce_a, DECK_NONCE_BYTES) != 0
        || memcmp(p2 + 8 + DECK_NONCE_BYTES, mac, DECK_MAC_BYTES) != 0)
        fuzz_die("tcp_auth_answer made a wrong AUTH2");

    /* The proof. */
    int xored = mode & 1, exact = 1;
    if (xored) {
        deck_auth_mac(KEY, LABEL_CONNECTOR, mac, 3, who, sizeof who, p1 + 8, (size_t)DECK_NONCE_BYTES, p2 + 8,
                      (size_t)DECK_NONCE_BYTES);
        for (int i = 0; i < DECK_MAC_BYTES; i++) {
            exact &= p3[i] == 0;
            p3[i] ^= mac[i];
        }
    }
    tcp_frame_decode(h3, &f3);
    check_codec(h3, &f3);
    rc = tcp_auth_check3(&s, &f3, p3);
    /* A proof that is not derived from the nonce just made cannot match (2^-256). */
    int valid3 = f3.type == FRAME_AUTH3 && f3.src == 1 && f3.index == SELF && f3.len == TCP_AUTH3_BYTES && f3.reserved == 0
                 && xored && exact;
    if ((rc == DECK_OK) != valid3)
        fuzz_die("tcp_auth_check3 returned %d for type %u src %d index %d len %llu, %s proof", rc, f3.type, f3.src,
                 f3.index, (unsigned long long)f3.len, xored && exact ? "the correct" : "a wrong");
    if (rc != DECK_OK && rc != DECK_EPROTO) fuzz_die("tcp_auth_check3 failed with %d", rc);
    memset(&s, 0, sizeof s);
    return 0;
}
