package org.aldeia.core;

import java.io.Closeable;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections a server socket has prepared and the application has not accepted yet, and
 * accept's wait for the next one, as java.net's: SO_TIMEOUT bounds it, an interrupt does not end
 * it, closing the server socket ends it with a SocketException.
 *
 * @param <T> what a prepared connection is; closed if it is never accepted
 */
final class AcceptQueue<T extends Closeable> {

    private static final Logger LOG = LoggerFactory.getLogger(AcceptQueue.class);

    /** In the queue, the mark that the server socket was closed (left for the next waiter). */
    private final Optional<T> closedMark = Optional.empty();
    private final BlockingQueue<Optional<T>> prepared = new LinkedBlockingQueue<>();
    private final Runnable onTaken;
    private volatile boolean closed;

    /** @param onTaken run each time accept takes a connection (its slot is free again) */
    AcceptQueue(Runnable onTaken) {
        this.onTaken = onTaken;
    }

    /** A prepared connection; closed at once if the queue is closed. */
    void add(T connection) {
        prepared.add(Optional.of(connection));
        if (closed) {
            closeAll();
        }
    }

    /**
     * The next prepared connection.
     *
     * @param timeoutMillis SO_TIMEOUT: 0 waits for ever
     * @throws SocketTimeoutException if none was ready in time
     * @throws SocketException "Socket is closed" once the queue is closed, also while waiting
     */
    T take(int timeoutMillis) throws IOException {
        Optional<T> next = awaitNext(timeoutMillis);
        if (next == null) {
            throw new SocketTimeoutException("Accept timed out");
        }
        if (next.isEmpty()) {
            prepared.add(closedMark); // for the next thread waiting
            throw new SocketException("Socket is closed");
        }
        onTaken.run();
        return next.get();
    }

    /**
     * Waits as java.net's accept does on a platform thread: an interrupt does not end the wait
     * (nor close anything); the thread's interrupt status is set again when it returns.
     *
     * @return the next entry, or null if {@code timeoutMillis} (not 0) passed first
     */
    private Optional<T> awaitNext(int timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return timeoutMillis == 0 ? prepared.take()
                            : prepared.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Takes back {@code connection} if accept has not taken it yet (it failed while waiting
     * there), closes it and frees its slot: accept never returns a connection known dead.
     */
    void withdraw(T connection) {
        if (prepared.remove(Optional.of(connection))) {
            closeQuietly(connection);
            onTaken.run();
        }
    }

    /** Closes the connections not accepted and wakes every waiter with a SocketException. */
    void close() {
        closed = true;
        closeAll();
    }

    private void closeAll() {
        for (Optional<T> next; (next = prepared.poll()) != null; ) {
            next.ifPresent(AcceptQueue::closeQuietly);
        }
        prepared.add(closedMark);
    }

    static void closeQuietly(Closeable resource) {
        try {
            resource.close();
        } catch (IOException e) {
            LOG.debug("closing a connection that was never accepted: {}", e.toString());
        }
    }
}
