#include <stdlib.h>
#include "util_deck.h"
#include "util_numbered.h"

static unsigned char pattern(int sender, int seq, unsigned long k)
{
    return (unsigned char)(sender * 31 + seq * 7 + (int)k);
}

void util_post_numbered(deck_mbox_t *to, deck_msg_t *m, int sender, int seq, unsigned long body)
{
    CHECK_OK(deck_msg_clear(m));
    CHECK_OK(deck_msg_pack(m, DECK_INT, &sender, 1));
    CHECK_OK(deck_msg_pack(m, DECK_INT, &seq, 1));
    CHECK(m->len + body <= m->size);
    for (unsigned long k = 0; k < body; k++) m->buf[m->len + k] = (char)pattern(sender, seq, k);
    m->len += body;
    CHECK_OK(deck_mbox_post(to, m));
}

int util_check_numbered(deck_msg_t *m, int *seq)
{
    int sender;
    CHECK_OK(deck_msg_unpack(m, DECK_INT, &sender, 1));
    CHECK_OK(deck_msg_unpack(m, DECK_INT, seq, 1));
    for (unsigned long k = 0; m->pos + k < m->len; k++)
        CHECK((unsigned char)m->buf[m->pos + k] == pattern(sender, *seq, k));
    return sender;
}

int util_retrv_numbered(deck_mbox_t *from, deck_msg_t *m, int *seq)
{
    CHECK_OK(deck_mbox_retrv(from, m));
    return util_check_numbered(m, seq);
}

void util_expect_in_order(deck_mbox_t *from, deck_msg_t *m, int count, int first, int last,
                          util_body_fn body)
{
    int *next = calloc((size_t)(last + 1), sizeof *next);
    CHECK(next != NULL);
    for (int i = 0; i < count; i++) {
        int seq, sender = util_retrv_numbered(from, m, &seq);
        CHECK(sender >= first && sender <= last);
        CHECK(seq == next[sender]);
        CHECK(m->len - m->pos == body(sender, seq));
        next[sender]++;
    }
    free(next);
}
