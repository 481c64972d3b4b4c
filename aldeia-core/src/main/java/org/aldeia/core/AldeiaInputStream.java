package org.aldeia.core;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketException;
import java.util.Objects;
import org.aldeia.core.spi.Channel;

/**
 * The input stream of an {@link AldeiaSocket}: reads block until data is there and may return
 * fewer bytes than asked, exactly like java.net; {@link #available()} is what was already
 * received locally. Closing it closes the socket, as with java.net.
 */
public final class AldeiaInputStream extends InputStream {

    /** Largest single read handed to a helper thread when SO_TIMEOUT is set. */
    private static final int MAX_TIMED_READ = 64 * 1024;

    private final AldeiaSocket socket;
    private final Channel channel;
    /** Serialises readers, so a pending timed read is always consumed before newer data. */
    private final Object readLock = new Object();
    private volatile PendingRead pending;
    private volatile boolean shutdown;

    AldeiaInputStream(AldeiaSocket socket, Channel channel) {
        this.socket = socket;
        this.channel = channel;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xFF;
    }

    /**
     * As java.net: a read that the socket's close interrupts throws SocketException, whether
     * the channel woke it with an error or with end of stream.
     */
    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        int count;
        try {
            count = readOpen(b, off, len);
        } catch (IOException e) {
            throw JavaNetExceptions.ofStream(e, socket.isClosed());
        }
        if (count < 0 && socket.isClosed()) {
            throw JavaNetExceptions.socketClosed(null);
        }
        return count;
    }

    private int readOpen(byte[] b, int off, int len) throws IOException {
        synchronized (readLock) {
            checkOpen();
            if (shutdown) {
                return -1;
            }
            if (len == 0) {
                return 0;
            }
            int timeout = socket.getSoTimeout();
            if (pending == null && (timeout == 0 || channel.available() > 0)) {
                return channel.read(b, off, len);
            }
            if (pending == null && channel.timedReads()) {
                return channel.read(b, off, len, timeout);
            }
            if (pending == null) {
                pending = PendingRead.start(channel, Math.min(len, MAX_TIMED_READ));
            }
            try {
                return pending.take(b, off, len, timeout);
            } finally {
                if (pending.finished()) {
                    pending = null;
                }
            }
        }
    }

    @Override
    public long skip(long n) throws IOException {
        if (n <= 0) {
            return 0;
        }
        synchronized (readLock) {
            checkOpen();
            if (shutdown) {
                return 0;
            }
            if (pending == null && socket.getSoTimeout() == 0) {
                try {
                    return channel.skip(n);
                } catch (IOException e) {
                    throw JavaNetExceptions.ofStream(e, socket.isClosed());
                }
            }
            // Through read, so that the timeout and a pending timed read are honoured.
            int count = read(new byte[(int) Math.min(n, MAX_TIMED_READ)]);
            return Math.max(count, 0);
        }
    }

    @Override
    public int available() throws IOException {
        checkOpen();
        if (shutdown) {
            return 0;
        }
        PendingRead read = pending;
        try {
            return (read == null ? 0 : read.available()) + channel.available();
        } catch (IOException e) {
            throw JavaNetExceptions.ofStream(e, socket.isClosed());
        }
    }

    /** Closes the socket, as closing a java.net socket's stream does. */
    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** Socket.shutdownInput: later reads return end of stream; the channel ends a blocked one. */
    void shutdown() throws IOException {
        shutdown = true;
        channel.shutdownInput();
    }

    private void checkOpen() throws SocketException {
        if (socket.isClosed()) {
            throw new SocketException("Socket closed");
        }
    }
}
