package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.rmi.server.RMIClientSocketFactory;
import java.rmi.server.RMISocketFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The RMI factories over the in-memory transport: the client factory survives the trip inside
 * a stub (serialization) equal to the original, and both hand out connected Aldeia sockets.
 */
@Timeout(60)
class AldeiaRMISocketFactoryTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private AldeiaEnvironment environment;

    @BeforeEach
    void start() {
        environment = TestEnvironments.inMemory();
        AldeiaEnvironment.replaceGlobal(environment);
    }

    @AfterEach
    void stop() throws IOException {
        AldeiaEnvironment.replaceGlobal(null);
        environment.close();
    }

    @Test
    void theClientFactoryComesBackFromSerializationEqualAndWorking() throws Exception {
        AldeiaRMIClientSocketFactory original = new AldeiaRMIClientSocketFactory();
        RMIClientSocketFactory copy = roundTrip(original);
        assertInstanceOf(AldeiaRMIClientSocketFactory.class, copy);
        assertNotSame(original, copy);
        assertEquals(original, copy);
        assertEquals(original.hashCode(), copy.hashCode());

        try (ServerSocket server = new AldeiaRMIServerSocketFactory().createServerSocket(0)) {
            CompletableFuture<AldeiaSocket> accepted =
                    TestEnvironments.acceptAsync(assertInstanceOf(AldeiaServerSocket.class, server));
            try (Socket client = copy.createSocket(LOOPBACK.getHostAddress(), server.getLocalPort());
                    Socket peer = accepted.get(10, TimeUnit.SECONDS)) {
                assertInstanceOf(AldeiaSocket.class, client);
                assertTrue(client.isConnected());
                assertEquals(server.getLocalPort(), client.getPort());
                new DataOutputStream(client.getOutputStream()).writeUTF("rmi call");
                assertEquals("rmi call", new DataInputStream(peer.getInputStream()).readUTF());
                new DataOutputStream(peer.getOutputStream()).writeUTF("rmi return");
                assertEquals("rmi return", new DataInputStream(client.getInputStream()).readUTF());
            }
        }
    }

    @Test
    void allClientFactoriesAreEqualAndDifferFromOtherFactories() {
        AldeiaRMIClientSocketFactory a = new AldeiaRMIClientSocketFactory();
        AldeiaRMIClientSocketFactory b = new AldeiaRMIClientSocketFactory();
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, null);
        assertNotEquals(a, RMISocketFactory.getDefaultSocketFactory());
        assertNotEquals(a, new AldeiaRMIServerSocketFactory());
    }

    @Test
    void allServerFactoriesAreEqualAndDifferFromOtherFactories() {
        AldeiaRMIServerSocketFactory a = new AldeiaRMIServerSocketFactory();
        AldeiaRMIServerSocketFactory b = new AldeiaRMIServerSocketFactory();
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, null);
        assertNotEquals(a, RMISocketFactory.getDefaultSocketFactory());
        assertNotEquals(a, new AldeiaRMIClientSocketFactory());
    }

    @Test
    void theServerFactoryListensOnAnEphemeralPortForPortZero() throws IOException {
        try (ServerSocket server = new AldeiaRMIServerSocketFactory().createServerSocket(0)) {
            assertInstanceOf(AldeiaServerSocket.class, server);
            assertTrue(server.isBound());
            assertTrue(server.getLocalPort() > 0);
            assertTrue(server.getInetAddress().isAnyLocalAddress(), "RMI listens on every address");
        }
    }

    @Test
    void aRefusedRmiConnectionIsAConnectException() throws IOException {
        int port;
        try (ServerSocketChannel probe = ServerSocketChannel.open().bind(new InetSocketAddress(LOOPBACK, 0))) {
            port = ((InetSocketAddress) probe.getLocalAddress()).getPort();
        }
        // RMI tells "server not there" (ConnectException) from other failures by this type.
        assertThrows(ConnectException.class,
                () -> new AldeiaRMIClientSocketFactory().createSocket(LOOPBACK.getHostAddress(), port));
    }

    private static RMIClientSocketFactory roundTrip(RMIClientSocketFactory factory) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(factory);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            return (RMIClientSocketFactory) in.readObject();
        }
    }
}
