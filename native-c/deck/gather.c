/*
 * Messages posted in pieces (deck_mbox_postv_keyed): the message is the pieces' bytes one
 * after the other, as if they had been copied into one buffer first. A transport that copies
 * into the receiver's memory anyway (sci) reads each piece once, where the flat API made the
 * caller copy its pieces together first (MicroVAPI: its wire head and a 64 KiB block taken
 * from the registered send ring, once more per block); tcp hands the pieces to the kernel in
 * one vectored write behind its frame header.
 */
#include <string.h>
#include "internal.h"

int deck_gather_check(const struct iovec *iov, int cnt, size_t *len, const char *fn)
{
    if (!iov || cnt < 1 || cnt > DECK_GATHER_MAX)
        return deck_fail(DECK_EINVAL, "%s: %d pieces; 1..%d are allowed", fn, cnt, DECK_GATHER_MAX);
    size_t total = 0;
    for (int i = 0; i < cnt; i++) {
        if (!iov[i].iov_base && iov[i].iov_len)
            return deck_fail(DECK_EINVAL, "%s: piece %d is null with %zu bytes", fn, i, iov[i].iov_len);
        if (iov[i].iov_len > deck_msg_max() - total)
            return deck_fail(DECK_EINVAL, "%s: the pieces come to more than DECK_MSG_MAX (%lu) bytes", fn,
                             deck_msg_max());
        total += iov[i].iov_len;
    }
    *len = total;
    return DECK_OK;
}

void deck_gather_copy(void *dst, const struct iovec *iov, int cnt, size_t from, size_t n)
{
    char *out = dst;
    for (int i = 0; i < cnt && n > 0; i++) {
        size_t piece = iov[i].iov_len;
        if (from >= piece) {   /* wholly before the range */
            from -= piece;
            continue;
        }
        size_t take = piece - from < n ? piece - from : n;
        memcpy(out, (const char *)iov[i].iov_base + from, take);
        out += take;
        n -= take;
        from = 0;
    }
}
