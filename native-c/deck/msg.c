/*
 * Messages: a data area with a pack cursor (len) and an unpack cursor (pos).
 *
 * Packing stores raw native bytes, no type tags (as DECK did). Every pack/unpack is all or
 * nothing: if the n items do not fit (pack) or are not all there (unpack), DECK_ERANGE is
 * returned and the cursors do not move.
 *
 * DECK_STRING: pack takes datum = the NUL-terminated string itself and n = 1; it stores a
 *   4-byte length (with the NUL) and the bytes. Unpack takes datum = a char buffer and
 *   n = that buffer's capacity in bytes; a string that does not fit gives DECK_ERANGE.
 * DECK_MSG: datum points to n deck_msg_t; pack stores each one's packed data (its len bytes)
 *   behind an 8-byte length; unpack fills n already created messages (len set, pos 0), each
 *   must be large enough or DECK_ERANGE.
 */
#include <stdlib.h>
#include <string.h>
#include "transport.h"

static size_t type_size(int type)
{
    switch (type) {
    case DECK_CHAR: case DECK_UCHAR:   return 1;
    case DECK_SHORT: case DECK_USHORT: return sizeof(short);
    case DECK_INT: case DECK_UINT:     return sizeof(int);
    case DECK_LONG: case DECK_ULONG:   return sizeof(long);
    case DECK_FLOAT:                   return sizeof(float);
    case DECK_DOUBLE:                  return sizeof(double);
    case DECK_POINTER:                 return sizeof(void *);
    default:                           return 0;
    }
}

static int check_msg(const deck_msg_t *m, const char *fn)
{
    if (!m) return deck_fail(DECK_EINVAL, "%s: null message", fn);
    if (!m->buf && m->size) return deck_fail(DECK_ESTATE, "%s: message not created", fn);
    return DECK_OK;
}

int deck_msg_create(deck_msg_t *m, unsigned long size)
{
    if (!m) return deck_fail(DECK_EINVAL, "deck_msg_create: null message");
    /* A transport may place big messages in its own memory (sci: the message segment, so
     * that they are received without a copy); impl then names that transport. */
    const deck_transport_t *tp = deck_core_transport();
    char *buf = tp && tp->msg_alloc ? tp->msg_alloc(size) : NULL;
    m->impl = buf ? (void *)tp : NULL;
    /* malloc(0) may return NULL; one byte keeps "buf != NULL" meaning "created". */
    if (!buf) buf = malloc(size ? size : 1);
    if (!buf) return deck_fail(DECK_ENOMEM, "deck_msg_create: cannot allocate %lu bytes", size);
    m->buf = buf;
    m->size = size;
    m->len = m->pos = 0;
    m->src = -1;
    return DECK_OK;
}

int deck_msg_destroy(deck_msg_t *m)
{
    if (!m) return deck_fail(DECK_EINVAL, "deck_msg_destroy: null message");
    const deck_transport_t *tp = m->impl;
    if (!tp) free(m->buf);
    else if (tp == deck_core_transport()) tp->msg_free(m->buf);
    /* else: its transport has been shut down, and the buffer went with its memory */
    m->impl = NULL;
    m->buf = NULL;
    m->size = m->len = m->pos = 0;
    return DECK_OK;
}

/* Reserves `need` bytes at the pack cursor, or fails with ERANGE naming what did not fit. */
static int pack_room(deck_msg_t *m, size_t need, int type)
{
    if (need > m->size - m->len)
        return deck_fail(DECK_ERANGE, "deck_msg_pack: %zu bytes of type %d do not fit (%lu of %lu used)",
                         need, type, m->len, m->size);
    return DECK_OK;
}

static int unpack_avail(const deck_msg_t *m, size_t need, int type)
{
    if (need > m->len - m->pos)
        return deck_fail(DECK_ERANGE, "deck_msg_unpack: %zu bytes of type %d asked, %lu left",
                         need, type, m->len - m->pos);
    return DECK_OK;
}

static int pack_string(deck_msg_t *m, const char *s, int n)
{
    if (n != 1) return deck_fail(DECK_EINVAL, "deck_msg_pack: DECK_STRING packs one string (n=1), got n=%d", n);
    size_t slen = strlen(s) + 1;
    if (slen > UINT32_MAX) return deck_fail(DECK_ERANGE, "deck_msg_pack: string too long");
    int rc = pack_room(m, 4 + slen, DECK_STRING);
    if (rc) return rc;
    uint32_t l = (uint32_t)slen;
    memcpy(m->buf + m->len, &l, 4);
    memcpy(m->buf + m->len + 4, s, slen);
    m->len += 4 + slen;
    return DECK_OK;
}

