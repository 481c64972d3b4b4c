package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.TestEnvironments.Pair;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.memory.InMemoryTransport;
import org.aldeia.core.spi.EndpointSizes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** SO_SNDBUF and SO_RCVBUF size the connection's endpoint (mtu 1000 in these tests). */
@Timeout(60)
class AldeiaSocketBufferSizesTest {

    private static final int WINDOW = AldeiaConfiguration.defaults().receiveWindow();
    private static final int BUFFERS = AldeiaConfiguration.defaults().receiveBuffers();

    /** java.net's value before anything is set, which an unconnected Aldeia socket reports too. */
    private static final int STORED_DEFAULT = 64 * 1024;

    private AldeiaEnvironment environment;
    private AldeiaServerSocket listener;

    @BeforeEach
    void start() throws IOException {
        environment = TestEnvironments.inMemory();
        listener = new AldeiaServerSocket(environment);
    }

    @AfterEach
    void stop() throws IOException {
        listener.close();
        environment.close();
    }

    private EndpointSizes endpointOf(AldeiaSocket socket) throws IOException {
        return ((InMemoryTransport) environment.transport()).sizesOf(socket.id());
    }

    private Pair connect(AldeiaSocket client) throws Exception {
        if (!listener.isBound()) {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        }
        CompletableFuture<AldeiaSocket> accepted = TestEnvironments.acceptAsync(listener);
        client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort()), 5000);
        return new Pair(client, accepted.get(10, TimeUnit.SECONDS));
    }

    @Test
    void sizesSetBeforeConnectMakeTheEndpointAndAreReportedBack() throws Exception {
        AldeiaSocket client = new AldeiaSocket(environment);
        client.setSendBufferSize(4096);
        client.setReceiveBufferSize(250_000);
        assertEquals(4096, client.getSendBufferSize(), "before connect: what was set");
        assertEquals(250_000, client.getReceiveBufferSize());
        try (Pair pair = connect(client)) {
            assertEquals(new EndpointSizes(4096, BUFFERS, 250_000), endpointOf(client));
            assertEquals(4096, client.getSendBufferSize());
            assertEquals(250_000, client.getReceiveBufferSize(), "the window in use");
            assertEquals(4096, client.getOption(StandardSocketOptions.SO_SNDBUF));
            assertEquals(250_000, client.getOption(StandardSocketOptions.SO_RCVBUF));
        }
    }

    @Test
    void setAfterConnectIsValidatedAndAcceptedButTheConnectionKeepsItsSizes() throws Exception {
        AldeiaSocket client = new AldeiaSocket(environment);
        client.setSendBufferSize(4096);
        try (Pair pair = connect(client)) {
            client.setSendBufferSize(1 << 20);
            client.setOption(StandardSocketOptions.SO_RCVBUF, 1 << 20);
            assertThrows(IllegalArgumentException.class, () -> client.setReceiveBufferSize(0));
            assertEquals(4096, client.getSendBufferSize());
            assertEquals(WINDOW, client.getReceiveBufferSize());
            assertEquals(new EndpointSizes(4096, BUFFERS, WINDOW), endpointOf(client));
        }
    }

    @Test
    void unsetSizesAreTheConfigurationsOnBothSides() throws Exception {
        AldeiaSocket client = new AldeiaSocket(environment);
        assertEquals(STORED_DEFAULT, client.getSendBufferSize());
        assertEquals(STORED_DEFAULT, client.getReceiveBufferSize());
        try (Pair pair = connect(client)) {
            EndpointSizes configured = new EndpointSizes(TestEnvironments.SEND_REGION, BUFFERS, WINDOW);
            assertEquals(configured, endpointOf(pair.client()));
            assertEquals(configured, endpointOf(pair.server()));
            assertEquals(TestEnvironments.SEND_REGION, pair.server().getSendBufferSize());
            assertEquals(WINDOW, pair.server().getReceiveBufferSize());
        }
    }

    @Test
    void outOfRangeSizesAreClamped() throws Exception {
        AldeiaSocket small = new AldeiaSocket(environment);
        small.setSendBufferSize(1);
        small.setReceiveBufferSize(1);
        try (Pair pair = connect(small)) {
            assertEquals(new EndpointSizes(1000, BUFFERS, BufferSizes.MIN_RECEIVE_WINDOW), endpointOf(small));
            assertEquals(1000, small.getSendBufferSize());
            assertEquals(BufferSizes.MIN_RECEIVE_WINDOW, small.getReceiveBufferSize());
        }
        AldeiaSocket large = new AldeiaSocket(environment);
        large.setSendBufferSize(Integer.MAX_VALUE);
        large.setReceiveBufferSize(Integer.MAX_VALUE);
        try (Pair pair = connect(large)) {
            assertEquals(new EndpointSizes(1 << 30, BUFFERS, 1 << 30), endpointOf(large));
            assertEquals(1 << 30, large.getSendBufferSize());
            assertEquals(1 << 30, large.getReceiveBufferSize());
        }
    }

    @Test
    void acceptedSocketsGetTheListenersReceiveBufferSize() throws Exception {
        listener.setReceiveBufferSize(500_000);
        try (Pair pair = connect(new AldeiaSocket(environment))) {
            assertEquals(new EndpointSizes(TestEnvironments.SEND_REGION, BUFFERS, 500_000), endpointOf(pair.server()));
            assertEquals(500_000, pair.server().getReceiveBufferSize());
            assertEquals(new EndpointSizes(TestEnvironments.SEND_REGION, BUFFERS, WINDOW), endpointOf(pair.client()),
                    "the client has its own SO_RCVBUF");
        }
        listener.setReceiveBufferSize(700_000); // after bind: still reaches the next accepted socket
        try (Pair pair = connect(new AldeiaSocket(environment))) {
            assertEquals(700_000, endpointOf(pair.server()).receiveWindow());
        }
    }

    @Test
    void writesLargerThanAOneMtuRingArriveWholeAndInOrder() throws Exception {
        AldeiaSocket client = new AldeiaSocket(environment);
        client.setSendBufferSize(1);
        client.setReceiveBufferSize(1);
        try (Pair pair = connect(client)) {
            assertEquals(1000, endpointOf(client).sendRegionSize());
            byte[] sent = new byte[300_017];
            for (int i = 0; i < sent.length; i++) {
                sent[i] = (byte) (i * 31 + i / 251);
            }
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try {
                    pair.client().getOutputStream().write(sent);
                    pair.client().getOutputStream().write(sent, 5, 1);
                    pair.client().shutdownOutput();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            InputStream in = pair.server().getInputStream();
            assertArrayEquals(sent, in.readNBytes(sent.length));
            assertEquals(sent[5] & 0xFF, in.read());
            assertEquals(-1, in.read());
            writer.get(30, TimeUnit.SECONDS);
        }
    }
}
