/* Messages: pack/unpack round trip of every type, all-or-nothing ERANGE, the cursor calls. */
#include <stdio.h>
#include <string.h>
#include "util_deck.h"

static void test_every_type_round_trip(void)
{
    char c[3] = { 'a', -5, 127 };                unsigned char uc[2] = { 0, 255 };
    short s[2] = { -32768, 1234 };               unsigned short us[1] = { 65535 };
    int i[2] = { -7, 2147483647 };               unsigned ui[1] = { 4000000000u };
    long l[2] = { -9000000000L, 42 };            unsigned long ul[1] = { 18000000000000000000UL };
    float f[2] = { 56.89f, -0.5f };              double d[2] = { 3.141592653589793, -1e300 };
    void *p[2] = { &c, NULL };
    deck_msg_t m, inner, inner_out[2];
    CHECK_OK(deck_msg_create(&m, 1024));
    CHECK_OK(deck_msg_create(&inner, 64));
    CHECK_OK(deck_msg_pack(&inner, DECK_LONG, l, 2));
    CHECK_OK(deck_msg_pack(&inner, DECK_STRING, "inside", 1));
    deck_msg_t inners[2] = { inner, inner };

    CHECK_OK(deck_msg_pack(&m, DECK_CHAR, c, 3));
    CHECK_OK(deck_msg_pack(&m, DECK_UCHAR, uc, 2));
    CHECK_OK(deck_msg_pack(&m, DECK_SHORT, s, 2));
    CHECK_OK(deck_msg_pack(&m, DECK_USHORT, us, 1));
    CHECK_OK(deck_msg_pack(&m, DECK_INT, i, 2));
    CHECK_OK(deck_msg_pack(&m, DECK_UINT, ui, 1));
    CHECK_OK(deck_msg_pack(&m, DECK_LONG, l, 2));
    CHECK_OK(deck_msg_pack(&m, DECK_ULONG, ul, 1));
    CHECK_OK(deck_msg_pack(&m, DECK_FLOAT, f, 2));
    CHECK_OK(deck_msg_pack(&m, DECK_DOUBLE, d, 2));
    CHECK_OK(deck_msg_pack(&m, DECK_POINTER, p, 2));
    CHECK_OK(deck_msg_pack(&m, DECK_STRING, "Caixa postal - 1", 1));
    CHECK_OK(deck_msg_pack(&m, DECK_STRING, "", 1));
    CHECK_OK(deck_msg_pack(&m, DECK_MSG, inners, 2));
    unsigned long packed = 3 + 2 + 2 * sizeof(short) + sizeof(short) + 3 * sizeof(int) + 3 * sizeof(long)
                         + 2 * sizeof(float) + 2 * sizeof(double) + 2 * sizeof(void *)
                         + (4 + 17) + (4 + 1) + 2 * (8 + inner.len);
    CHECK(m.len == packed);

    char c2[3]; unsigned char uc2[2]; short s2[2]; unsigned short us2[1]; int i2[2]; unsigned ui2[1];
    long l2[2]; unsigned long ul2[1]; float f2[2]; double d2[2]; void *p2[2]; char str[32], empty[1];
    CHECK_OK(deck_msg_unpack(&m, DECK_CHAR, c2, 3));       CHECK(memcmp(c, c2, sizeof c) == 0);
    CHECK_OK(deck_msg_unpack(&m, DECK_UCHAR, uc2, 2));     CHECK(memcmp(uc, uc2, sizeof uc) == 0);
    CHECK_OK(deck_msg_unpack(&m, DECK_SHORT, s2, 2));      CHECK(memcmp(s, s2, sizeof s) == 0);
    CHECK_OK(deck_msg_unpack(&m, DECK_USHORT, us2, 1));    CHECK(us2[0] == 65535);
    CHECK_OK(deck_msg_unpack(&m, DECK_INT, i2, 2));        CHECK(memcmp(i, i2, sizeof i) == 0);
    CHECK_OK(deck_msg_unpack(&m, DECK_UINT, ui2, 1));      CHECK(ui2[0] == ui[0]);
    CHECK_OK(deck_msg_unpack(&m, DECK_LONG, l2, 2));       CHECK(memcmp(l, l2, sizeof l) == 0);
    CHECK_OK(deck_msg_unpack(&m, DECK_ULONG, ul2, 1));     CHECK(ul2[0] == ul[0]);
    CHECK_OK(deck_msg_unpack(&m, DECK_FLOAT, f2, 2));      CHECK(f2[0] == f[0] && f2[1] == f[1]);
    CHECK_OK(deck_msg_unpack(&m, DECK_DOUBLE, d2, 2));     CHECK(d2[0] == d[0] && d2[1] == d[1]);
    CHECK_OK(deck_msg_unpack(&m, DECK_POINTER, p2, 2));    CHECK(p2[0] == p[0] && p2[1] == NULL);
    CHECK_OK(deck_msg_unpack(&m, DECK_STRING, str, sizeof str)); CHECK(strcmp(str, "Caixa postal - 1") == 0);
    CHECK_OK(deck_msg_unpack(&m, DECK_STRING, empty, 1));  CHECK(empty[0] == '\0');
    CHECK_OK(deck_msg_create(&inner_out[0], 64));
    CHECK_OK(deck_msg_create(&inner_out[1], 64));
    CHECK_OK(deck_msg_unpack(&m, DECK_MSG, inner_out, 2));
    for (int k = 0; k < 2; k++) {
        long back[2];
        CHECK(inner_out[k].len == inner.len && inner_out[k].pos == 0);
        CHECK_OK(deck_msg_unpack(&inner_out[k], DECK_LONG, back, 2));
        CHECK(back[0] == l[0] && back[1] == l[1]);
        CHECK_OK(deck_msg_unpack(&inner_out[k], DECK_STRING, str, sizeof str));
        CHECK(strcmp(str, "inside") == 0);
    }
    CHECK(m.pos == m.len);
    CHECK_RC(deck_msg_unpack(&m, DECK_CHAR, c2, 1), DECK_ERANGE);

    /* reset rewinds for a second reading of the same data */
    CHECK_OK(deck_msg_reset(&m));
    CHECK(m.pos == 0 && m.len == packed);
    CHECK_OK(deck_msg_unpack(&m, DECK_CHAR, c2, 3));
    CHECK(c2[1] == -5);
    for (int k = 0; k < 2; k++) CHECK_OK(deck_msg_destroy(&inner_out[k]));
    CHECK_OK(deck_msg_destroy(&inner));
    CHECK_OK(deck_msg_destroy(&m));
    CHECK(m.buf == NULL);
}

