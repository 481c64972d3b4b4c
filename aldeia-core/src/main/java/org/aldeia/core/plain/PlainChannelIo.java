package org.aldeia.core.plain;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
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
 * another thread ends every wait at once. Reads and writes wait on selectors of their own, so
 * that a reader waiting for data never holds up a writer; as in java.net, one read and one
 * write run at a time. The first wait of each borrows the JVM's {@link SpareSelector} instead
 * (a connection per request waits once, for its answer); the second makes the selector its own.
 */
public final class PlainChannelIo implements Closeable {

    private final SocketChannel channel;
    private final Object readLock = new Object();
    private final Object writeLock = new Object();
    private final Object selectorLock = new Object();
    private Selector readSelector;
    private Selector writeSelector;
    /** The spare selector a read or a write waits on now, for close to wake; under selectorLock. */
    private Selector lentForRead;
    private Selector lentForWrite;
    /** Whether reads (under readLock), writes and the connect (under writeLock) waited before. */
    private boolean readWaited;
    private boolean writeWaited;
    private volatile boolean closed;

    /** Takes over {@code channel}, switching it to non-blocking mode; no call may be in progress on it. */
    public PlainChannelIo(SocketChannel channel) throws IOException {
        this.channel = channel;
        channel.configureBlocking(false);
        SpareSelector.prepare();
    }

    /**
     * Connects, waiting at most {@code timeoutMillis} (0: as long as TCP tries).
     *
     * @throws SocketTimeoutException if the time passed first; the caller closes the socket
     */
    public void connect(InetSocketAddress remote, int timeoutMillis) throws IOException {
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
    public int read(byte[] b, int off, int len, int timeoutMillis) throws IOException {
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
    public void write(byte[] b, int off, int len) throws IOException {
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
    public void write(ByteBuffer... buffers) throws IOException {
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
        boolean reading = op == SelectionKey.OP_READ;
        if (reading ? readWaited : writeWaited) {
            Selector selector = selectorFor(op);
            try {
                selector.select(timeoutMillis);
                selector.selectedKeys().clear();
            } catch (ClosedSelectorException closedUnderUs) {
                throw closed();
            }
        } else {
            if (reading) {
                readWaited = true;
            } else {
                writeWaited = true;
            }
            awaitOnSpare(op, timeoutMillis);
        }
        interrupts.clear();
        if (closed) {
            throw closed();
        }
    }

    /**
     * One wait on the spare selector: registered, selected, then deregistered (cancel and
     * selectNow), so that it goes back holding no channel, and a close of this channel meanwhile
     * really closes it once this wait has left.
     */
    private void awaitOnSpare(int op, long timeoutMillis) throws IOException {
        boolean reading = op == SelectionKey.OP_READ;
        Selector spare = SpareSelector.borrow();
        boolean broken = false;
        try {
            lend(reading, spare);
            SelectionKey key = channel.register(spare, op);
            try {
                spare.select(timeoutMillis);
            } finally {
                key.cancel();
                spare.selectNow();
            }
        } catch (ClosedChannelException closedUnderUs) {
            throw closed();
        } catch (IOException e) {
            broken = true;
            throw e;
        } finally {
            lend(reading, null);
            if (broken) {
                spare.close();
            } else {
                SpareSelector.giveBack(spare);
            }
        }
    }

    /** Notes the spare selector a wait uses (null: none any more), for close to wake; not once closed. */
    private void lend(boolean reading, Selector spare) throws SocketException {
        synchronized (selectorLock) {
            if (spare != null && closed) {
                throw closed();
            }
            if (reading) {
                lentForRead = spare;
            } else {
                lentForWrite = spare;
            }
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
     * Closes the channel, then its own selectors, and wakes a wait on the spare one: every
     * waiting call then throws "Socket closed", and the channel, registered with them, really
     * closes as they let it go. Idempotent. (A wake-up that reaches the spare selector after its
     * wait gave it back costs its next borrower one early return: that wait then looks again on
     * a selector of its own.)
     */
    @Override
    public void close() throws IOException {
        Selector[] selectors;
        Selector[] lent;
        synchronized (selectorLock) {
            closed = true;
            selectors = new Selector[] {readSelector, writeSelector};
            lent = new Selector[] {lentForRead, lentForWrite};
        }
        try {
            channel.close();
        } finally {
            for (Selector selector : lent) {
                if (selector != null) {
                    selector.wakeup();
                }
            }
            for (Selector selector : selectors) {
                if (selector != null) {
                    selector.close();
                }
            }
        }
    }
}
