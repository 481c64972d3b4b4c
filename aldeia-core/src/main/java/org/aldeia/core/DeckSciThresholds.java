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

    /** DECK/SCI's choice: protocol 3 blocks the sender, so it starts well above the 1 KiB crossover. */
    public static final int DEFAULT_MSG_BUF_LIMIT = 8192;
    public static final int DEFAULT_MEDBUF_SIZE = 24768;
    public static final int DEFAULT_MSEG_SIZE = 64 << 20;
    /** A protocol-2 message carries a 64-byte header before its body. */
    public static final int PROTOCOL2_HEADER = 64;

    public static final DeckSciThresholds DEFAULTS =
            new DeckSciThresholds(DEFAULT_MSG_BUF_LIMIT, DEFAULT_MEDBUF_SIZE, DEFAULT_MSEG_SIZE);
}
