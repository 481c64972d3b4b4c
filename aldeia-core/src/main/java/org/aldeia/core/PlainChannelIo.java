package org.aldeia.core;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * Blocking connect, read and write on a plain TCP channel kept in non-blocking mode, waiting
 * on a selector, so that the connection behaves as java.net's own sockets do where an NIO
 * channel in blocking mode does not: an interrupt neither ends a wait nor closes the channel
 * (the thread's interrupt status is set again when the call returns), while a close from
 * another thread ends every wait at once. Reads and writes wait on selectors of their own,
 * made when first needed, so that a reader waiting for data never holds up a writer; as in
 * java.net, one read and one write run at a time.
 */
final class PlainChannelIo implements Closeable {

    private final SocketChannel channel;
    private final Object readLock = new Object();
    private final Object writeLock = new Object();
    private final Object selectorLock = new Object();
    private Selector readSelector;
    private Selector writeSelector;
    private volatile boolean closed;

    /** Takes over {@code channel}, switching it to non-blocking mode; no call may be in progress on it. */
    PlainChannelIo(SocketChannel channel) throws IOException {
        this.channel = channel;
        channel.configureBlocking(false);
    }

    /**
     * Connects, waiting at most {@code timeoutMillis} (0: as long as TCP tries).
     *
     * @throws SocketTimeoutException if the time passed first; the caller closes the socket
     */
    void connect(InetSocketAddress remote, int timeoutMillis) throws IOException {
        synchronized (writeLock) {
            long deadline = deadline(timeoutMillis);
            Interrupts interrupts = new Interrupts();
            try {
                if (!channel.connect(remote)) {
                    while (!channel.finishConnect()) {
                        await(SelectionKey.OP_CONNECT, deadline, "Connect timed out", interrupts);
                    }
                }
            } finally {
                interrupts.restore();
            }
        }
    }

    /**
     * Reads at least one byte, or returns -1 at the end of the stream.
     *
     * @param timeoutMillis SO_TIMEOUT: 0 waits for ever
     * @throws SocketTimeoutException if no byte arrived in time; the connection is still usable
     */
    int read(byte[] b, int off, int len, int timeoutMillis) throws IOException {
        synchronized (readLock) {
            ByteBuffer buffer = ByteBuffer.wrap(b, off, len);
            long deadline = deadline(timeoutMillis);
            Interrupts interrupts = new Interrupts();
            try {
                while (true) {
                    int n = channel.read(buffer);
                    if (n != 0) {
                        return n;
                    }
                    await(SelectionKey.OP_READ, deadline, "Read timed out", interrupts);
                }
            } finally {
                interrupts.restore();
            }
        }
    }

    /** Writes every byte, waiting while the kernel's send buffer is full. */
    void write(byte[] b, int off, int len) throws IOException {
        synchronized (writeLock) {
            ByteBuffer buffer = ByteBuffer.wrap(b, off, len);
            Interrupts interrupts = new Interrupts();
            try {
                while (buffer.hasRemaining()) {
                    if (channel.write(buffer) == 0) {
                        await(SelectionKey.OP_WRITE, 0, null, interrupts);
                    }
                }
            } finally {
                interrupts.restore();
            }
        }
    }

    /** Writes every byte of {@code buffers}, in order, each turn in one system call (a gathering write). */
    void write(ByteBuffer... buffers) throws IOException {
        synchronized (writeLock) {
            Interrupts interrupts = new Interrupts();
            try {
                while (buffers[buffers.length - 1].hasRemaining()) {
                    if (channel.write(buffers) == 0) {
                        await(SelectionKey.OP_WRITE, 0, null, interrupts);
                    }
                }
            } finally {
                interrupts.restore();
            }
        }
    }

    private static long deadline(int timeoutMillis) {
        return timeoutMillis == 0 ? 0 : System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    }

    /** Interrupts seen while waiting: cleared so the selector can wait again, set again at the end. */
    private static final class Interrupts {
        private boolean seen;

        void clear() {
            seen |= Thread.interrupted();
        }

        void restore() {
            if (seen) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits until the channel may be ready for {@code op}, the deadline (0: none) passes, or it is closed. */
    private void await(int op, long deadline, String timeoutMessage, Interrupts interrupts) throws IOException {
        long timeoutMillis = 0;
        if (deadline != 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new SocketTimeoutException(timeoutMessage);
            }
            timeoutMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(left));
        }
        Selector selector = selectorFor(op);
        try {
            selector.select(timeoutMillis);
            selector.selectedKeys().clear();
        } catch (ClosedSelectorException closedUnderUs) {
            throw closed();
        }
        interrupts.clear();
        if (closed) {
            throw closed();
        }
    }

    /** The read selector for OP_READ, the write one for OP_WRITE and OP_CONNECT; registered once. */
    private Selector selectorFor(int op) throws IOException {
        synchronized (selectorLock) {
            if (closed) {
                throw closed();
            }
            boolean reading = op == SelectionKey.OP_READ;
            Selector selector = reading ? readSelector : writeSelector;
            if (selector == null) {
                selector = Selector.open();
                channel.register(selector, op);
                if (reading) {
                    readSelector = selector;
                } else {
                    writeSelector = selector;
                }
            } else {
                selector.keys().iterator().next().interestOps(op);
            }
            return selector;
        }
    }

    private static SocketException closed() {
        return new SocketException("Socket closed");
    }

    /**
     * Closes the channel, then the selectors: that wakes every waiting call (which then throws
     * "Socket closed") and lets the channel, registered with them, really close. Idempotent.
     */
    @Override
    public void close() throws IOException {
        Selector[] selectors;
        synchronized (selectorLock) {
            closed = true;
            selectors = new Selector[] {readSelector, writeSelector};
        }
        try {
            channel.close();
        } finally {
            for (Selector selector : selectors) {
                if (selector != null) {
                    selector.close();
                }
            }
        }
    }
}
