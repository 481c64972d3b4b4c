/*
 * A MicroVAPI message on the wire. The thesis (Fig. 4.18) sent one request per DECK message,
 * [int32 length][length bytes of data]. Here one DECK message carries the consecutive send
 * requests of one QP that were posted together (coalescing), as a sequence of such records:
 *
 *     [int32 len_1][len_1 bytes] [int32 len_2][len_2 bytes] ... [int32 len_n][len_n bytes]
 *
 * WIRE FORMAT: n >= 1 records fill the DECK message exactly; there is no count, the DECK
 * length ends the sequence. A message of one record is the thesis's format. A record of
 * length 0 is a zero-length send (end of stream) in its place; a DECK message of length 0 is
 * not MicroVAPI data but a wake-up token (qp_recv.c). Both peers run this same library, so
 * there is no version field. Integers are in native byte order, as DECK's own packing.
 *
 * Bounds: at most MV_COALESCE_BLOCKS records, and more than one only while their data stays
 * within MV_COALESCE_BYTES; a single record may be as large as the mtu. Every message fits
 * mv_wire_capacity(mtu) bytes, which is what both sides allocate (once per QP and direction).
 */
#include <string.h>

#include "mv_internal.h"

uint32_t mv_wire_capacity(uint32_t mtu)
{
    return (mtu > MV_COALESCE_BYTES ? mtu : MV_COALESCE_BYTES)
           + MV_COALESCE_BLOCKS * MV_WIRE_HEADER;
}

int mv_wire_fits(uint32_t count, uint64_t payload, uint32_t len)
{
    return count == 0
           || (count < MV_COALESCE_BLOCKS && payload + len <= MV_COALESCE_BYTES);
}

uint32_t mv_wire_batch(const VAPI_sr_desc_t *list, uint32_t n)
{
    uint32_t k = 0;
    uint64_t payload = 0;
    while (k < n && mv_wire_fits(k, payload, list[k].len))
        payload += list[k++].len;
    return k;
}

int mv_wire_append(deck_msg_t *msg, const void *data, uint32_t len)
{
    char *buf = msg->buf;
    if (len > INT32_MAX || msg->size - msg->len < (unsigned long)len + MV_WIRE_HEADER)
        return -1;
    int32_t header = (int32_t)len;
    memcpy(buf + msg->len, &header, MV_WIRE_HEADER);
    if (len)
        memcpy(buf + msg->len + MV_WIRE_HEADER, data, len);
    return deck_msg_setlength(msg, msg->len + MV_WIRE_HEADER + len) == DECK_OK ? 0 : -1;
}

int mv_wire_next(const deck_msg_t *msg, uint32_t *off, const void **data, uint32_t *len)
{
    int32_t header;
    if (msg->len < *off || msg->len - *off < MV_WIRE_HEADER)
        return -1;
    memcpy(&header, msg->buf + *off, MV_WIRE_HEADER);
    unsigned long rest = msg->len - *off - MV_WIRE_HEADER;
    if (header < 0 || (unsigned long)header > rest)
        return -1;
    *len = (uint32_t)header;
    *data = msg->buf + *off + MV_WIRE_HEADER;
    *off += MV_WIRE_HEADER + (uint32_t)header;
    return 0;
}
