package org.aldeia.core.upgrade;

import java.io.IOException;
import java.net.SocketException;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.spi.Channel;

/**
 * The channel of a connection that accept() returned before the client's CONNECTED came in
 * ({@code BootstrapAcceptor}): our endpoint is connected, so whatever the client sends is
 * received, but the client's endpoint may not admit our messages yet (it connects once it has
 * our INFO), so everything that sends waits until the client confirmed. The client confirms
 * with its CONNECTED on the bootstrap connection ({@link #confirm}), and also with any byte it
 * sends on this channel, which it sends only once connected: a server that
 * answers a request need not wait for the bootstrap's message as well.
 *
 * <p>A client that never confirms (it died, or its connect failed) fails the connection as a
 * TCP peer that vanished does: {@link #fail} aborts the channel, so a blocked read and every
 * later read or write get an IOException. The acceptor's deadline for the step bounds every wait.
 *
 * <p>A close before the confirmation is carried out when it comes: a client whose endpoint is
 * not connected yet drops what it is sent, the end of stream too, and would then wait in its
 * read for ever. The closer does not wait for it (closing a server socket closes the
 * connections accept has not taken, each of which may be waiting).
 */
public final class UnconfirmedChannel implements Channel {

    private final Channel channel;
    private final String clientName;
    private final Object lock = new Object();
    /** Set once: the client confirmed; read on every send, so volatile rather than under the lock. */
    private volatile boolean confirmed;
    /** Why the client will never confirm; set once, under the lock. */
    private IOException failure;
    /** close() or abort() came before the confirmation: done when it comes (under the lock). */
    private Runnable pendingClose;

    public UnconfirmedChannel(Channel channel, String clientName) {
        this.channel = channel;
        this.clientName = clientName;
    }

    /** The client's endpoint admits ours: sends go ahead, and a close that was asked for is done. */
    public void confirm() {
        if (confirmed) {
            return;
        }
        Runnable close;
        synchronized (lock) {
            if (failure != null || confirmed) {
                return;
            }
            confirmed = true;
            close = pendingClose;
            pendingClose = null;
            lock.notifyAll();
        }
        if (close != null) {
            close.run();
        }
    }

    /** The client will never confirm: the connection fails (a no-op once it confirmed). */
    public void fail(Throwable why) {
        synchronized (lock) {
            if (confirmed || failure != null) {
                return;
            }
            failure = new IOException("the client " + clientName + " did not complete its connection", why);
            pendingClose = null;
            lock.notifyAll();
        }
        quietly(channel::abort).run(); // its readers see the abort
    }

    /** Waits for the client's confirmation; the acceptor confirms or fails within its step deadline. */
    private void awaitConfirmed() throws IOException {
        if (confirmed) {
            return;
        }
        synchronized (lock) {
            while (!confirmed && failure == null && pendingClose == null) {
                try {
                    lock.wait(TimeUnit.SECONDS.toMillis(1));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // java.net's streams are not interruptible either
                }
            }
            if (failure != null) {
                throw new IOException(failure.getMessage(), failure);
            }
            if (!confirmed) {
                throw new SocketException("Socket closed");
            }
        }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        awaitConfirmed();
        channel.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
        awaitConfirmed();
        channel.flush();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        return confirmedBy(channel.read(b, off, len));
    }

    @Override
    public int read(byte[] b, int off, int len, int timeoutMillis) throws IOException {
        return confirmedBy(channel.read(b, off, len, timeoutMillis));
    }

    @Override
    public boolean timedReads() {
        return channel.timedReads();
    }

    private int confirmedBy(int n) {
        if (n > 0) { // only a connected client sends (not -1: shutdownInput gives that too)
            confirm();
        }
        return n;
    }

    @Override
    public int available() throws IOException {
        return channel.available();
    }

    @Override
    public long skip(long n) throws IOException {
        long skipped = channel.skip(n);
        if (skipped > 0) {
            confirm();
        }
        return skipped;
    }

    @Override
    public void shutdownOutput() throws IOException {
        awaitConfirmed();
        channel.shutdownOutput();
    }

    @Override
    public void shutdownInput() throws IOException {
        channel.shutdownInput();
    }

    /** The end of stream goes to the client once it can take it; a failed client gets nothing. */
    @Override
    public void close() throws IOException {
        if (!closeWhenConfirmed(quietly(channel::close))) {
            channel.close();
        }
    }

    @Override
    public void abort() throws IOException {
        if (!closeWhenConfirmed(quietly(channel::abort))) {
            channel.abort();
        }
    }

    /** True if {@code close} waits for the confirmation; false once the client confirmed or failed. */
    private boolean closeWhenConfirmed(Runnable close) {
        synchronized (lock) {
            if (confirmed || failure != null) {
                return false;
            }
            if (pendingClose == null) {
                pendingClose = close;
            }
            lock.notifyAll(); // writers waiting for the confirmation: the socket is closed
            return true;
        }
    }

    @FunctionalInterface
    private interface Release {
        void run() throws IOException;
    }

    /** {@code release} without its failure: it runs late (a close asked for earlier) or for a failed client, nobody to tell. */
    private static Runnable quietly(Release release) {
        return () -> {
            try {
                release.run();
            } catch (IOException | RuntimeException e) {
                // see above
            }
        };
    }
}
