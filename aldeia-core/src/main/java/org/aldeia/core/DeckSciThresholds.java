package org.aldeia.core;

/**
 * The sizes that steer DECK's shared-segment (sci) transport (seeds/000 ch. 6): messages up to
 * {@code msgBufLimit} bytes travel by protocol 2 through a per-sender buffer of
 * {@code medbufSize} bytes, larger ones by protocol 3 straight into the receiver's buffer in a
 * message segment of {@code msegSize} bytes.
 *
 * @param msgBufLimit {@code deck_msg_buf_limit}: the protocol 2/3 threshold, bytes
 * @param medbufSize {@code deck_medbuf_size}: protocol-2 buffer per sender, at least the limit + 64
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
    /** A protocol-2 message carries a 64-byte header before its body. */
    public static final int PROTOCOL2_HEADER = 64;

    public static final DeckSciThresholds DEFAULTS =
            new DeckSciThresholds(DEFAULT_MSG_BUF_LIMIT, DEFAULT_MEDBUF_SIZE, DEFAULT_MSEG_SIZE);
}
