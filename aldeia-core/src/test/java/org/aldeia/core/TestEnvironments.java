package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.config.ConfigurationFixtures;
import org.aldeia.core.config.ConfigurationKey;
import org.aldeia.core.memory.InMemoryTransportProvider;
import org.aldeia.core.upgrade.UnconfirmedChannel;

/** Environments over the in-memory test transport, and connected socket pairs on loopback. */
final class TestEnvironments {

    /** Small MTU and send ring, so writes are cut into many blocks and writers block on a full ring. */
    static final int MTU = 1000;
    static final int SEND_REGION = 8 * 1024;

    private TestEnvironments() {}

    static AldeiaConfiguration configuration(String socketType) {
        return configuration(socketType, Map.of());
    }

    /**
     * The tests' configuration, with {@code more} keys over it: connections set up on their route
     * at connect (upgrade_after 0), which is what most tests here are about; TcpFirstConnectionTest
     * asks for TCP first.
     */
    static AldeiaConfiguration configuration(String socketType, Map<ConfigurationKey, Object> more) {
        Map<ConfigurationKey, Object> values = new EnumMap<>(Map.of(ConfigurationKey.SOCKET_TYPE, socketType,
                ConfigurationKey.MTU, MTU, ConfigurationKey.DECK_TRANSPORT, "tcp",
                ConfigurationKey.SEND_REGION_SIZE, SEND_REGION, ConfigurationKey.UPGRADE_AFTER, 0));
        values.putAll(more);
        return ConfigurationFixtures.configuration("test", values);
    }

    static AldeiaEnvironment inMemory() {
        return inMemory(Map.of());
    }

    static AldeiaEnvironment inMemory(Map<ConfigurationKey, Object> more) {
        return new AldeiaEnvironment(() -> configuration(InMemoryTransportProvider.SOCKET_TYPE, more),
                () -> List.of(new InMemoryTransportProvider()), false);
    }

    static AldeiaServerSocket listen(AldeiaEnvironment environment) throws IOException {
        return new AldeiaServerSocket(environment, 0, 50, InetAddress.getLoopbackAddress());
    }

    /** Both ends of one connection. */
    record Pair(AldeiaSocket client, AldeiaSocket server) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            client.close();
            server.close();
        }
    }

    static Pair connect(AldeiaEnvironment environment) throws Exception {
        try (AldeiaServerSocket listener = listen(environment)) {
            return connect(environment, listener);
        }
    }

    static Pair connect(AldeiaEnvironment environment, AldeiaServerSocket listener) throws Exception {
        CompletableFuture<AldeiaSocket> accepted = acceptAsync(listener);
        AldeiaSocket client = new AldeiaSocket(environment);
        client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort()), 5000);
        return new Pair(client, accepted.get(10, TimeUnit.SECONDS));
    }

    /**
     * Waits (5 s at most) until {@code expected} in-memory endpoints and channels are open: a
     * server socket closed before its client's CONNECTED was read releases its channel once it
     * is ({@link UnconfirmedChannel}), a moment after close() returned.
     */
    static void awaitOpenEndpoints(int expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (InMemoryTransportProvider.openEndpoints() != expected && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(expected, InMemoryTransportProvider.openEndpoints(), "in-memory endpoints and channels open");
    }

    /** accept() on its own thread; the future fails with what accept threw. */
    static CompletableFuture<AldeiaSocket> acceptAsync(AldeiaServerSocket listener) {
        CompletableFuture<AldeiaSocket> result = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                result.complete(listener.accept());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, "test-accept");
        thread.setDaemon(true);
        thread.start();
        return result;
    }
}
