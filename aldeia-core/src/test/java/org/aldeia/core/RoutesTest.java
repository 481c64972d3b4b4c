package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.aldeia.core.bootstrap.BootstrapKeys;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.bootstrap.ClientBootstrap;
import org.aldeia.core.bootstrap.Routes;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.EndpointSizes;
import org.aldeia.core.spi.Transport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The choice of a route per peer, and a server that has not the route a client offers. */
@Timeout(30)
class RoutesTest extends InMemoryEnvironmentTest {

    /** An address of the emulated hosts' range, not one of this machine's (nothing is sent to it). */
    private static final InetSocketAddress OTHER_HOST = new InetSocketAddress("198.19.255.254", 7000);

    private static Transport transport(String route) {
        Transport t = mock(Transport.class);
        when(t.route()).thenReturn(route);
        when(t.description()).thenReturn("transport " + route);
        return t;
    }

    @Test
    void aPeerOnThisHostGetsTheLastRouteAndOneElsewhereTheFirst() throws IOException {
        Transport fabric = transport("fabric verbs;IB-0xfe80::"), deck = transport("deck");
        Routes routes = Routes.of(List.of(fabric, deck));
        assertSame(deck, routes.toward(new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000)));
        assertSame(fabric, routes.toward(OTHER_HOST));
        assertSame(fabric, routes.primary());
        assertEquals(List.of("fabric verbs;IB-0xfe80::", "deck"), routes.names());
    }

    @Test
    void aRefusedRouteIsRememberedForThatServerOnly() throws IOException {
        Transport fabric = transport("fabric verbs;IB-0xfe80::"), deck = transport("deck");
        Routes routes = Routes.of(List.of(fabric, deck));
        assertSame(deck, routes.afterRefusal(OTHER_HOST, fabric.route(), List.of("deck")));
        assertSame(deck, routes.toward(OTHER_HOST));
        InetSocketAddress otherPort = new InetSocketAddress(OTHER_HOST.getAddress(), OTHER_HOST.getPort() + 1);
        assertSame(fabric, routes.toward(otherPort));
    }

    @Test
    void twoProcessesWithoutACommonRouteGetAnErrorNamingBoth() {
        Routes routes = Routes.of(List.of(transport("fabric efa;efa"), transport("deck")));
        IOException e = assertThrows(IOException.class,
                () -> routes.afterRefusal(OTHER_HOST, "fabric efa;efa", List.of("fabric cxi;cxi")));
        assertTrue(e.getMessage().contains("[fabric cxi;cxi]") && e.getMessage().contains("[fabric efa;efa, deck]"),
                e.getMessage());
    }

    @Test
    void aServerFindsTheTransportOfTheRouteAClientNames() {
        Transport fabric = transport("fabric tcp;ofi_rxm;198.18.0.0/24"), deck = transport("deck");
        Routes routes = Routes.of(List.of(fabric, deck));
        assertSame(fabric, routes.named("fabric tcp;ofi_rxm;198.18.0.0/24", OTHER_HOST.getAddress()));
        assertSame(deck, routes.named("deck", OTHER_HOST.getAddress()));
        assertNull(routes.named("fabric tcp;ofi_rxm;10.0.0.0/8", OTHER_HOST.getAddress()));
    }

    @Test
    void routeNamesArePrintableAsciiOfBoundedLength() throws IOException {
        assertThrows(IllegalArgumentException.class, () -> BootstrapProtocol.routeBytes(""));
        assertThrows(IllegalArgumentException.class, () -> BootstrapProtocol.routeBytes("é"));
        assertThrows(IllegalArgumentException.class, () -> BootstrapProtocol.routeBytes("a\nb"));
        assertThrows(IllegalArgumentException.class,
                () -> BootstrapProtocol.routeBytes("x".repeat(BootstrapProtocol.MAX_ROUTE_LENGTH + 1)));
        byte[] body = BootstrapProtocol.body(new byte[32], new byte[32], "deck", new byte[] {1, 2, 3});
        assertEquals("deck", BootstrapProtocol.route(body));
        assertArrayEquals(new byte[] {1, 2, 3}, BootstrapProtocol.info(body));
        body[BootstrapProtocol.HELLO_FIXED] = (byte) 200; // a route longer than the body
        assertThrows(IOException.class, () -> BootstrapProtocol.route(body));
    }

    /** The in-memory transport under another route's name: one this test's server has not. */
    private static Transport renamed(Transport real, String route, AtomicInteger endpoints) {
        return new Transport() {
            @Override
            public String route() {
                return route;
            }

            @Override
            public String description() {
                return real.description() + " as " + route;
            }

            @Override
            public Endpoint createEndpoint(int socketId, EndpointSizes sizes) throws IOException {
                endpoints.incrementAndGet();
                return real.createEndpoint(socketId, sizes);
            }

            @Override
            public byte[] publicKey() {
                return real.publicKey();
            }

            @Override
            public byte[] identity() {
                return real.identity();
            }

            @Override
            public byte[] identityOf(byte[] remoteInfo) throws IOException {
                return real.identityOf(remoteInfo);
            }

            @Override
            public byte[] pairKey(byte[] remoteIdentity, byte[] peerPublicKey) throws IOException {
                return real.pairKey(remoteIdentity, peerPublicKey);
            }

            @Override
            public void close() {}
        };
    }

    @Test
    void aClientWhoseRouteTheServerLacksTakesOneTheServerListsOnTheSameConnection() throws Exception {
        Transport real = environment.transport();
        AtomicInteger onFabric = new AtomicInteger(), onReal = new AtomicInteger();
        Transport fabric = renamed(real, "fabric test;nowhere", onFabric);
        Transport counted = renamed(real, real.route(), onReal);
        Routes clientRoutes = Routes.of(List.of(fabric, counted));
        EndpointSizes sizes = new EndpointSizes(TestEnvironments.SEND_REGION, 4, 4);
        try (AldeiaServerSocket listener = TestEnvironments.listen(environment);
                SocketChannel bootstrap = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                        listener.getLocalPort()))) {
            CompletableFuture<AldeiaSocket> accepted = TestEnvironments.acceptAsync(listener);
            Channel channel = ClientBootstrap.connect(bootstrap, clientRoutes, fabric, fabric.createEndpoint(0, sizes),
                    t -> t.createEndpoint(0, sizes), 5000);
            try (AldeiaSocket server = accepted.get(10, TimeUnit.SECONDS)) {
                channel.write(new byte[] {42}, 0, 1);
                channel.flush();
                assertEquals(42, server.getInputStream().read());
            } finally {
                channel.close();
            }
            assertEquals(1, onFabric.get(), "the endpoint on the refused route");
            assertEquals(1, onReal.get(), "the endpoint on the route the server has");
            InetSocketAddress server = (InetSocketAddress) bootstrap.getRemoteAddress();
            assertSame(counted, clientRoutes.afterRefusal(server, fabric.route(), List.of(real.route())));
        }
    }

    @Test
    void aServerToldTwoRoutesItLacksClosesTheConnection() throws Exception {
        Transport real = environment.transport();
        try (AldeiaServerSocket listener = TestEnvironments.listen(environment);
                java.net.Socket raw = new java.net.Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort())) {
            raw.setSoTimeout(5000);
            byte[] hello = BootstrapProtocol.body(real.publicKey(), BootstrapKeys.nonce(), "fabric x;y", new byte[16]);
            raw.getOutputStream().write(BootstrapProtocol.startAndHello(hello).array());
            DataInputStream in = new DataInputStream(raw.getInputStream());
            assertEquals(BootstrapProtocol.MAGIC, in.readInt());
            assertEquals(BootstrapProtocol.VERSION, in.readInt());
            byte[] body = new byte[in.readInt()];
            in.readFully(body);
            assertEquals(BootstrapProtocol.UNROUTED, body[0]);
            assertEquals(List.of(real.route()), BootstrapProtocol.unroutedRoutes(body, "the server"));

            raw.getOutputStream().write(BootstrapProtocol.hello(hello).array());
            assertEquals(-1, readOrEnd(raw.getInputStream()), "a second unknown route is dropped");
        }
    }

    private static int readOrEnd(InputStream in) {
        try {
            return in.read();
        } catch (IOException reset) {
            return -1;
        }
    }

    @Test
    void anUnroutedReplyCarriesAtMostItsBoundOfRoutes() throws IOException {
        List<String> many = List.of("a", "b", "c", "d", "e", "f");
        ByteBuffer reply = BootstrapProtocol.unrouted(many);
        reply.position(BootstrapProtocol.START_BYTES);
        byte[] body = new byte[reply.getInt()];
        reply.get(body);
        assertEquals(many.subList(0, BootstrapProtocol.MAX_ROUTES), BootstrapProtocol.unroutedRoutes(body, "server"));
    }
}
