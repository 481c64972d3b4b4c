/*
 * Numbered test messages, shared by the tcp and sci mailbox tests: {int sender, int seq} then
 * a body whose every byte the receiver recomputes, so loss, reordering and corruption all show.
 */
#ifndef UTIL_NUMBERED_H
#define UTIL_NUMBERED_H

#include "deck.h"

/* Body length of message `seq` of `sender` in a test's traffic. */
typedef unsigned long (*util_body_fn)(int sender, int seq);

void util_post_numbered(deck_mbox_t *to, deck_msg_t *m, int sender, int seq, unsigned long body);

/* Checks a numbered message read from its start (m->pos 0): its body; returns the sender,
 * *seq its number. */
int util_check_numbered(deck_msg_t *m, int *seq);

/* Retrieves one numbered message and checks its body; returns the sender, *seq its number. */
int util_retrv_numbered(deck_mbox_t *from, deck_msg_t *m, int *seq);

/* Retrieves `count` messages from senders first..last, checking that each sender's arrive in
 * its order (0, 1, 2 ...) with the body lengths `body` gives. */
void util_expect_in_order(deck_mbox_t *from, deck_msg_t *m, int count, int first, int last,
                          util_body_fn body);

#endif
