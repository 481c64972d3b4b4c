package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketImpl;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.config.ConfigurationKey;
import org.aldeia.core.config.SocketRules;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The socket implementations {@link Aldeia#install()} registers, driven through java.net's own
 * Socket and ServerSocket (made with these impls directly, since the JVM-wide factories can be
 * set only once per JVM; the contract suite of aldeia-microvapi runs them installed) over the
 * in-memory transport: rules decide which connections are Aldeia's, a server under a bind rule
 * tells Aldeia clients from plain TCP ones without losing a byte of either.
 */
@Timeout(60)
class InstalledSocketsTest extends InMemoryEnvironmentTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    /** Short (bootstrap_timeout), so that the silent-client case is quick; real servers wait 3 s. */
    private static final int DETECT_MILLIS = 300;

    @BeforeEach
    void shortBootstrapSteps() throws IOException {
        environment.close();
        environment = TestEnvironments.inMemory(java.util.Map.of(ConfigurationKey.BOOTSTRAP_TIMEOUT, DETECT_MILLIS));
    }

    @TempDir
    Path directory;


    /** java.net.Socket over a given impl, as {@code new Socket()} is once Aldeia is installed. */
    private static final class ImplSocket extends Socket {
        ImplSocket(SocketImpl impl) throws SocketException {
            super(impl);
        }
    }

    /** java.net.ServerSocket over a given impl, accepting into a new client impl. */
    private final class ImplServerSocket extends ServerSocket {
        private final SocketRules rules;
        private InstalledSocketImpl lastAccepted;

        ImplServerSocket(SocketRules rules) throws IOException {
            super(new InstalledServerSocketImpl(() -> environment, rules));
            this.rules = rules;
            bind(new InetSocketAddress(LOOPBACK, 0));
        }

        @Override
        public Socket accept() throws IOException {
            InstalledSocketImpl impl = new InstalledSocketImpl(() -> environment, rules);
            Socket socket = new ImplSocket(impl);
            implAccept(socket);
            lastAccepted = impl;
            return socket;
        }
    }

    private SocketRules rules(String... lines) throws IOException {
        Path file = directory.resolve("aldeia.conf");
        Files.write(file, java.util.List.of(lines));
        return AldeiaConfiguration.parse(file).rules();
    }

    private InstalledSocketImpl clientImpl(SocketRules rules) {
        return new InstalledSocketImpl(() -> environment, rules);
    }

    private static CompletableFuture<Socket> acceptAsync(ServerSocket server) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return server.accept();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    @Test
    void aClientUnderAConnectRuleReachesAServerUnderABindRuleThroughAldeia() throws Exception {
        SocketRules rules = rules("bind * *", "connect 127.0.0.1 *");
        try (ImplServerSocket server = new ImplServerSocket(rules)) {
            CompletableFuture<Socket> accepted = acceptAsync(server);
            InstalledSocketImpl impl = clientImpl(rules);
            try (Socket client = new ImplSocket(impl)) {
                client.setTcpNoDelay(true);
                client.connect(server.getLocalSocketAddress(), 5000);
                try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                    assertTrue(impl.isAldeia(), "the client went through Aldeia");
                    assertTrue(server.lastAccepted.isAldeia(), "the server accepted an Aldeia socket");
                    assertTrue(client.getTcpNoDelay(), "an option set before connect survives the switch");
                    assertEquals(server.getLocalPort(), client.getPort());
                    assertEquals(client.getLocalPort(), peer.getPort());
                    exchange(client, peer);
                }
            }
        }
    }

    /** An option only TCP has, accepted by the plain channel before connect, must not fail an Aldeia connect. */
    @Test
    void aTcpOnlyOptionSetBeforeConnectIsLeftOutOfAnAldeiaConnection() throws Exception {
        SocketRules rules = rules("connect 127.0.0.1 *");
        try (ImplServerSocket server = new ImplServerSocket(rules)) {
            CompletableFuture<Socket> accepted = acceptAsync(server);
            InstalledSocketImpl impl = clientImpl(rules);
            try (Socket client = new ImplSocket(impl)) {
                client.setOption(jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE, 30);
                client.connect(server.getLocalSocketAddress(), 5000);
                try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                    assertTrue(impl.isAldeia());
                    exchange(client, peer);
                }
            }
        }
    }

    /** java.net reports a reset connection with SocketException; an NIO channel with a bare IOException. */
    @Test
    void aResetPlainConnectionFailsWithSocketException() throws Exception {
        SocketRules rules = rules("connect 10.0.0.0/8 *");
        try (ServerSocketChannel plainServer = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0))) {
            try (Socket client = new ImplSocket(clientImpl(rules))) {
                client.connect(plainServer.getLocalAddress(), 5000);
                try (SocketChannel peer = plainServer.accept()) {
                    peer.setOption(java.net.StandardSocketOptions.SO_LINGER, 0); // close sends a reset
                }
                SocketException reset = assertThrows(SocketException.class, () -> client.getInputStream().read());
                assertTrue(reset.getMessage().contains("reset"), reset.getMessage());
            }
        }
    }

    /** As the JDK's: a server socket dropped without close stops listening once unreachable. */
    @Test
    void aServerSocketDroppedWithoutCloseFreesItsPortOnceUnreachable() throws Exception {
        int port = dropBoundServerSocket();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            System.gc();
            try (ServerSocketChannel again = ServerSocketChannel.open()) {
                again.bind(new InetSocketAddress(LOOPBACK, port));
                return;
            } catch (java.net.BindException stillListening) {
                assertTrue(System.nanoTime() < deadline, "the dropped server socket still listens on " + port);
                Thread.sleep(50);
            }
        }
    }

    private int dropBoundServerSocket() throws IOException {
        return new ImplServerSocket(SocketRules.defaults()).getLocalPort();
    }

    @Test
    void aClientWithoutAConnectRuleStaysPlainTcp() throws Exception {
        SocketRules rules = rules("bind * *", "connect 10.0.0.0/8 *");
        try (ServerSocketChannel plainServer = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0))) {
            InstalledSocketImpl impl = clientImpl(rules);
            try (Socket client = new ImplSocket(impl)) {
                client.connect(plainServer.getLocalAddress(), 5000);
                try (SocketChannel peer = plainServer.accept()) {
                    assertFalse(impl.isAldeia());
                    exchange(client, peer.socket());
                }
            }
        }
    }

    @Test
    void aServerUnderABindRuleServesAPlainClientEveryByteInOrder() throws Exception {
        try (ImplServerSocket server = new ImplServerSocket(SocketRules.defaults())) {
            CompletableFuture<Socket> accepted = acceptAsync(server);
            try (SocketChannel plain = SocketChannel.open(server.getLocalSocketAddress())) {
                byte[] request = "GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
                plain.write(ByteBuffer.wrap(request));
                try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                    assertFalse(server.lastAccepted.isAldeia());
                    byte[] received = new byte[request.length];
                    new DataInputStream(peer.getInputStream()).readFully(received);
                    assertArrayEquals(request, received);
                    peer.getOutputStream().write(7);
                    assertEquals(7, plain.socket().getInputStream().read());
                }
            }
        }
    }

    /** A plain client whose first bytes begin like the Aldeia magic loses none of them. */
    @Test
    void aPlainClientThatStartsLikeTheMagicIsPlainOnceABytediffers() throws Exception {
        try (ImplServerSocket server = new ImplServerSocket(SocketRules.defaults())) {
            CompletableFuture<Socket> accepted = acceptAsync(server);
            try (SocketChannel plain = SocketChannel.open(server.getLocalSocketAddress())) {
                plain.write(ByteBuffer.wrap("AL".getBytes(StandardCharsets.US_ASCII)));
                Thread.sleep(50); // the server has read "AL" and waits for more
                plain.write(ByteBuffer.wrap("EXANDER".getBytes(StandardCharsets.US_ASCII)));
                try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                    assertFalse(server.lastAccepted.isAldeia());
                    byte[] received = new byte[9];
                    new DataInputStream(peer.getInputStream()).readFully(received);
                    assertEquals("ALEXANDER", new String(received, StandardCharsets.US_ASCII));
                }
            }
        }
    }

    /** A protocol where the server speaks first: its client is silent and becomes plain after the wait. */
    @Test
    void aSilentClientIsPlainAfterTheWaitAndHearsTheServerFirst() throws Exception {
        try (ImplServerSocket server = new ImplServerSocket(SocketRules.defaults())) {
            CompletableFuture<Socket> accepted = acceptAsync(server);
            try (SocketChannel plain = SocketChannel.open(server.getLocalSocketAddress())) {
                long start = System.nanoTime();
                try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                    assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) >= DETECT_MILLIS - 50);
                    assertFalse(server.lastAccepted.isAldeia());
                    peer.getOutputStream().write("220 ready\r\n".getBytes(StandardCharsets.US_ASCII));
                    byte[] banner = new byte[11];
                    new DataInputStream(plain.socket().getInputStream()).readFully(banner);
                    assertEquals("220 ready\r\n", new String(banner, StandardCharsets.US_ASCII));
                    plain.write(ByteBuffer.wrap(new byte[] {42}));
                    assertEquals(42, peer.getInputStream().read());
                }
            }
        }
    }

    /** java.net's accept never waits on one client: neither does a server that looks at its clients. */
    @Test
    void aSilentClientDoesNotHoldAcceptForTheNext() throws Exception {
        try (ImplServerSocket server = new ImplServerSocket(SocketRules.defaults());
                SocketChannel silent = SocketChannel.open(server.getLocalSocketAddress());
                SocketChannel talking = SocketChannel.open(server.getLocalSocketAddress())) {
            talking.write(ByteBuffer.wrap(new byte[] {9}));
            long start = System.nanoTime();
            try (Socket first = server.accept()) {
                assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < DETECT_MILLIS,
                        "the talking client was accepted while the silent one was still being waited for");
                assertEquals(9, first.getInputStream().read());
            }
            try (Socket second = server.accept()) {
                assertEquals(silent.getLocalAddress(), second.getRemoteSocketAddress());
            }
        }
    }

    /** As with TCP, a client's connect completes once the server has taken it, before the application accepts. */
    @Test
    void anAldeiaClientConnectsBeforeTheServerCallsAccept() throws Exception {
        SocketRules rules = rules("connect 127.0.0.1 *");
        try (ImplServerSocket server = new ImplServerSocket(rules);
                Socket client = new ImplSocket(clientImpl(rules))) {
            client.connect(server.getLocalSocketAddress(), 5000);
            client.getOutputStream().write(5);
            try (Socket peer = server.accept()) {
                assertTrue(server.lastAccepted.isAldeia());
                assertEquals(5, peer.getInputStream().read());
            }
        }
    }

    @Test
    void aClientThatClosesAtOnceIsAcceptedAsPlainAtItsEnd() throws Exception {
        try (ImplServerSocket server = new ImplServerSocket(SocketRules.defaults())) {
            CompletableFuture<Socket> accepted = acceptAsync(server);
            SocketChannel.open(server.getLocalSocketAddress()).close();
            try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                assertEquals(-1, peer.getInputStream().read());
            }
        }
    }

    /**
     * A client that starts an Aldeia bootstrap and dies does not make accept fail, nor is it
     * taken for a plain client: the server closes it and serves the next one. It sends our magic
     * and version only (a real client's start carries 4 more bytes): the server, waiting for
     * those, once handed it to accept() as a plain client that had sent little, whenever its end
     * came before the next client's bytes.
     */
    @Test
    void aFailedAldeiaBootstrapIsSkippedAndTheNextClientAccepted() throws Exception {
        try (ImplServerSocket server = new ImplServerSocket(SocketRules.defaults())) {
            CompletableFuture<Socket> accepted = acceptAsync(server);
            try (Socket broken = new Socket()) {
                broken.connect(server.getLocalSocketAddress());
                broken.getOutputStream().write(BootstrapProtocol.start().array());
                broken.shutdownOutput();
                broken.setSoTimeout(10_000);
                assertEquals(-1, broken.getInputStream().read(), "the server closes the broken client");
            }
            assertFalse(accepted.isDone(), "the broken client reached accept()");
            try (SocketChannel plain = SocketChannel.open(server.getLocalSocketAddress())) {
                plain.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
                try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                    byte[] received = new byte[3];
                    new DataInputStream(peer.getInputStream()).readFully(received);
                    assertArrayEquals(new byte[] {1, 2, 3}, received);
                }
            }
        }
    }

    @Test
    void aServerThatNoBindRuleMatchesDoesNotLookAtItsClients() throws Exception {
        SocketRules elsewhere = rules("bind 10.0.0.1 *", "connect 127.0.0.1 *");
        try (ImplServerSocket server = new ImplServerSocket(elsewhere)) {
            CompletableFuture<Socket> accepted = acceptAsync(server);
            try (SocketChannel silent = SocketChannel.open(server.getLocalSocketAddress())) {
                long start = System.nanoTime();
                try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                    assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < DETECT_MILLIS,
                            "accepted without waiting for the client's first bytes");
                    assertFalse(server.lastAccepted.isAldeia());
                }
            }
        }
    }

    @Test
    void acceptHonoursSoTimeoutAndCloseWhileWaiting() throws Exception {
        try (ImplServerSocket server = new ImplServerSocket(SocketRules.defaults())) {
            server.setSoTimeout(100);
            assertThrows(SocketTimeoutException.class, server::accept);
            server.setSoTimeout(0);
            CompletableFuture<Socket> accepted = acceptAsync(server);
            Thread.sleep(100);
            server.close();
            Throwable failure = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> accepted.get(10, TimeUnit.SECONDS)).getCause().getCause();
            assertTrue(failure instanceof SocketException, String.valueOf(failure));
        }
    }

    /** Bytes both ways, more than one block of the in-memory transport. */
    private static void exchange(Socket a, Socket b) throws IOException {
        byte[] data = new byte[5000];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 31);
        }
        OutputStream out = a.getOutputStream();
        out.write(data);
        out.flush();
        byte[] received = new byte[data.length];
        new DataInputStream(b.getInputStream()).readFully(received);
        assertArrayEquals(data, received);
        b.getOutputStream().write(received, 0, 10);
        b.getOutputStream().flush();
        InputStream in = a.getInputStream();
        byte[] back = new byte[10];
        new DataInputStream(in).readFully(back);
        assertArrayEquals(java.util.Arrays.copyOf(data, 10), back);
    }
}