static void test_range_is_all_or_nothing(void)
{
    deck_msg_t m;
    int v[4] = { 1, 2, 3, 4 }, out[4] = { 0 };
    char small[4];
    CHECK_OK(deck_msg_create(&m, 3 * sizeof(int)));
    CHECK_RC(deck_msg_pack(&m, DECK_INT, v, 4), DECK_ERANGE);         /* overflow */
    CHECK(m.len == 0);
    CHECK(strstr(deck_last_error(), "do not fit") != NULL);
    CHECK_OK(deck_msg_pack(&m, DECK_INT, v, 3));
    CHECK_RC(deck_msg_pack(&m, DECK_CHAR, v, 1), DECK_ERANGE);
    CHECK_RC(deck_msg_pack(&m, DECK_STRING, "x", 1), DECK_ERANGE);
    CHECK_RC(deck_msg_unpack(&m, DECK_INT, out, 4), DECK_ERANGE);     /* underflow */
    CHECK(m.pos == 0 && out[0] == 0);
    CHECK_OK(deck_msg_unpack(&m, DECK_INT, out, 3));
    CHECK(out[0] == 1 && out[2] == 3);
    CHECK_RC(deck_msg_pack(&m, 99, v, 1), DECK_EINVAL);
    CHECK_RC(deck_msg_unpack(&m, 0, out, 1), DECK_EINVAL);
    CHECK_RC(deck_msg_pack(&m, DECK_STRING, "ab", 2), DECK_EINVAL);

    /* a string longer than the receiving buffer, and a nested message too big for its target */
    deck_msg_t big, nested, target;
    CHECK_OK(deck_msg_create(&big, 256));
    CHECK_OK(deck_msg_create(&nested, 32));
    CHECK_OK(deck_msg_create(&target, 8));
    CHECK_OK(deck_msg_pack(&big, DECK_STRING, "longer than four", 1));
    CHECK_RC(deck_msg_unpack(&big, DECK_STRING, small, sizeof small), DECK_ERANGE);
    CHECK(big.pos == 0);
    CHECK_OK(deck_msg_clear(&big));
    CHECK(big.len == 0 && big.pos == 0);
    CHECK_OK(deck_msg_pack(&nested, DECK_DOUBLE, (double[]){ 1, 2 }, 2));
    CHECK_OK(deck_msg_pack(&big, DECK_MSG, &nested, 1));
    CHECK_RC(deck_msg_unpack(&big, DECK_MSG, &target, 1), DECK_ERANGE);
    CHECK(big.pos == 0 && target.len == 0);
    /* a truncated nested message (length says more than was packed) is refused */
    CHECK_OK(deck_msg_setlength(&big, 8 + 4));
    CHECK_RC(deck_msg_unpack(&big, DECK_MSG, &nested, 1), DECK_ERANGE);
    CHECK_OK(deck_msg_destroy(&big));
    CHECK_OK(deck_msg_destroy(&nested));
    CHECK_OK(deck_msg_destroy(&target));
    CHECK_OK(deck_msg_destroy(&m));
}

