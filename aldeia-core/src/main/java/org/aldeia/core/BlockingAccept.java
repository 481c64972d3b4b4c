package org.aldeia.core;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.function.BooleanSupplier;

/** Accepts one TCP connection the way java.net's ServerSocket.accept does, for Aldeia's listeners. */
final class BlockingAccept {

    private BlockingAccept() {}

    /**
     * Waits for a connection on {@code listener} (blocking mode).
     *
     * @param timeoutMillis SO_TIMEOUT: 0 waits for ever
     * @param closed whether the owning server socket was closed, which ends a wait in progress
     * @throws SocketTimeoutException if the timeout passed without a connection
     * @throws SocketException "Socket is closed" if the server socket was closed, also while waiting
     */
    static SocketChannel accept(ServerSocketChannel listener, int timeoutMillis, BooleanSupplier closed)
            throws IOException {
        try {
            // The adaptor's accept honours a timeout and is woken by close of the channel.
            ServerSocket adaptor = listener.socket();
            adaptor.setSoTimeout(timeoutMillis);
            return adaptor.accept().getChannel();
        } catch (SocketTimeoutException e) {
            throw e;
        } catch (IOException e) {
            if (closed.getAsBoolean()) {
                SocketException closedWhileWaiting = new SocketException("Socket is closed");
                closedWhileWaiting.initCause(e);
                throw closedWhileWaiting;
            }
            throw e;
        }
    }
}
