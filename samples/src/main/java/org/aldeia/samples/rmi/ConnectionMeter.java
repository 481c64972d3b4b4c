package org.aldeia.samples.rmi;

import java.net.Socket;
import java.rmi.server.RMIServerSocketFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.aldeia.core.AldeiaSocket;

/**
 * Counts what an RMI server's connections carried: how many connections its server sockets
 * accepted, how many of them were {@link AldeiaSocket}s, and the bytes read and written on
 * them. It is how the sample shows that its calls went over Aldeia and not over JDK sockets.
 */
final class ConnectionMeter {

    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger aldeiaConnections = new AtomicInteger();
    private final AtomicLong bytesRead = new AtomicLong();
    private final AtomicLong bytesWritten = new AtomicLong();

    /**
     * {@code factory}, with every server socket it makes metered. Pass the one returned
     * instance everywhere: RMI shares a listening port between a registry and an exported
     * object only when their factories are equal, and this one is equal only to itself.
     */
    RMIServerSocketFactory wrap(RMIServerSocketFactory factory) {
        return port -> new MeteredServerSocket(factory.createServerSocket(port), this);
    }

    void accepted(Socket socket) {
        connections.incrementAndGet();
        if (socket instanceof AldeiaSocket) {
            aldeiaConnections.incrementAndGet();
        }
    }

    void read(long bytes) {
        bytesRead.addAndGet(bytes);
    }

    void written(long bytes) {
        bytesWritten.addAndGet(bytes);
    }

    int connections() {
        return connections.get();
    }

    int aldeiaConnections() {
        return aldeiaConnections.get();
    }

    long bytesRead() {
        return bytesRead.get();
    }

    long bytesWritten() {
        return bytesWritten.get();
    }

    /** One line for the server's output (the end-to-end test reads it). */
    String summary() {
        return "accepted " + connections() + " connections (" + aldeiaConnections() + " AldeiaSocket), read "
                + bytesRead() + " bytes, wrote " + bytesWritten() + " bytes";
    }
}
