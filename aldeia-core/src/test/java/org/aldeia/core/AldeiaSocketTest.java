package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.aldeia.core.TestEnvironments.Pair;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class AldeiaSocketTest extends InMemoryEnvironmentTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();


    @Test
    void connectAndAcceptReportTheBootstrapAddresses() throws Exception {
        try (AldeiaServerSocket listener = TestEnvironments.listen(environment)) {
            int port = listener.getLocalPort();
            assertTrue(port > 0);
            assertTrue(listener.isBound());
            assertEquals(LOOPBACK, listener.getInetAddress());
            assertEquals(new InetSocketAddress(LOOPBACK, port), listener.getLocalSocketAddress());
            assertEquals("AldeiaServerSocket[addr=/" + LOOPBACK.getHostAddress() + ",localport=" + port + "]", listener.toString());

            try (Pair pair = TestEnvironments.connect(environment, listener)) {
                AldeiaSocket client = pair.client();
                AldeiaSocket server = pair.server();
                assertTrue(client.isConnected() && client.isBound() && !client.isClosed());
                assertEquals(LOOPBACK, client.getInetAddress());
                assertEquals(port, client.getPort());
                assertEquals(port, server.getLocalPort());
                assertEquals(client.getLocalPort(), server.getPort());
                assertEquals(new InetSocketAddress(LOOPBACK, port), client.getRemoteSocketAddress());
                assertEquals(LOOPBACK, client.getLocalAddress());
                assertNull(client.getChannel());
                assertEquals("AldeiaSocket[addr=" + LOOPBACK + ",port=" + port + ",localport=" + client.getLocalPort()
                        + ",id=" + client.id() + "]", client.toString());

                new DataOutputStream(client.getOutputStream()).writeUTF("olá, aldeia");
                assertEquals("olá, aldeia", new DataInputStream(server.getInputStream()).readUTF());
                new DataOutputStream(server.getOutputStream()).writeLong(1234567890123L);
                assertEquals(1234567890123L, new DataInputStream(client.getInputStream()).readLong());
            }
        }
    }

    @Test
    void unconnectedSocketAndUnboundServerSocketReportNothing() throws IOException {
        AldeiaSocket socket = new AldeiaSocket(environment);
        assertFalse(socket.isConnected() || socket.isBound() || socket.isClosed());
        assertNull(socket.getInetAddress());
        assertEquals(0, socket.getPort());
        assertEquals(-1, socket.getLocalPort());
        assertTrue(socket.getLocalAddress().isAnyLocalAddress());
        assertThrows(SocketException.class, socket::getInputStream);
        assertEquals("AldeiaSocket[unconnected,id=" + socket.id() + "]", socket.toString());

        AldeiaServerSocket server = new AldeiaServerSocket(environment);
        assertFalse(server.isBound());
        assertEquals(-1, server.getLocalPort());
        assertNull(server.getInetAddress());
        assertEquals("AldeiaServerSocket[unbound]", server.toString());
        assertThrows(SocketException.class, server::accept);
        server.close();
        assertThrows(SocketException.class, () -> server.bind(null));
    }

    @Test
    void socketIdsAreSerialAcrossConnectingAndAcceptedSockets() throws Exception {
        try (AldeiaServerSocket listener = TestEnvironments.listen(environment)) {
            for (int i = 0; i < 3; i++) {
                try (Pair pair = TestEnvironments.connect(environment, listener)) {
                    assertEquals(2 * i, pair.client().id(), "the connecting socket is created first");
                    assertEquals(2 * i + 1, pair.server().id());
                }
            }
        }
    }

    @Test
    void severalSocketsAtOnce() throws Exception {
        try (AldeiaServerSocket listener = TestEnvironments.listen(environment)) {
            List<Pair> pairs = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                pairs.add(TestEnvironments.connect(environment, listener));
            }
            List<CompletableFuture<Void>> writers = new ArrayList<>();
            for (int i = 0; i < pairs.size(); i++) {
                int tag = i;
                AldeiaSocket client = pairs.get(i).client();
                writers.add(CompletableFuture.runAsync(() -> {
                    try {
                        DataOutputStream out = new DataOutputStream(client.getOutputStream());
                        for (int k = 0; k < 20_000; k++) {
                            out.writeInt(tag * 1_000_000 + k);
                        }
                        out.flush();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }));
            }
            for (int i = 0; i < pairs.size(); i++) {
                DataInputStream in = new DataInputStream(pairs.get(i).server().getInputStream());
                for (int k = 0; k < 20_000; k++) {
                    assertEquals(i * 1_000_000 + k, in.readInt());
                }
            }
            CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            for (Pair pair : pairs) {
                pair.close();
            }
        }
    }

    @Test
    void publicConstructorsConnectAtOnceThroughTheGlobalEnvironment() throws Exception {
        AldeiaEnvironment.replaceGlobal(environment);
        try (AldeiaServerSocket listener = new AldeiaServerSocket(0, 10, LOOPBACK)) {
            int port = listener.getLocalPort();
            List<AldeiaSocket> accepted = new ArrayList<>();
            CompletableFuture<Void> acceptor = CompletableFuture.runAsync(() -> {
                try {
                    for (int i = 0; i < 4; i++) {
                        accepted.add(listener.accept());
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            List<AldeiaSocket> clients = List.of(new AldeiaSocket(LOOPBACK.getHostAddress(), port),
                    new AldeiaSocket(LOOPBACK, port),
                    new AldeiaSocket(LOOPBACK.getHostAddress(), port, LOOPBACK, 0),
                    new AldeiaSocket(LOOPBACK, port, LOOPBACK, 0));
            acceptor.get(30, TimeUnit.SECONDS);
            for (AldeiaSocket client : clients) {
                assertTrue(client.isConnected());
                assertEquals(port, client.getPort());
                client.close();
            }
            for (AldeiaSocket socket : accepted) {
                assertEquals(-1, socket.getInputStream().read(), "each accepted socket sees its client's close");
                socket.close();
            }
            AldeiaServerSocket unbound = new AldeiaServerSocket();
            unbound.bind(new InetSocketAddress(LOOPBACK, 0));
            assertTrue(unbound.getLocalPort() > 0);
            unbound.close();
        } finally {
            AldeiaEnvironment.replaceGlobal(null);
        }
    }

    @Test
    void refusedConnectionKeepsItsJavaNetTypeAndClosesTheSocket() throws IOException {
        int freePort;
        try (ServerSocketChannel probe = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0))) {
            freePort = ((InetSocketAddress) probe.getLocalAddress()).getPort();
        }
        AldeiaSocket socket = new AldeiaSocket(environment);
        assertThrows(ConnectException.class, () -> socket.connect(new InetSocketAddress(LOOPBACK, freePort), 2000));
        assertTrue(socket.isClosed());
        assertFalse(socket.isConnected());
    }

    /** A plain TCP server that answers every connection with {@code reply} and keeps it open. */
    private static CompletableFuture<SocketChannel> foreignServer(ServerSocketChannel server, byte[] reply) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                SocketChannel peer = server.accept();
                peer.write(ByteBuffer.wrap(reply));
                return peer;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private IOException connectToForeignServer(byte[] reply, int bootstrapTimeout) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0))) {
            CompletableFuture<SocketChannel> peer = foreignServer(server, reply);
            AldeiaSocket socket = new AldeiaSocket(environment);
            socket.setBootstrapTimeout(bootstrapTimeout);
            IOException e = assertThrows(IOException.class, () -> socket.connect(server.getLocalAddress()));
            assertTrue(socket.isClosed());
            peer.get(10, TimeUnit.SECONDS).close();
            return e;
        }
    }

    @Test
    void peerThatIsNotAldeiaIsRejected() throws Exception {
        IOException e = connectToForeignServer("HTTP/1.0 400 Bad Request\r\n\r\n".getBytes(), 5000);
        assertTrue(e.getMessage().contains("is not an Aldeia endpoint") && e.getMessage().contains("127.0.0.1:"),
                e.getMessage());
    }

    @Test
    void peerWithAnotherProtocolVersionIsRejected() throws Exception {
        byte[] hello = ByteBuffer.allocate(8).putInt(BootstrapProtocol.MAGIC).putInt(1).array();
        IOException e = connectToForeignServer(hello, 5000);
        assertTrue(e.getMessage().contains("protocol version 1") && e.getMessage().contains("unsupported"),
                e.getMessage());
    }

    @Test
    void peerWithAbsurdReplyLengthIsRejected() throws Exception {
        byte[] hello = ByteBuffer.allocate(12).putInt(BootstrapProtocol.MAGIC).putInt(BootstrapProtocol.VERSION)
                .putInt(-5).array();
        IOException e = connectToForeignServer(hello, 5000);
        assertTrue(e.getMessage().contains("invalid bootstrap reply length -5"), e.getMessage());
    }

    @Test
    void silentPeerTimesOutInsteadOfHanging() throws Exception {
        IOException e = connectToForeignServer(new byte[0], 300);
        assertInstanceOf(SocketTimeoutException.class, e);
        assertTrue(e.getMessage().contains("did not send") && e.getMessage().contains("300 ms"), e.getMessage());
    }

    @Test
    void aForeignClientIsDroppedAndAcceptGoesOnWithTheNext() throws Exception {
        try (AldeiaServerSocket listener = TestEnvironments.listen(environment)) {
            CompletableFuture<AldeiaSocket> accepted = TestEnvironments.acceptAsync(listener);
            try (SocketChannel foreign = SocketChannel.open(listener.getLocalSocketAddress())) {
                foreign.write(ByteBuffer.wrap("GET / HTTP/1.0\r\n\r\n".getBytes()));
                assertEquals(-1, foreign.read(ByteBuffer.allocate(64)), "a stranger hears nothing before it is closed");
            }
            assertFalse(accepted.isDone(), "a foreign client neither completes nor fails accept");
            AldeiaSocket client = new AldeiaSocket(environment);
            client.connect(listener.getLocalSocketAddress(), 5000);
            try (AldeiaSocket server = accepted.get(10, TimeUnit.SECONDS)) {
                assertEquals(client.getLocalPort(), server.getPort());
            } finally {
                client.close();
            }
        }
    }

    /** A client that starts its bootstrap and stalls must not hold accept for the others (TCP's never does). */
    @Test
    void aStalledBootstrapDoesNotHoldAcceptForTheNextClient() throws Exception {
        try (AldeiaServerSocket listener = TestEnvironments.listen(environment);
                SocketChannel stalled = SocketChannel.open(listener.getLocalSocketAddress())) {
            stalled.write(BootstrapProtocol.start());
            Thread.sleep(100); // the server is now waiting for the rest of the stalled client's hello
            try (Pair pair = TestEnvironments.connect(environment, listener)) {
                assertTrue(pair.server().isConnected());
            }
        }
    }

    @Test
    void closingTheServerSocketWakesABlockedAccept() throws Exception {
        AldeiaServerSocket listener = TestEnvironments.listen(environment);
        CompletableFuture<AldeiaSocket> accepted = TestEnvironments.acceptAsync(listener);
        Thread.sleep(200);
        assertFalse(accepted.isDone());
        listener.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> accepted.get(5, TimeUnit.SECONDS));
        assertInstanceOf(SocketException.class, e.getCause());
        assertTrue(listener.isClosed());
        listener.close(); // idempotent
        assertThrows(SocketException.class, listener::accept);
    }

    @Test
    void acceptTimesOutAfterSoTimeout() throws Exception {
        try (AldeiaServerSocket listener = TestEnvironments.listen(environment)) {
            listener.setSoTimeout(200);
            assertEquals(200, listener.getSoTimeout());
            long start = System.nanoTime();
            assertThrows(SocketTimeoutException.class, listener::accept);
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(150));
            listener.setSoTimeout(0);
            try (Pair pair = TestEnvironments.connect(environment, listener)) {
                assertTrue(pair.client().isConnected(), "the server socket still works after a timeout");
            }
        }
    }

    @Test
    void closeAbortsAConnectWaitingForThePeer() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0))) {
            CompletableFuture<SocketChannel> peer = foreignServer(server, new byte[0]);
            AldeiaSocket socket = new AldeiaSocket(environment);
            CompletableFuture<Void> connect = CompletableFuture.runAsync(() -> {
                try {
                    socket.connect(server.getLocalAddress());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            SocketChannel silent = peer.get(10, TimeUnit.SECONDS);
            Thread.sleep(200);
            socket.close();
            ExecutionException e = assertThrows(ExecutionException.class, () -> connect.get(5, TimeUnit.SECONDS));
            assertInstanceOf(SocketException.class, e.getCause().getCause());
            silent.close();
        }
    }

    @Test
    void optionsAreValidatedAndStored() throws IOException {
        AldeiaSocket socket = new AldeiaSocket(environment);
        socket.setTcpNoDelay(true);
        socket.setSoLinger(true, 5);
        socket.setSendBufferSize(1 << 20);
        socket.setKeepAlive(true);
        socket.setTrafficClass(0x10);
        socket.setSoTimeout(1234);
        socket.setOOBInline(true);
        assertTrue(socket.getTcpNoDelay() && socket.getKeepAlive() && socket.getOOBInline());
        assertEquals(5, socket.getSoLinger());
        assertEquals(1 << 20, socket.getSendBufferSize());
        assertEquals(0x10, socket.getTrafficClass());
        assertEquals(1234, socket.getSoTimeout());
        socket.setSoLinger(false, 0);
        assertEquals(-1, socket.getSoLinger());
        assertThrows(IllegalArgumentException.class, () -> socket.setSoTimeout(-1));
        assertThrows(IllegalArgumentException.class, () -> socket.setReceiveBufferSize(0));
        assertThrows(IllegalArgumentException.class, () -> socket.setTrafficClass(256));
        assertThrows(UnsupportedOperationException.class,
                () -> socket.setOption(StandardSocketOptions.SO_BROADCAST, true));
        assertTrue(socket.supportedOptions().contains(StandardSocketOptions.TCP_NODELAY));
        assertThrows(SocketException.class, () -> socket.sendUrgentData(1));
        socket.close();
        assertThrows(SocketException.class, () -> socket.setTcpNoDelay(false));

        AldeiaServerSocket server = new AldeiaServerSocket(environment);
        assertTrue(server.getReuseAddress());
        server.setReuseAddress(false);
        server.setReceiveBufferSize(128 * 1024);
        server.bind(new InetSocketAddress(LOOPBACK, 0));
        assertFalse(server.getReuseAddress());
        server.close();
    }

    @Test
    void noOperatingSystemSocketStandsBehindAnAldeiaSocket() throws IOException {
        Path fds = Path.of("/proc/self/fd");
        assumeTrue(Files.isDirectory(fds), "needs /proc");
        exerciseUnconnectedSockets(2); // loads every class first, so later counts are stable
        long before = count(fds);
        exerciseUnconnectedSockets(100);
        long after = count(fds);
        assertTrue(after - before < 10, "file descriptors went from " + before + " to " + after);
    }

    private List<Object> exerciseUnconnectedSockets(int n) throws IOException {
        List<Object> kept = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            AldeiaSocket socket = new AldeiaSocket(environment);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(10);
            socket.setReceiveBufferSize(4096);
            socket.getKeepAlive();
            socket.toString();
            AldeiaServerSocket server = new AldeiaServerSocket(environment);
            server.setSoTimeout(10);
            server.setReuseAddress(true);
            kept.add(socket);
            kept.add(server);
        }
        return kept;
    }

    private static long count(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.count();
        }
    }
}
