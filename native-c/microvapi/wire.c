/*
 * A MicroVAPI message on the wire. The thesis (Fig. 4.18) sent one request per DECK message,
 * [int32 length][length bytes of data], to a mailbox per queue pair. Here every queue pair of a
 * process receives through the process's one mailbox (engine.c), so a message first names
 * both queue pairs and carries the window (flow control, qp_recv.c); then come the
 * consecutive send requests of one queue pair that were posted together (coalescing):
 *
 *     0        4        8        12       16
 *     +--------+--------+--------+--------+-----------------+-----------------+---
 *     |dest_qp | src_qp | credit |  kind  | [int32 len_1]   | [int32 len_2]   | ...
 *     |        |        |        |        |  len_1 bytes    |  len_2 bytes    |
 *     +--------+--------+--------+--------+-----------------+-----------------+---
 *
 * WIRE FORMAT: a 16-byte head (struct mv_wire_head), then for MV_WIRE_DATA n >= 1 records that
 * fill the DECK message exactly (no count: the DECK length ends the sequence); MV_WIRE_CREDIT
 * and MV_WIRE_RESET messages are the head alone. `credit` is the sending side's receive edge
 * for the other direction (every message carries it: window updates ride on data). A record
 * of length 0 is a zero-length send (end of stream) in its place; a DECK message of length 0
 * is not MicroVAPI data but a wake-up token (engine.c). Both peers run this same library, so
 * there is no version field. Integers are in native byte order, as DECK's own packing.
 *
 * Bounds: at most MV_COALESCE_BLOCKS records, and more than one only while their data stays
 * within the queue pair's bound (mv_wire_bound: MV_COALESCE_BYTES over shared memory, 256 KiB
 * over tcp); a single record may be as large as the mtu. Every message fits
 * mv_wire_capacity(MV_MTU_MAX) bytes, the limit of every process's mailbox (engine.c).
 *
 * A data message is posted in pieces (mv_wire_gather, deck_mbox_postv_keyed): the head and the
 * length headers from the sender's stack, each record's bytes straight from the registered
 * memory its send request names, so DECK copies them once, into the receiver's memory.
 */
#include <string.h>

#include "mv_internal.h"

uint32_t mv_wire_capacity(uint32_t mtu)
{
    return MV_WIRE_HEAD + (mtu > MV_COALESCE_BYTES ? mtu : MV_COALESCE_BYTES)
           + MV_COALESCE_BLOCKS * MV_WIRE_HEADER;
}

uint32_t mv_wire_bound(unsigned long hint)
{
    const unsigned long overhead = MV_WIRE_HEAD + MV_COALESCE_BLOCKS * MV_WIRE_HEADER;
    unsigned long bytes = hint > overhead ? hint - overhead : 0;
    if (bytes > MV_MTU_MAX)
        bytes = MV_MTU_MAX;
    return bytes < MV_COALESCE_BYTES ? MV_COALESCE_BYTES : (uint32_t)bytes;
}

int mv_wire_fits(uint32_t count, uint64_t payload, uint32_t len, uint32_t bound)
{
    return count == 0
           || (count < MV_COALESCE_BLOCKS && payload + len <= bound);
}

_Static_assert(MV_WIRE_PIECES(MV_COALESCE_BLOCKS) <= DECK_GATHER_MAX, "a message's pieces fit one gathered post");

uint32_t mv_wire_gather(struct iovec *iov, const struct mv_wire_head *head, int32_t *lens,
                        const VAPI_sr_desc_t *list, uint32_t n)
{
    if (n > MV_COALESCE_BLOCKS)
        return 0;
    iov[0] = (struct iovec){ .iov_base = (void *)head, .iov_len = MV_WIRE_HEAD };
    for (uint32_t i = 0; i < n; i++) {
        if (list[i].len > INT32_MAX)
            return 0;
        lens[i] = (int32_t)list[i].len;
        iov[1 + 2 * i] = (struct iovec){ .iov_base = &lens[i], .iov_len = MV_WIRE_HEADER };
        iov[2 + 2 * i] = (struct iovec){ .iov_base = (void *)(uintptr_t)list[i].addr, .iov_len = list[i].len };
    }
    return MV_WIRE_PIECES(n);
}

int mv_wire_head(const deck_msg_t *msg, struct mv_wire_head *head)
{
    if (msg->len < MV_WIRE_HEAD)
        return -1;
    memcpy(head, msg->buf, MV_WIRE_HEAD);
    return 0;
}

int mv_wire_next(const char *buf, uint32_t len, uint32_t *off, const void **data, uint32_t *dlen)
{
    int32_t header;
    if (len < *off || len - *off < MV_WIRE_HEADER)
        return -1;
    memcpy(&header, buf + *off, MV_WIRE_HEADER);
    uint32_t rest = len - *off - MV_WIRE_HEADER;
    if (header < 0 || (uint32_t)header > rest)
        return -1;
    *dlen = (uint32_t)header;
    *data = buf + *off + MV_WIRE_HEADER;
    *off += MV_WIRE_HEADER + (uint32_t)header;
    return 0;
}

int64_t mv_wire_payload(const char *buf, uint32_t len)
{
    uint64_t payload = 0;
    uint32_t off = 0;
    const void *data;
    uint32_t dlen;
    while (off < len) {
        if (mv_wire_next(buf, len, &off, &data, &dlen))
            return -1;
        payload += dlen;
    }
    return off == len && len > 0 ? (int64_t)payload : -1;
}