static int unpack_string(deck_msg_t *m, char *dst, int cap)
{
    uint32_t l;
    int rc = unpack_avail(m, 4, DECK_STRING);
    if (rc) return rc;
    memcpy(&l, m->buf + m->pos, 4);
    if ((rc = unpack_avail(m, 4 + (size_t)l, DECK_STRING))) return rc;
    if (l == 0 || m->buf[m->pos + 4 + l - 1] != '\0')
        return deck_fail(DECK_ERANGE, "deck_msg_unpack: no DECK_STRING at offset %lu", m->pos);
    if (l > (uint32_t)cap)
        return deck_fail(DECK_ERANGE, "deck_msg_unpack: string of %u bytes, buffer holds %d", l, cap);
    memcpy(dst, m->buf + m->pos + 4, l);
    m->pos += 4 + l;
    return DECK_OK;
}

static int pack_msgs(deck_msg_t *m, const deck_msg_t *in, int n)
{
    size_t need = 0;
    for (int i = 0; i < n; i++) need += 8 + in[i].len;
    int rc = pack_room(m, need, DECK_MSG);
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
        uint64_t l = in[i].len;
        memcpy(m->buf + m->len, &l, 8);
        if (l) memcpy(m->buf + m->len + 8, in[i].buf, l);
        m->len += 8 + l;
    }
    return DECK_OK;
}

static int unpack_msgs(deck_msg_t *m, deck_msg_t *out, int n)
{
    /* First pass checks everything so that a failure leaves both sides untouched. */
    unsigned long p = m->pos;
    for (int i = 0; i < n; i++) {
        uint64_t l;
        if (m->len - p < 8) return unpack_avail(m, p - m->pos + 8, DECK_MSG);
        memcpy(&l, m->buf + p, 8);
        if (l > m->len - p - 8) return unpack_avail(m, p - m->pos + 8 + l, DECK_MSG);
        if (check_msg(&out[i], "deck_msg_unpack")) return DECK_EINVAL;
        if (l > out[i].size)
            return deck_fail(DECK_ERANGE, "deck_msg_unpack: nested message of %llu bytes, target %d holds %lu",
                             (unsigned long long)l, i, out[i].size);
        p += 8 + l;
    }
    for (int i = 0; i < n; i++) {
        uint64_t l;
        memcpy(&l, m->buf + m->pos, 8);
        if (l) memcpy(out[i].buf, m->buf + m->pos + 8, l);
        out[i].len = l;
        out[i].pos = 0;
        m->pos += 8 + l;
    }
    return DECK_OK;
}

int deck_msg_pack(deck_msg_t *m, int type, const void *datum, int n)
{
    int rc = check_msg(m, "deck_msg_pack");
    if (rc) return rc;
    if (!datum || n < 0) return deck_fail(DECK_EINVAL, "deck_msg_pack: null datum or negative count");
    if (type == DECK_STRING) return pack_string(m, datum, n);
    if (type == DECK_MSG) return pack_msgs(m, datum, n);
    size_t sz = type_size(type);
    if (!sz) return deck_fail(DECK_EINVAL, "deck_msg_pack: unknown type %d", type);
    if ((rc = pack_room(m, sz * (size_t)n, type))) return rc;
    memcpy(m->buf + m->len, datum, sz * (size_t)n);
    m->len += sz * (size_t)n;
    return DECK_OK;
}

int deck_msg_unpack(deck_msg_t *m, int type, void *datum, int n)
{
    int rc = check_msg(m, "deck_msg_unpack");
    if (rc) return rc;
    if (!datum || n < 0) return deck_fail(DECK_EINVAL, "deck_msg_unpack: null datum or negative count");
    if (type == DECK_STRING) return unpack_string(m, datum, n);
    if (type == DECK_MSG) return unpack_msgs(m, datum, n);
    size_t sz = type_size(type);
    if (!sz) return deck_fail(DECK_EINVAL, "deck_msg_unpack: unknown type %d", type);
    if ((rc = unpack_avail(m, sz * (size_t)n, type))) return rc;
    memcpy(datum, m->buf + m->pos, sz * (size_t)n);
    m->pos += sz * (size_t)n;
    return DECK_OK;
}

int deck_msg_clear(deck_msg_t *m)
{
    int rc = check_msg(m, "deck_msg_clear");
    if (rc) return rc;
    m->len = m->pos = 0;
    return DECK_OK;
}

int deck_msg_reset(deck_msg_t *m)
{
    int rc = check_msg(m, "deck_msg_reset");
    if (rc) return rc;
    m->pos = 0;
    return DECK_OK;
}

int deck_msg_getbuffer(deck_msg_t *m, void **buffer)
{
    int rc = check_msg(m, "deck_msg_getbuffer");
    if (rc) return rc;
    if (!buffer) return deck_fail(DECK_EINVAL, "deck_msg_getbuffer: null buffer pointer");
    *buffer = m->buf;
    return DECK_OK;
}

int deck_msg_setlength(deck_msg_t *m, unsigned long len)
{
    int rc = check_msg(m, "deck_msg_setlength");
    if (rc) return rc;
    if (len > m->size) return deck_fail(DECK_ERANGE, "deck_msg_setlength: %lu > size %lu", len, m->size);
    m->len = len;
    m->pos = 0;
    return DECK_OK;
}

size_t deck_sizeof_msg(void)  { return sizeof(deck_msg_t); }
