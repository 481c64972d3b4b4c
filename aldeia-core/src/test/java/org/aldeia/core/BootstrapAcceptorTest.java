package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The acceptor behind both kinds of Aldeia server socket, on its own. */
@Timeout(30)
class BackgroundAcceptorTest {

    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    /** An Error in a preparation (a provider's missing class, say) must give its slot back. */
    @Test
    void aPreparationThatThrowsAnErrorGivesItsSlotBack() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(LOOPBACK, 1);
                BackgroundAcceptor<SocketChannel> acceptor = new BackgroundAcceptor<>(listener, 1, "test",
                        accepted -> {
                            if (calls.incrementAndGet() == 1) {
                                throw new NoClassDefFoundError("a provider's class");
                            }
                            return accepted;
                        })) {
            SocketChannel first = SocketChannel.open(listener.getLocalAddress());
            SocketChannel second = SocketChannel.open(listener.getLocalAddress());
            try (SocketChannel accepted = acceptor.accept(10_000)) {
                assertEquals(second.getLocalAddress(), accepted.getRemoteAddress());
            }
            assertEquals(-1, first.read(java.nio.ByteBuffer.allocate(1)), "the failed one was closed");
            first.close();
            second.close();
        }
    }

    /** As java.net's accept on a platform thread: an interrupt neither ends the wait nor closes anything. */
    @Test
    void anInterruptDoesNotEndAcceptAndIsKept() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(LOOPBACK, 4);
                BackgroundAcceptor<SocketChannel> acceptor = new BackgroundAcceptor<>(listener, 4, "test",
                        accepted -> accepted)) {
            AtomicBoolean stillInterrupted = new AtomicBoolean();
            CompletableFuture<SocketChannel> accepted = new CompletableFuture<>();
            Thread waiting = new Thread(() -> {
                try {
                    accepted.complete(acceptor.accept(0));
                    stillInterrupted.set(Thread.currentThread().isInterrupted());
                } catch (IOException e) {
                    accepted.completeExceptionally(e);
                }
            });
            waiting.start();
            Thread.sleep(100);
            waiting.interrupt();
            Thread.sleep(200);
            assertFalse(accepted.isDone(), "accept goes on waiting after an interrupt");
            try (SocketChannel client = SocketChannel.open(listener.getLocalAddress());
                    SocketChannel server = accepted.get(10, TimeUnit.SECONDS)) {
                assertEquals(client.getLocalAddress(), server.getRemoteAddress());
            }
            waiting.join();
            assertTrue(stillInterrupted.get(), "the interrupt status is kept for the caller");
            assertTrue(listener.isOpen());
        }
    }

    @Test
    void closeEndsAWaitingAcceptAndReleasesThePort() throws Exception {
        ServerSocketChannel listener = ServerSocketChannel.open().bind(LOOPBACK, 4);
        InetSocketAddress address = (InetSocketAddress) listener.getLocalAddress();
        BackgroundAcceptor<SocketChannel> acceptor = new BackgroundAcceptor<>(listener, 4, "test", accepted -> accepted);
        CompletableFuture<SocketChannel> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return acceptor.accept(0);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Thread.sleep(100);
        acceptor.close();
        Throwable failure = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> accepted.get(5, TimeUnit.SECONDS)).getCause().getCause();
        assertTrue(failure instanceof SocketException, String.valueOf(failure));
        try (ServerSocketChannel again = ServerSocketChannel.open().bind(address)) {
            assertTrue(again.isOpen(), "the port is free as soon as close returned");
        }
    }
}
