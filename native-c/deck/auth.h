/*
 * Who may join this process's data paths (shared/spec/security.md): the keys DECK proves its
 * peers with, and the keyed MAC it proves them with.
 *
 *  - Static runs share one run secret: a file of at least DECK_SECRET_MIN bytes, mode 0600 and
 *    owned by this user, named by DECK_SECRET_FILE (deckrun creates one per run; a JVM reads the
 *    one its aldeia.conf names with deck_secret_file). The run key is HMAC-SHA-256 of a label
 *    keyed by the file's bytes, so the file may hold any text. Every pair of the run proves
 *    itself with it.
 *  - Dynamic runs have a key per pair of processes, agreed by their bootstrap (from the two
 *    processes' key pairs) and handed to deck_add_peer; the transports keep it with the peer.
 *
 * Every MAC is HMAC-SHA-256 from OpenSSL's libcrypto; every secret comes from getrandom(2).
 */
#ifndef DECK_AUTH_H
#define DECK_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include "deck.h"

#define DECK_MAC_BYTES    32
#define DECK_NONCE_BYTES  16
#define DECK_SECRET_MIN   16        /* bytes a run secret file must hold at least */
#define DECK_SECRET_MAX   4096

/* Static runs: reads DECK_SECRET_FILE into the run key. DECK_ECONFIG naming the file when it is
 * missing, too short, too long, not a regular file, not this user's, or readable by others. */
int  deck_auth_load_run_secret(void);
/* Forgets every key (deck_done). */
void deck_auth_clear(void);
/* The run key (static runs, after deck_auth_load_run_secret) or NULL. */
const uint8_t *deck_auth_run_key(void);

/* out = HMAC-SHA-256(key, label || part_1 || ... || part_n); parts are (pointer, length) pairs. */
void deck_auth_mac(const uint8_t key[DECK_KEY_BYTES], const char *label, uint8_t out[DECK_MAC_BYTES],
                   int nparts, ...);
/* 1 when the two MACs are equal, compared in constant time. */
int  deck_auth_mac_equal(const uint8_t a[DECK_MAC_BYTES], const uint8_t b[DECK_MAC_BYTES]);
/* n bytes from the kernel's random source; DECK_EIO when it fails. */
int  deck_auth_random(void *out, size_t n);

#endif
