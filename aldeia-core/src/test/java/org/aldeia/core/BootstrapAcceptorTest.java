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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.bootstrap.Routes;
import org.aldeia.core.memory.InMemoryTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The acceptor behind both kinds of Aldeia server socket, on its own. */
@Timeout(30)
class BootstrapAcceptorTest extends InMemoryEnvironmentTest {

    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    private static final BootstrapAcceptor.Limits LIMITS = new BootstrapAcceptor.Limits(2000, 64);

    /** Sockets of the test's environment; the first {@code failures} calls throw an Error. */
    private BootstrapAcceptor.Sockets sockets(int failures) {
        AtomicInteger calls = new AtomicInteger();
        return new BootstrapAcceptor.Sockets() {
            @Override
            public AldeiaSocket newSocket() {
                if (calls.incrementAndGet() <= failures) {
                    throw new NoClassDefFoundError("a provider's class");
                }
                return new AldeiaSocket(environment);
            }

            @Override
            public Routes routes() throws IOException {
                return environment.routes();
            }
        };
    }

    private BootstrapAcceptor plain(ServerSocketChannel listener, int backlog) throws IOException {
        return new BootstrapAcceptor(listener, backlog, "test", BootstrapAcceptor.Mode.PLAIN, LIMITS, sockets(0));
    }

    /** An Error while a client is prepared (a provider's missing class, say) must give its slot back. */
    @Test
    void aPreparationThatThrowsAnErrorGivesItsSlotBack() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(LOOPBACK, 4);
                BootstrapAcceptor acceptor = new BootstrapAcceptor(listener, 1, "test", BootstrapAcceptor.Mode.ALDEIA,
                        LIMITS, sockets(1))) {
            AldeiaSocket first = new AldeiaSocket(environment);
            assertThrows(IOException.class, () -> first.connect(listener.getLocalAddress(), 5000));
            assertAnAldeiaClientIsAccepted(listener, acceptor);
        }
    }

    /**
     * With room for one unproved client per address, each newcomer pushes out the one before: the
     * acceptor keeps exactly one, however many come (a newcomer that emptied its address's queue
     * by pushing out the last one was once tracked nowhere, and the count of unproved clients only
     * grew until the acceptor stopped), and an Aldeia client still connects.
     */
    @Test
    void oneUnprovedClientPerAddressMeansTheNewestOnly() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(LOOPBACK, 64);
                BootstrapAcceptor acceptor = new BootstrapAcceptor(listener, 4, "test", BootstrapAcceptor.Mode.ALDEIA,
                        new BootstrapAcceptor.Limits(5000, 1), sockets(0))) {
            List<SocketChannel> silent = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) {
                    SocketChannel s = SocketChannel.open(listener.getLocalAddress());
                    s.write(BootstrapProtocol.start());
                    silent.add(s);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                    while (acceptor.preparing() != 1 && System.nanoTime() - deadline < 0) {
                        Thread.sleep(5);
                    }
                    assertEquals(1, acceptor.preparing(), "unproved clients kept after " + (i + 1) + " came");
                }
            } finally {
                for (SocketChannel s : silent) {
                    s.close();
                }
            }
            assertAnAldeiaClientIsAccepted(listener, acceptor);
        }
    }

    /**
     * An endpoint that connects without the client's help (DECK over shared memory) connects
     * before the server answers, so the client, which connects once it has the answer, connects
     * after the server's endpoint, however slow that is.
     */
    @Test
    void aServerEndpointThatConnectsAloneConnectsBeforeTheClientHasTheAnswer() throws Exception {
        assertEquals(List.of("server connect begins", "server connect ends", "client connect"),
                connectsWhenTheServer(true));
    }

    /** Otherwise the answer goes first, and the client connects while the server's endpoint does. */
    @Test
    void aServerEndpointThatMayNeedTheClientAnswersFirst() throws Exception {
        List<String> connects = connectsWhenTheServer(false);
        assertTrue(connects.indexOf("client connect") < connects.indexOf("server connect ends"), connects.toString());
    }

    /** The connects of one Aldeia connection whose server-side connect takes 300 ms. */
    private List<String> connectsWhenTheServer(boolean connectsBeforeAnswer) throws Exception {
        InMemoryTransport transport = (InMemoryTransport) environment.transport();
        transport.answerAfterConnecting(connectsBeforeAnswer, 300);
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(LOOPBACK, 4);
                BootstrapAcceptor acceptor = new BootstrapAcceptor(listener, 4, "test", BootstrapAcceptor.Mode.ALDEIA,
                        LIMITS, sockets(0))) {
            assertAnAldeiaClientIsAccepted(listener, acceptor);
        }
        List<String> connects = transport.connects();
        assertEquals(3, connects.size(), connects.toString());
        return connects;
    }

    /** An Aldeia client of the test's environment connects, and accept gives its socket. */
    private void assertAnAldeiaClientIsAccepted(ServerSocketChannel listener, BootstrapAcceptor acceptor)
            throws IOException {
        try (AldeiaSocket client = new AldeiaSocket(environment)) {
            client.connect(listener.getLocalAddress(), 5000);
            try (AldeiaSocket accepted = ((BootstrapAcceptor.AldeiaClient) acceptor.accept(10_000)).socket()) {
                assertEquals(client.getLocalPort(), accepted.getPort());
            }
        }
    }

    /** As java.net's accept on a platform thread: an interrupt neither ends the wait nor closes anything. */
    @Test
    void anInterruptDoesNotEndAcceptAndIsKept() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(LOOPBACK, 4);
                BootstrapAcceptor acceptor = plain(listener, 4)) {
            AtomicBoolean stillInterrupted = new AtomicBoolean();
            CompletableFuture<BootstrapAcceptor.Prepared> accepted = new CompletableFuture<>();
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
                    BootstrapAcceptor.Prepared server = accepted.get(10, TimeUnit.SECONDS)) {
                assertEquals(client.getLocalAddress(),
                        ((BootstrapAcceptor.PlainClient) server).channel().getRemoteAddress());
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
        BootstrapAcceptor acceptor = plain(listener, 4);
        CompletableFuture<BootstrapAcceptor.Prepared> accepted = CompletableFuture.supplyAsync(() -> {
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

    /** A plain server whose backlog is taken leaves the next clients in the kernel's queue, as TCP does. */
    @Test
    void aPlainServerTakesNoMoreThanItsBacklogBeforeAccept() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(LOOPBACK, 50);
                BootstrapAcceptor acceptor = plain(listener, 2)) {
            SocketChannel[] clients = new SocketChannel[4];
            for (int i = 0; i < clients.length; i++) {
                clients[i] = SocketChannel.open(listener.getLocalAddress());
            }
            for (int i = 0; i < clients.length; i++) {
                acceptor.accept(5000).close();  // the last two come once the first two are taken
                clients[i].close();
            }
        }
    }
}
