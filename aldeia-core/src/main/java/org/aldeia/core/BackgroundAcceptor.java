package org.aldeia.core;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Accepts the TCP connections of a listener on a thread of its own and prepares each one on
 * another thread (telling an Aldeia client from a plain one, running the bootstrap), so that
 * a client that is slow, silent or dead never holds {@code accept} for the others, as a
 * client never holds java.net's accept, and so that an Aldeia client's connect completes once
 * the server has taken it, whether or not the application is in accept at that moment, as
 * TCP's does. At most {@code backlog} connections are being prepared or waiting to be
 * accepted; beyond that no more are taken and the kernel's backlog holds the next ones.
 *
 * @param <T> what a prepared connection is; closed if it is never accepted
 */
final class BackgroundAcceptor<T extends Closeable> implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(BackgroundAcceptor.class);

    /** Turns an accepted TCP connection into what accept returns; it owns the channel. */
    @FunctionalInterface
    interface Preparation<T> {
        T prepare(SocketChannel accepted) throws IOException;
    }

    /** In the queue of prepared connections, the mark that the acceptor was closed. */
    private final Optional<T> closedMark = Optional.empty();

    private final ServerSocketChannel listener;
    private final Preparation<T> preparation;
    private final String name;
    private final Semaphore slots;
    private final BlockingQueue<Optional<T>> prepared = new LinkedBlockingQueue<>();
    private final Set<SocketChannel> preparing = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean closed;

    /**
     * Starts accepting on {@code listener}, a bound blocking channel.
     *
     * @param name for the threads and the log, e.g. "port 8080"
     */
    BackgroundAcceptor(ServerSocketChannel listener, int backlog, String name, Preparation<T> preparation) {
        this.listener = listener;
        this.preparation = preparation;
        this.name = name;
        this.slots = new Semaphore(Math.max(1, backlog));
        this.acceptor = new Thread(this::acceptLoop, "aldeia-accept-" + name);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel accepted;
            try {
                slots.acquire();
                accepted = listener.accept();
            } catch (InterruptedException | ClosedChannelException closedUnderUs) {
                return; // close() interrupts the wait for a slot, or closes the listener under accept
            } catch (IOException e) {
                // e.g. the process is out of file descriptors: keep serving the connections made
                slots.release();
                LOG.warn("Aldeia accept on {}: {}", name, e.toString());
                pause();
                continue;
            }
            preparing.add(accepted);
            try {
                Thread preparer = new Thread(() -> prepare(accepted), "aldeia-prepare-" + name);
                preparer.setDaemon(true);
                preparer.start();
            } catch (Throwable noThread) { // e.g. OutOfMemoryError: unable to create native thread
                dropped(accepted, noThread);
                pause();
            }
        }
    }

    /** After a failed accept, lest a lasting failure spin this thread. */
    private static void pause() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void prepare(SocketChannel accepted) {
        T connection;
        try {
            connection = preparation.prepare(accepted);
        } catch (Throwable e) { // an Error too: the slot and the channel must be given back
            dropped(accepted, e);
            return;
        }
        // Out of the set close() empties before it can be accepted: once accepted it is the
        // application's. A close() in between is seen below.
        preparing.remove(accepted);
        prepared.add(Optional.of(connection));
        if (closed) {
            closeAll();
        }
    }

    /** A connection that could not be prepared: closed, its slot given back, logged. */
    private void dropped(SocketChannel accepted, Throwable why) {
        String client = describe(accepted);
        preparing.remove(accepted);
        closeQuietly(accepted);
        slots.release();
        if (!closed) {
            LOG.warn("Aldeia accept on {} from {}: the connection failed before it could be accepted ({})", name,
                    client, why.toString());
        }
    }

    /**
     * The next prepared connection.
     *
     * @param timeoutMillis SO_TIMEOUT: 0 waits for ever
     * @throws SocketTimeoutException if none was ready in time
     * @throws SocketException "Socket is closed" once the acceptor is closed, also while waiting
     */
    T accept(int timeoutMillis) throws IOException {
        Optional<T> next = awaitNext(timeoutMillis);
        if (next == null) {
            throw new SocketTimeoutException("Accept timed out");
        }
        if (next.isEmpty()) {
            prepared.add(closedMark); // for the next thread waiting
            throw new SocketException("Socket is closed");
        }
        slots.release();
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
     * Stops accepting; connections being prepared or not yet accepted are closed, and every
     * thread waiting in {@link #accept} gets a SocketException. Idempotent.
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        acceptor.interrupt();
        try {
            listener.close();
            awaitAcceptorEnd();
        } finally {
            preparing.forEach(BackgroundAcceptor::closeQuietly);
            closeAll();
        }
    }

    /**
     * The kernel keeps listening until the acceptor's accept call has returned (the call holds
     * the socket), so a close that returned at once could leave the port taken for a moment:
     * a new server socket bound to it right away would fail.
     */
    private void awaitAcceptorEnd() {
        if (Thread.currentThread() == acceptor) {
            return;
        }
        try {
            acceptor.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes the prepared connections not accepted and leaves the closed mark for waiters. */
    private void closeAll() {
        for (Optional<T> next; (next = prepared.poll()) != null; ) {
            next.ifPresent(BackgroundAcceptor::closeQuietly);
        }
        prepared.add(closedMark);
    }

    private static void closeQuietly(Closeable resource) {
        try {
            resource.close();
        } catch (IOException e) {
            LOG.debug("closing a connection that was never accepted: {}", e.toString());
        }
    }

    /** The client's address and port for the log, e.g. 10.0.0.9:40112. */
    static String describe(SocketChannel accepted) {
        try {
            InetSocketAddress remote = (InetSocketAddress) accepted.getRemoteAddress();
            return remote.getAddress().getHostAddress() + ":" + remote.getPort();
        } catch (IOException e) {
            return "a client whose address is unknown (" + e.getMessage() + ")";
        }
    }
}
