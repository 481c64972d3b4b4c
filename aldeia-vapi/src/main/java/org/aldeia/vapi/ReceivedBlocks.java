package org.aldeia.vapi;

/**
 * The receive side's bookkeeping (thesis Fig. 4.13, "índice_parcial_lidos / índice_total_lidos"),
 * generalised from one receive buffer to K: a FIFO of completed buffers in arrival order, the
 * read offset inside the oldest, and the buffers fully consumed since the last re-post.
 * Pure arithmetic; not thread-safe (the receive lock guards it).
 */
final class ReceivedBlocks {

    private final int[] buffer;
    private final int[] length;
    private final int[] consumed;
    private int first;          // index of the oldest held block in buffer/length
    private int count;          // blocks held
    private int offset;         // bytes already read from the oldest block
    private int held;           // bytes held in all blocks
    private int consumedCount;

    ReceivedBlocks(int buffers) {
        buffer = new int[buffers];
        length = new int[buffers];
        consumed = new int[buffers];
    }

    /** Appends buffer {@code index}, which received {@code bytes} (> 0) bytes. */
    void add(int index, int bytes) {
        if (count == buffer.length || bytes <= 0) {
            throw new IllegalStateException("cannot hold block of " + bytes + " bytes in buffer "
                    + index + " with " + count + " of " + buffer.length + " blocks held");
        }
        int at = (first + count) % buffer.length;
        buffer[at] = index;
        length[at] = bytes;
        count++;
        held += bytes;
    }

    /** Bytes held, not yet read. */
    int held() {
        return held;
    }

    /** The buffer the next byte comes from; only when {@link #held()} > 0. */
    int headBuffer() {
        return buffer[first];
    }

    int headOffset() {
        return offset;
    }

    int headRemaining() {
        return count == 0 ? 0 : length[first] - offset;
    }

    /** Marks {@code n <= headRemaining()} bytes of the oldest block read. */
    void consume(int n) {
        if (n < 0 || n > headRemaining()) {
            throw new IllegalArgumentException("cannot consume " + n + " of " + headRemaining() + " bytes");
        }
        offset += n;
        held -= n;
        if (offset == length[first]) {
            consumed[consumedCount++] = buffer[first];
            first = (first + 1) % buffer.length;
            count--;
            offset = 0;
        }
    }

    /** Buffers fully read since the last {@link #clearConsumed()}, oldest first. */
    int consumedCount() {
        return consumedCount;
    }

    int consumed(int i) {
        return consumed[i];
    }

    void clearConsumed() {
        consumedCount = 0;
    }
}
