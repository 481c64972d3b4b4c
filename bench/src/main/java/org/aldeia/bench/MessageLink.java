package org.aldeia.bench;

import java.io.IOException;

/**
 * One side of a two-way message channel between the benchmark's client and server, whatever
 * carries it (a byte stream or Aeron's log buffers). Frames are laid out by {@link BenchProtocol}.
 */
interface MessageLink extends AutoCloseable {

    /**
     * Writes the header (type, payloadLength) into {@code frame[0..8)} and sends the frame; may
     * return before delivery (Aldeia's writes are asynchronous), see {@link #flush()}.
     */
    void send(byte[] frame, int type, int payloadLength) throws IOException;

    /** Blocks until everything sent so far has left this side (Aldeia: delivered). */
    void flush() throws IOException;

    /**
     * Blocks for the next frame and stores it, header included, in {@code frame}; returns its
     * payload length. Fails if the frame does not fit or the peer is gone.
     */
    int receive(byte[] frame) throws IOException;

    @Override
    void close() throws IOException;
}
