package org.aldeia.vapi;

/**
 * The bookkeeping of the send side (thesis Fig. 4.9, "índice_envio / índice_descritor /
 * índice_completado"), pure arithmetic so it can be tested on its own: a byte ring over the
 * registered send region and a ring of descriptor slots.
 *
 * <p>Every block gets a request id, its sequence number; its descriptor slot is
 * {@code id % slots}. Blocks occupy consecutive bytes of the region; a block never crosses the
 * region's end (it is cut there, the next one starts at offset 0), so no byte is wasted at the
 * wrap. Requests complete in posting order, so the completion of a signalled request releases
 * it and every earlier, unsignalled one.
 *
 * <p>Not thread-safe: the channel's send lock guards it.
 */
final class SendRing {

    private final int regionSize;
    private final int blockSize;
    private final int[] lengths;   // bytes of the request in each slot while it is in flight

    private long nextId;           // id of the next request
    private long oldestId;         // oldest request still in flight (== nextId when idle)
    private int tail;              // region offset of the oldest in-flight byte
    private int inFlightBytes;

    /**
     * @param regionSize bytes of the registered region
     * @param blockSize largest block (the path MTU)
     * @param slots descriptors in the ring
     */
    SendRing(int regionSize, int blockSize, int slots) {
        if (blockSize <= 0 || regionSize < blockSize || slots <= 0) {
            throw new IllegalArgumentException("send ring needs 0 < block size <= region size and "
                    + "slots > 0; got block " + blockSize + ", region " + regionSize + ", slots " + slots);
        }
        this.regionSize = regionSize;
        this.blockSize = blockSize;
        this.lengths = new int[slots];
    }

    int slots() {
        return lengths.length;
    }

    int blockSize() {
        return blockSize;
    }

    /** Requests posted and not yet known complete. */
    int inFlight() {
        return (int) (nextId - oldestId);
    }

    boolean idle() {
        return nextId == oldestId;
    }

    int freeSlots() {
        return lengths.length - inFlight();
    }

    int freeBytes() {
        return regionSize - inFlightBytes;
    }

    /** Whether more than half of the slots or of the region are in flight. */
    boolean halfFull() {
        return inFlight() > lengths.length / 2 || inFlightBytes > regionSize / 2;
    }

    /** Region offset where the next block goes. */
    int head() {
        return (int) (((long) tail + inFlightBytes) % regionSize);
    }

    /** The id the next {@link #claim} returns. */
    long nextId() {
        return nextId;
    }

    int slotOf(long id) {
        return (int) Long.remainderUnsigned(id, lengths.length);
    }

    /**
     * Size of the next block of a write with {@code remaining} bytes left: at most the block
     * size, the free bytes, and the bytes up to the region's end; 0 when no slot or byte is
     * free (the caller must wait for a completion).
     */
    int nextBlockLength(int remaining) {
        if (freeSlots() == 0) {
            return 0;
        }
        return Math.min(Math.min(blockSize, remaining), Math.min(freeBytes(), regionSize - head()));
    }

    /**
     * Takes the next slot for a block of {@code length} bytes at {@link #head()}.
     *
     * @return the block's request id
     */
    long claim(int length) {
        if (freeSlots() == 0 || length < 0 || length > freeBytes() || length > regionSize - head()) {
            throw new IllegalStateException("no room for a block of " + length + " bytes: "
                    + freeSlots() + " free slots, " + freeBytes() + " free bytes, head " + head());
        }
        lengths[slotOf(nextId)] = length;
        inFlightBytes += length;
        return nextId++;
    }

    /** Whether {@code id} is a request still in flight. */
    boolean isInFlight(long id) {
        return id - oldestId >= 0 && nextId - id > 0;
    }

    /**
     * Releases request {@code id} and every earlier one (a signalled completion).
     *
     * @return the number of requests released
     * @throws IllegalArgumentException if {@code id} is not in flight
     */
    int release(long id) {
        if (!isInFlight(id)) {
            throw new IllegalArgumentException("request " + id + " is not in flight (in flight: "
                    + oldestId + " to " + (nextId - 1) + ")");
        }
        int freed = 0;
        long bytes = 0;
        for (; oldestId - id <= 0; oldestId++, freed++) {
            bytes += lengths[slotOf(oldestId)];
        }
        inFlightBytes -= (int) bytes;
        // When nothing is in flight restart at offset 0, so later blocks are not cut at the end.
        tail = inFlightBytes == 0 ? 0 : (int) ((tail + bytes) % regionSize);
        return freed;
    }
}