static void test_getbuffer_and_setlength(void)
{
    deck_msg_t m;
    void *buf;
    CHECK_OK(deck_msg_create(&m, 16));
    CHECK_OK(deck_msg_getbuffer(&m, &buf));
    CHECK(buf == m.buf);
    int raw[2] = { 11, 22 }, out[2];
    memcpy(buf, raw, sizeof raw);
    CHECK(m.len == 0);                                   /* direct writes move no cursor */
    CHECK_OK(deck_msg_setlength(&m, sizeof raw));
    CHECK_OK(deck_msg_unpack(&m, DECK_INT, out, 2));
    CHECK(out[0] == 11 && out[1] == 22);
    CHECK_RC(deck_msg_setlength(&m, 17), DECK_ERANGE);
    CHECK_RC(deck_msg_getbuffer(&m, NULL), DECK_EINVAL);
    CHECK_RC(deck_msg_pack(NULL, DECK_INT, raw, 1), DECK_EINVAL);
    CHECK(deck_sizeof_msg() == sizeof(deck_msg_t) && deck_sizeof_mbox() == sizeof(deck_mbox_t));
    CHECK(strcmp(deck_strerror(DECK_ETRUNC), deck_strerror(DECK_ERANGE)) != 0);
    CHECK_OK(deck_msg_destroy(&m));

    deck_msg_t empty;                                    /* a zero-size message is valid */
    CHECK_OK(deck_msg_create(&empty, 0));
    CHECK_RC(deck_msg_pack(&empty, DECK_CHAR, "x", 1), DECK_ERANGE);
    CHECK_OK(deck_msg_pack(&empty, DECK_CHAR, "x", 0));
    CHECK_OK(deck_msg_destroy(&empty));
}

int main(void)
{
    test_every_type_round_trip();
    test_range_is_all_or_nothing();
    test_getbuffer_and_setlength();
    printf("PASS test_deck_msg\n");
    return 0;
}
