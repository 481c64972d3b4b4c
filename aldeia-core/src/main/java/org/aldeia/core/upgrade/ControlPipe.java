package org.aldeia.core.upgrade;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The bootstrap's byte streams over a TCP-first connection's control frames ({@link
 * TcpFirstChannel}): what the connection's reader hands over ({@link #deliver}) is read from
 * {@link #in}; each flush of {@link #out} is one control frame. A bootstrap is a handful of
 * messages, so a peer that sends more than {@link #MAX_WAITING} unread ones is refused.
 */
final class ControlPipe {

    static final int MAX_WAITING = 8;
    /** While waiting for a message, how often the connection is looked at when nobody reads it. */
    private static final long PUMP_MILLIS = 1;

    private final TcpFirstChannel connection;
    private final ArrayDeque<byte[]> arrived = new ArrayDeque<>();
    private boolean ended;
    private byte[] current = new byte[0];
    private int position;

    ControlPipe(TcpFirstChannel connection) {
        this.connection = connection;
    }

    /** A control frame from the peer (on the connection's reader: never blocks). */
    synchronized void deliver(byte[] message) throws SocketException {
        if (arrived.size() >= MAX_WAITING) {
            throw new SocketException(connection.peerName() + " sent more than " + MAX_WAITING
                    + " bootstrap messages nobody asked for");
        }
        arrived.addLast(message);
        notifyAll();
    }

    /** Whether the connection's TCP stream ended or the connection closed. */
    synchronized boolean ended() {
        return ended;
    }

    /** No more messages will come: a read waiting for one ends. */
    synchronized void end() {
        ended = true;
        notifyAll();
    }

    /** The peer's messages as one stream; a read that waits more than {@code timeoutMillis} throws SocketTimeoutException. */
    InputStream in(int timeoutMillis) {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (len == 0) {
                    return 0;
                }
                if (!awaitBytes(timeoutMillis)) {
                    return -1;
                }
                synchronized (ControlPipe.this) {
                    int n = Math.min(len, current.length - position);
                    System.arraycopy(current, position, b, off, n);
                    position += n;
                    return n;
                }
            }
        };
    }

    /** True once bytes are there; false at the end; pumps the connection while it waits. */
    private boolean awaitBytes(int timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            synchronized (this) {
                while (position == current.length && !arrived.isEmpty()) {
                    current = arrived.pollFirst();
                    position = 0;
                }
                if (position < current.length) {
                    return true;
                }
                if (ended) {
                    return false;
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new SocketTimeoutException("no bootstrap message within " + timeoutMillis + " ms");
                }
                try {
                    wait(PUMP_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SocketException("the upgrade was interrupted");
                }
            }
            connection.pump(); // a side that only writes never reads its peer's messages otherwise
        }
    }

    /** Our messages: each flush goes as one control frame. */
    OutputStream out() {
        return new OutputStream() {
            private final ByteArrayOutputStream message = new ByteArrayOutputStream();

            @Override
            public void write(int b) {
                message.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                message.write(b, off, len);
            }

            @Override
            public void flush() throws IOException {
                if (message.size() > 0) {
                    connection.writeControl(message.toByteArray());
                    message.reset();
                }
            }
        };
    }
}
