package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ServerSocketFactory;
import javax.net.SocketFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The javax.net factories over the in-memory transport: every overload hands out an Aldeia
 * socket in the state its java.net twin would be in, and the sockets really carry bytes.
 */
@Timeout(60)
class AldeiaSocketFactoryTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private final SocketFactory sockets = AldeiaSocketFactory.getDefault();
    private final ServerSocketFactory serverSockets = AldeiaServerSocketFactory.getDefault();
    private AldeiaEnvironment environment;

    @BeforeEach
    void start() {
        environment = TestEnvironments.inMemory();
        AldeiaEnvironment.replaceGlobal(environment); // the public constructors the factories call use it
    }

    @AfterEach
    void stop() throws IOException {
        AldeiaEnvironment.replaceGlobal(null);
        environment.close();
    }

    @Test
    void getDefaultReturnsOneAldeiaFactoryEach() {
        assertInstanceOf(AldeiaSocketFactory.class, sockets);
        assertSame(sockets, AldeiaSocketFactory.getDefault());
        assertInstanceOf(AldeiaServerSocketFactory.class, serverSockets);
        assertSame(serverSockets, AldeiaServerSocketFactory.getDefault());
    }

    @Test
    void unconnectedSocketAndUnboundServerSocketConnectLater() throws Exception {
        try (ServerSocket server = serverSockets.createServerSocket(); Socket client = sockets.createSocket()) {
            assertInstanceOf(AldeiaServerSocket.class, server);
            assertFalse(server.isBound());
            assertInstanceOf(AldeiaSocket.class, client);
            assertFalse(client.isConnected() || client.isBound() || client.isClosed());

            server.bind(new InetSocketAddress(LOOPBACK, 0));
            assertTrue(server.isBound() && server.getLocalPort() > 0);
            CompletableFuture<? extends Socket> accepted = acceptAsync(server);
            client.connect(new InetSocketAddress(LOOPBACK, server.getLocalPort()), 5000);
            assertTrue(client.isConnected());
            try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                assertExchange(client, peer, 1);
            }
        }
    }

    @Test
    void everyConnectingOverloadReturnsAConnectedAldeiaSocket() throws Exception {
        try (ServerSocket server = serverSockets.createServerSocket(0, 10, LOOPBACK)) {
            int port = server.getLocalPort();
            String host = LOOPBACK.getHostAddress();
            Socket[] clients = new Socket[4];
            clients[0] = connectAndCheck(server, () -> sockets.createSocket(host, port));
            clients[1] = connectAndCheck(server, () -> sockets.createSocket(LOOPBACK, port));
            clients[2] = connectAndCheck(server, () -> sockets.createSocket(host, port, LOOPBACK, 0));
            clients[3] = connectAndCheck(server, () -> sockets.createSocket(LOOPBACK, port, LOOPBACK, 0));
            for (Socket client : clients) {
                assertEquals(LOOPBACK, client.getInetAddress());
                assertEquals(port, client.getPort());
                assertEquals(LOOPBACK, client.getLocalAddress());
                client.close();
            }
        }
    }

    @Test
    void theLocalAddressOverloadsBindTheGivenLocalPort() throws Exception {
        int localPort = freePort();
        try (ServerSocket server = serverSockets.createServerSocket(0, 10, LOOPBACK)) {
            Socket client = connectAndCheck(server,
                    () -> sockets.createSocket(LOOPBACK, server.getLocalPort(), LOOPBACK, localPort));
            assertEquals(localPort, client.getLocalPort());
            client.close();
        }
    }

    @Test
    void everyBindingOverloadReturnsABoundAldeiaServerSocket() throws Exception {
        try (ServerSocket any = serverSockets.createServerSocket(0);
                ServerSocket withBacklog = serverSockets.createServerSocket(0, 5);
                ServerSocket onLoopback = serverSockets.createServerSocket(0, 5, LOOPBACK)) {
            for (ServerSocket server : new ServerSocket[] {any, withBacklog, onLoopback}) {
                assertInstanceOf(AldeiaServerSocket.class, server);
                assertTrue(server.isBound() && !server.isClosed());
                assertTrue(server.getLocalPort() > 0);
            }
            assertTrue(any.getInetAddress().isAnyLocalAddress());
            assertTrue(withBacklog.getInetAddress().isAnyLocalAddress());
            assertEquals(LOOPBACK, onLoopback.getInetAddress());
            // Bound on the wildcard address, it still takes an Aldeia connection on loopback.
            connectAndCheck(any, () -> sockets.createSocket(LOOPBACK, any.getLocalPort())).close();
        }
    }

    @Test
    void aRefusedConnectionIsAConnectException() throws IOException {
        int port = freePort();
        assertThrows(ConnectException.class, () -> sockets.createSocket(LOOPBACK, port));
        assertThrows(ConnectException.class, () -> sockets.createSocket(LOOPBACK.getHostAddress(), port));
    }

    @Test
    void aTakenPortIsReportedByTheServerFactory() throws IOException {
        try (ServerSocket first = serverSockets.createServerSocket(0, 5, LOOPBACK)) {
            assertThrows(IOException.class, () -> serverSockets.createServerSocket(first.getLocalPort(), 5, LOOPBACK));
        }
    }

    private interface Connect {
        Socket call() throws IOException;
    }

    /** Connects with {@code connect}, checks both ends are Aldeia sockets and carry bytes both ways. */
    private static Socket connectAndCheck(ServerSocket server, Connect connect) throws Exception {
        CompletableFuture<? extends Socket> accepted = acceptAsync(server);
        Socket client = connect.call();
        assertInstanceOf(AldeiaSocket.class, client);
        assertTrue(client.isConnected() && client.isBound());
        try (Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
            assertInstanceOf(AldeiaSocket.class, peer);
            assertExchange(client, peer, client.getLocalPort());
        }
        return client;
    }

    private static void assertExchange(Socket client, Socket peer, int value) throws IOException {
        new DataOutputStream(client.getOutputStream()).writeInt(value);
        assertEquals(value, new DataInputStream(peer.getInputStream()).readInt());
        new DataOutputStream(peer.getOutputStream()).writeInt(~value);
        assertEquals(~value, new DataInputStream(client.getInputStream()).readInt());
    }

    /** accept() on its own thread, through the shared helper (which needs the Aldeia type). */
    private static CompletableFuture<? extends Socket> acceptAsync(ServerSocket server) {
        return TestEnvironments.acceptAsync(assertInstanceOf(AldeiaServerSocket.class, server));
    }

    private static int freePort() throws IOException {
        try (ServerSocketChannel probe = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0))) {
            return ((InetSocketAddress) probe.getLocalAddress()).getPort();
        }
    }
}
