package org.aldeia.core.config;

/**
 * The sizes that steer DECK's shared-segment (sci) transport (seeds/000 ch. 6): messages up to
 * {@code msgBufLimit} bytes travel by protocol 2 through a per-sender buffer of
 * {@code medbufSize} bytes, larger ones by protocol 3 straight into the receiver's buffer in a
 * message segment of {@code msegSize} bytes.
 *
 * @param msgBufLimit {@code deck_msg_buf_limit}: the protocol 2/3 threshold, bytes
 * @param medbufSize {@code deck_medbuf_size}: protocol-2 buffer per sender, at least
 *     {@link #smallestMedbuf} of the limit
 * @param msegSize {@code deck_mseg_size}: the message segment, bytes
 */
public record DeckSciThresholds(int msgBufLimit, int medbufSize, int msegSize) {

    /**
     * DECK/SCI chose 8192 (protocol 3 blocks the sender, so it starts well above the 1 KiB
     * crossover) for SCI's remote memory. On one host's memory the copy protocol 2 adds costs
     * less than protocol 3's wait for the receiver: one MicroVAPI message (64 KiB of blocks, a
     * tail of up to 512 bytes and their wire heads: at most 66 320 bytes) goes by protocol 2,
     * so a stream never waits for a rendezvous per message.
     */
    public static final int DEFAULT_MSG_BUF_LIMIT = 66560;
    /**
     * Eight such messages in flight per sender: streaming 64 KiB writes ran at 4.4 GB/s with
     * the 24768 of DECK/SCI (protocol 3), 6.6 with room for four, 8.4 with eight, and no
     * better with sixteen (pinned, 2 cores). Segment pages exist only where a sender wrote.
     */
    public static final int DEFAULT_MEDBUF_SIZE = 532992;
    public static final int DEFAULT_MSEG_SIZE = 64 << 20;
    /**
     * The unit of DECK's shared-memory layouts (a cache line, SCI's transaction size): a
     * protocol-2 message is a 64-byte header line and its body in whole lines.
     */
    public static final int LINE = 64;

    public static final DeckSciThresholds DEFAULTS =
            new DeckSciThresholds(DEFAULT_MSG_BUF_LIMIT, DEFAULT_MEDBUF_SIZE, DEFAULT_MSEG_SIZE);

    /**
     * The smallest deck_medbuf_size DECK accepts with deck_msg_buf_limit {@code msgBufLimit}:
     * the limit rounded up to whole lines, plus the header line (sci_transport.c's check, so
     * that a file DECK would refuse at start is refused here, naming its line).
     */
    public static long smallestMedbuf(int msgBufLimit) {
        return ((msgBufLimit + (long) LINE - 1) / LINE) * LINE + LINE;
    }
}
