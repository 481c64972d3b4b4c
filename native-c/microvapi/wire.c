/*
 * A MicroVAPI message on the wire (thesis Fig. 4.18): [int32 length][length bytes of data].
 * DECK cannot tell the receiver how many bytes were packed, so the length travels inside.
 * Stored in native byte order, as DECK's own packing does.
 */
#include <string.h>

#include "mv_internal.h"

int mv_wire_encode(deck_msg_t *msg, const void *data, uint32_t len)
{
    void *buf;
    if (len > INT32_MAX || msg->size < (unsigned long)len + MV_WIRE_HEADER
        || deck_msg_getbuffer(msg, &buf) != DECK_OK)
        return -1;
    int32_t header = (int32_t)len;
    memcpy(buf, &header, MV_WIRE_HEADER);
    if (len)
        memcpy((char *)buf + MV_WIRE_HEADER, data, len);
    return deck_msg_setlength(msg, (unsigned long)len + MV_WIRE_HEADER) == DECK_OK ? 0 : -1;
}

int mv_wire_decode(deck_msg_t *msg, const void **data, uint32_t *len)
{
    void *buf;
    int32_t header;
    if (msg->len < MV_WIRE_HEADER || deck_msg_getbuffer(msg, &buf) != DECK_OK)
        return -1;
    memcpy(&header, buf, MV_WIRE_HEADER);
    if (header < 0 || (unsigned long)header > msg->len - MV_WIRE_HEADER)
        return -1;
    *len = (uint32_t)header;
    *data = (const char *)buf + MV_WIRE_HEADER;
    return 0;
}
