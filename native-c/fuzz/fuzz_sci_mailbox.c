/*
 * Fuzz target: the receiver of DECK's shared-memory transport (sci_recv.c, deck_mbox_retrv on
 * DECK_TRANSPORT=sci) reading a mailbox segment whose sender areas other processes write: what
 * a broken or hostile process of the run can put there.
 *
 * The process is node 0 of a static sci run of 2 nodes, started once in this process; node 1
 * never starts, so whatever would wait for it must give up. Small buffers keep the interesting
 * offsets within reach of small inputs: DECK_MSG_BUF_LIMIT 256 (protocol 2 up to 256 bytes,
 * protocol 3 above), DECK_MEDBUF_SIZE 1024, DECK_MSEG_SIZE 1 MiB. Messages retrieved into: one
 * of 2048 bytes (in the message segment: protocol 3 in place) and one of 100 bytes (on the heap:
 * truncation, and protocol 3 through a receive window).
 *
 * Per input: a fresh mailbox (created, watched for node 1), node 1's bit set in its senders
 * bitmap and node 1's area filled from the input, in this order (a part the input does not
 * reach is zero, as a fresh segment is):
 *
 *     [0,64)        owner line: the owner nonce, then padding; byte 16 (which no protocol
 *                   reads) picks the mailbox's watch: low 2 bits 0 or 3 node 1
 *                   (deck_mbox_watch), 1 none (admits any process), 2 DECK_NOBODY
 *     [64,128)      protocol-3 request line {seq, filled, size}
 *     [128]         protocol-3 signal byte
 *     [129,1153)    protocol-2 buffer (DECK_MEDBUF_SIZE): stamped header lines, each holding
 *                   the first 48 bytes of its body, the rest of the body after it (sci.h)
 *     [1153,5249)   protocol-1 ring: 64 packets of 64 bytes (byte 62 seq, byte 63 flag)
 *
 * then four retrieves that only look (timeout 0): 2048, 100, 2048, 2048 bytes; then the mailbox
 * is destroyed, so that no receiving state carries over to the next input. Any result is
 * fine but a crash, a sanitizer's report, a retrieve that takes more than a second, a result
 * that is not a DECK code a retrieve may give, or a message longer than the one received into.
 *
 * Node 1's area is the last of the segment. AddressSanitizer does not know where a shared
 * mapping ends, so under ASan the rest of the segment's last page is poisoned while the mailbox
 * lives: a read past the area is reported like a heap overflow instead of reading zeros.
 */
#include <sanitizer/asan_interface.h>
#include "fuzz_util.h"
#include "../deck/sci.h"

#define MEDBUF  1024
#define SENDER  1

static deck_mbox_t anchor;                 /* slot 0, for ever: the fuzzed mailbox takes slot 1 */
static deck_msg_t big, small;

static void done(void)
{
    deck_msg_destroy(&big);
    deck_msg_destroy(&small);
    deck_mbox_destroy(&anchor);
    deck_done();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    setenv("DECK_MSG_BUF_LIMIT", "256", 1);
    setenv("DECK_MEDBUF_SIZE", "1024", 1);
    setenv("DECK_MSEG_SIZE", "1048576", 1);
    setenv("DECK_SPIN_US", "0", 1);
    unsetenv("DECK_RUN_KEY");
    fuzz_start_static("sci", 2);
    if (deck_mbox_create(&anchor, "anchor") || deck_msg_create(&big, 2048) || deck_msg_create(&small, 100))
        fuzz_die("mailbox and messages of the fuzz run");
    if (!big.impl) fuzz_die("a message above DECK_MSG_BUF_LIMIT is not in the message segment");
    atexit(done);
    return 0;
}

/* Copies the next part of the input to dst (n bytes; zero beyond the input). */
static void fill(void *dst, size_t n, const uint8_t **at, const uint8_t *end)
{
    size_t k = (size_t)(end - *at) < n ? (size_t)(end - *at) : n;
    memcpy(dst, *at, k);
    memset((char *)dst + k, 0, n - k);
    *at += k;
}

static void retrieve(deck_mbox_t *mb, deck_msg_t *m)
{
    m->len = m->pos = 0;
    long t0 = fuzz_now_ms();
    int rc = deck_mbox_retrv_timed(mb, m, 0);
    long ms = fuzz_now_ms() - t0;
    if (ms > 1000) fuzz_die("a retrieve that only looks took %ld ms (rc %d: %s)", ms, rc, deck_last_error());
    switch (rc) {
    case DECK_OK:
        if (m->len > m->size) fuzz_die("a message of %lu bytes in a message of %lu", m->len, m->size);
        break;
    case DECK_ETIMEDOUT: case DECK_ETRUNC: case DECK_EIO: case DECK_EPEER: case DECK_EPROTO: case DECK_ENOMEM:
        break;
    default:
        fuzz_die("deck_mbox_retrv_timed returned %d (%s): %s", rc, deck_strerror(rc), deck_last_error());
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    deck_mbox_t mb;
    int watch = size > 16 ? data[16] & 3 : 0;
    if (deck_mbox_create(&mb, "fuzzed")
        || (watch != 1 && deck_mbox_watch(&mb, watch == 2 ? DECK_NOBODY : SENDER)))
        fuzz_die("deck_mbox_create");
    void *seg = sci_mbox_segment_of(mb.index);
    if (!seg) fuzz_die("no segment for mailbox %d", mb.index);

    const uint8_t *at = data, *end = data + size;
    fill(sci_mbox_owner(seg, SENDER), DECK_SEG_LINE, &at, end);
    fill(sci_mbox_request(seg, SENDER), DECK_SEG_LINE, &at, end);
    fill(sci_mbox_signal(seg, SENDER), 1, &at, end);
    fill(sci_mbox_medbuf(seg, SENDER), MEDBUF, &at, end);
    fill(sci_mbox_ring(seg, SENDER), SCI_P1_SLOTS * DECK_SEG_LINE, &at, end);
    __atomic_fetch_or(sci_mbox_senders(seg), 1ull << SENDER, __ATOMIC_SEQ_CST);

    /* Past the end of node 1's area, up to the end of the page: mapped, but not the segment's. */
    char *area_end = (char *)sci_mbox_medbuf(seg, SENDER) + MEDBUF;
    size_t slack = (size_t)(-(uintptr_t)area_end & (uintptr_t)(sysconf(_SC_PAGESIZE) - 1));
    if (area_end != (char *)seg + sci_mbox_seg_size() || slack < DECK_SEG_LINE)
        fuzz_die("node 1's area is not the last of the segment, %zu bytes before the end of a page", slack);
    ASAN_POISON_MEMORY_REGION(area_end, slack);

    retrieve(&mb, &big);
    retrieve(&mb, &small);
    retrieve(&mb, &big);
    retrieve(&mb, &big);
    ASAN_UNPOISON_MEMORY_REGION(area_end, slack);   /* before the mapping goes: the next may reuse it */
    if (deck_mbox_destroy(&mb)) fuzz_die("deck_mbox_destroy");
    return 0;
}
