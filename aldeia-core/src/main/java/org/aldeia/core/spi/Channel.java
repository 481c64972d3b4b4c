package org.aldeia.core.spi;

import java.io.Closeable;
import java.io.IOException;

/**
 * A connected byte stream between two Aldeia sockets, with the thesis's semantics: writes are
 * asynchronous (they return once the data is copied into registered memory and posted),
 * {@link #flush()} waits until every write so far was delivered, reads block.
 *
 * <p>One thread may write while another reads. Implementations keep the number of native
 * calls per {@code write}/{@code read} independent of its length.
 */
public interface Channel extends Closeable {

    /** Copies and posts {@code len} bytes; blocks only while the send ring is full. */
    void write(byte[] b, int off, int len) throws IOException;

    /** Blocks until every byte written so far has been delivered to the peer. */
    void flush() throws IOException;

    /**
     * Blocks until at least one byte is there; returns how many were copied (may be fewer
     * than {@code len}), 0 when {@code len} is 0, or -1 once the peer has shut its output
     * and every byte before that was read.
     *
     * @throws IOException if the peer went away without shutting down, or the channel closed
     */
    int read(byte[] b, int off, int len) throws IOException;

    /**
     * As {@link #read(byte[], int, int)}, but waits at most {@code timeoutMillis} (SO_TIMEOUT,
     * more than 0) for the first byte, then throws {@link java.net.SocketTimeoutException}; the
     * channel stays usable and no byte is lost. Only where {@link #timedReads()} says so.
     */
    default int read(byte[] b, int off, int len, int timeoutMillis) throws IOException {
        throw new UnsupportedOperationException(getClass().getName() + " has no timed read");
    }

    /**
     * Whether {@link #read(byte[], int, int, int)} bounds its wait itself. If not, a socket's
     * stream with SO_TIMEOUT hands a read that would block to a helper thread and waits for it.
     */
    default boolean timedReads() {
        return false;
    }

    /** Bytes already received locally that a read returns without blocking. */
    int available() throws IOException;

    /** Discards up to {@code n} bytes, blocking like read; returns how many were skipped. */
    long skip(long n) throws IOException;

    /** Flushes, then tells the peer no more bytes follow (its reads then return -1). */
    void shutdownOutput() throws IOException;

    /**
     * Socket.shutdownInput: every later read returns -1, and so does a read blocked now, within
     * a moment (the JDK's returns at once; an implementation that can only notice between two
     * bounded waits says how long in its documentation). Tells the peer nothing.
     */
    void shutdownInput() throws IOException;

    /**
     * Shuts the output down if it is not yet (so the peer sees -1 after the last byte),
     * wakes any thread blocked in read or write with an IOException, and releases the queue
     * pair. Idempotent.
     */
    @Override
    void close() throws IOException;

    /**
     * An abortive close (SO_LINGER 0, TCP's reset): as {@link #close()}, but without the end of
     * stream, and the peer's reads and writes fail with "connection reset" instead of a -1. A
     * channel that cannot tell its peer apart closes as usual.
     */
    default void abort() throws IOException {
        close();
    }
}
