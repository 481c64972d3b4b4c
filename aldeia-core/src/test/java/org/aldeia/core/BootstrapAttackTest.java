package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.bootstrap.BootstrapKeys;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.config.ConfigurationKey;
import org.aldeia.core.memory.InMemoryTransport;
import org.aldeia.core.memory.InMemoryTransportProvider;
import org.aldeia.core.spi.PeerKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server side of the bootstrap against clients that are not what they should be, over the
 * in-memory transport: strangers hear nothing and cost no endpoint and no thread; the silent and
 * the slow are closed at the step's deadline; one address cannot hold more than its share; a
 * client that claims to be a process the server already shares a key with must prove that key;
 * a server must prove it to its client too. Every time, a legitimate connection keeps working.
 */
@Timeout(60)
class BootstrapAttackTest {

    private static final int STEP_MILLIS = 400;
    private static final int PER_ADDRESS = 16;

    private AldeiaEnvironment server;
    private AldeiaEnvironment client;
    private AldeiaServerSocket listener;

    @BeforeEach
    void start() throws IOException {
        Map<ConfigurationKey, Object> limits = Map.of(ConfigurationKey.BOOTSTRAP_TIMEOUT, STEP_MILLIS,
                ConfigurationKey.BOOTSTRAP_PER_ADDRESS, PER_ADDRESS);
        server = TestEnvironments.inMemory(limits);
        client = TestEnvironments.inMemory();
        listener = TestEnvironments.listen(server);
    }

    @AfterEach
    void stop() throws IOException {
        listener.close();
        server.close();
        client.close();
    }

    private InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort());
    }

    /** Reads until the server closes; returns how many bytes it sent before. */
    private static int bytesBeforeClose(SocketChannel channel) throws IOException {
        int total = 0;
        ByteBuffer sink = ByteBuffer.allocate(256);
        for (int n; (n = channel.read(sink)) >= 0; sink.clear()) {
            total += n;
        }
        return total;
    }

    /** A connection made and closed through the legitimate path, both ways. */
    private void legitimateExchange() throws Exception {
        CompletableFuture<AldeiaSocket> accepted = TestEnvironments.acceptAsync(listener);
        try (AldeiaSocket c = new AldeiaSocket(client)) {
            c.connect(address(), 5000);
            try (AldeiaSocket s = accepted.get(10, TimeUnit.SECONDS)) {
                c.getOutputStream().write(new byte[] {1, 2, 3});
                c.getOutputStream().flush();
                byte[] got = new byte[3];
                new DataInputStream(s.getInputStream()).readFully(got);
                assertEquals(6, got[0] + got[1] + got[2]);
            }
        }
    }

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
    }

    @Test
    void strangersHearNothingAndCostNoEndpointAndNoThread() throws Exception {
        int endpoints = InMemoryTransportProvider.openEndpoints();
        int threads = Thread.activeCount();
        List<byte[]> openings = List.of(
                "GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(),
                new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2, 3, 4},
                ByteBuffer.allocate(8).putInt(BootstrapProtocol.MAGIC).putInt(1).array(),
                ByteBuffer.allocate(12).putInt(BootstrapProtocol.MAGIC).putInt(BootstrapProtocol.VERSION)
                        .putInt(1 << 30).array(),
                ByteBuffer.allocate(12).putInt(BootstrapProtocol.MAGIC).putInt(BootstrapProtocol.VERSION)
                        .putInt(10).array(),
                new byte[0],
                ByteBuffer.allocate(22).putInt(BootstrapProtocol.MAGIC).putInt(BootstrapProtocol.VERSION)
                        .putInt(100).put(new byte[10]).array());
        for (byte[] opening : openings) {
            try (SocketChannel stranger = SocketChannel.open(address())) {
                stranger.write(ByteBuffer.wrap(opening));
                long start = System.nanoTime();
                assertEquals(0, bytesBeforeClose(stranger), "a stranger hears nothing");
                assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < STEP_MILLIS + 2000,
                        "closed at the step's deadline at the latest");
            }
        }
        assertEquals(endpoints, InMemoryTransportProvider.openEndpoints(), "no endpoint for a stranger");
        assertEquals(0, threadsNamed("aldeia-bootstrap-"), "no worker ran for a stranger");
        assertTrue(Thread.activeCount() <= threads + 1, "no thread per stranger");
        legitimateExchange();
    }

    @Test
    void oneAddressHoldsNoMoreThanItsShareAndALegitimateClientStillConnects() throws Exception {
        List<SocketChannel> silent = new ArrayList<>();
        int threads = Thread.activeCount();
        try {
            for (int i = 0; i < 100; i++) {
                SocketChannel s = SocketChannel.open(address());
                s.write(BootstrapProtocol.start()); // a start, then nothing
                silent.add(s);
            }
            assertTrue(Thread.activeCount() <= threads + 1, "100 silent clients, no thread each");
            legitimateExchange();
            int open = 0;
            for (SocketChannel s : silent) {
                s.configureBlocking(false);
                if (s.read(ByteBuffer.allocate(1)) == 0) {
                    open++;
                }
            }
            assertTrue(open <= PER_ADDRESS, open + " silent clients of one address still waited on, at most "
                    + PER_ADDRESS + " expected");
        } finally {
            for (SocketChannel s : silent) {
                s.close();
            }
        }
    }

    /** The start and HELLO of a client claiming to be in-memory transport {@code claimed}, with {@code publicKey}. */
    private static ByteBuffer impostorHello(long claimed, byte[] publicKey) {
        byte[] info = ByteBuffer.allocate(16).putLong(claimed).putLong(Long.MAX_VALUE).array();
        byte[] body = BootstrapProtocol.body(publicKey, BootstrapKeys.nonce(), "default", info);
        ByteBuffer start = BootstrapProtocol.start(), hello = BootstrapProtocol.hello(body);
        return ByteBuffer.allocate(start.remaining() + hello.remaining()).put(start).put(hello).flip();
    }

    /** A whole HELLO of a process nobody knows gets the reply, but no endpoint until its proof, which never comes. */
    @Test
    void aStrangersWholeHelloCostsNoEndpoint() throws Exception {
        int endpoints = InMemoryTransportProvider.openEndpoints();
        List<SocketChannel> strangers = new ArrayList<>();
        try {
            for (int i = 0; i < 10; i++) {
                SocketChannel stranger = SocketChannel.open(address());
                strangers.add(stranger);
                stranger.write(impostorHello(1_000_000 + i, new PeerKeys().publicKey()));
                DataInputStream in = new DataInputStream(stranger.socket().getInputStream());
                assertEquals(BootstrapProtocol.MAGIC, in.readInt(), "a whole HELLO is answered");
                in.readInt();
                in.readFully(new byte[in.readInt()]);
            }
            assertEquals(endpoints, InMemoryTransportProvider.openEndpoints(), "an endpoint before the proof");
        } finally {
            for (SocketChannel stranger : strangers) {
                stranger.close();
            }
        }
        legitimateExchange();
    }

    @Test
    void aClientClaimingAKnownProcessWithAnotherKeyPairHearsNothing() throws Exception {
        legitimateExchange(); // the client's and the server's processes now share a key
        long victim = ((InMemoryTransport) client.transport()).id();
        try (SocketChannel impostor = SocketChannel.open(address())) {
            impostor.write(impostorHello(victim, new PeerKeys().publicKey()));
            assertEquals(0, bytesBeforeClose(impostor), "refused before the server says anything");
        }
        long self = ((InMemoryTransport) server.transport()).id();
        try (SocketChannel impostor = SocketChannel.open(address())) {
            impostor.write(impostorHello(self, new PeerKeys().publicKey()));
            assertEquals(0, bytesBeforeClose(impostor), "claiming to be the server itself: refused");
        }
        legitimateExchange();
    }

    @Test
    void aClientWithAKnownProcessesPublicKeyCannotProveItsKey() throws Exception {
        legitimateExchange();
        InMemoryTransport victim = (InMemoryTransport) client.transport();
        try (SocketChannel impostor = SocketChannel.open(address())) {
            impostor.write(impostorHello(victim.id(), victim.publicKey())); // public: anyone may copy it
            Socket socket = impostor.socket();
            socket.setSoTimeout(5000);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            assertEquals(BootstrapProtocol.MAGIC, in.readInt());
            assertEquals(BootstrapProtocol.VERSION, in.readInt());
            in.readFully(new byte[in.readInt()]); // the server's reply and proof
            impostor.write(ByteBuffer.wrap(new byte[BootstrapProtocol.PROOF_BYTES])); // its proof cannot be right
            assertEquals(-1, in.read(), "the server ends the impostor's bootstrap");
        }
        legitimateExchange();
    }

    /** A fake server answering on a port, claiming to be the real one: it must prove the key too. */
    @Test
    void aServerClaimingAKnownProcessMustProveItsKeyToo() throws Exception {
        legitimateExchange();
        InMemoryTransport real = (InMemoryTransport) server.transport();
        try (ServerSocketChannel fake = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            List<byte[]> keys = List.of(new PeerKeys().publicKey(), real.publicKey());
            List<String> refusals = List.of("another process claims its identity", "failed to prove it holds the key");
            for (int k = 0; k < keys.size(); k++) {
                byte[] publicKey = keys.get(k);
                CompletableFuture<Void> answered = CompletableFuture.runAsync(() -> {
                    try (SocketChannel c = fake.accept()) {
                        DataInputStream in = new DataInputStream(c.socket().getInputStream());
                        in.readLong(); // start
                        in.readFully(new byte[in.readInt()]);
                        c.write(BootstrapProtocol.reply(BootstrapProtocol.CHALLENGE, publicKey, BootstrapKeys.nonce(),
                                new byte[BootstrapProtocol.PROOF_BYTES], real.identity()));
                        in.read();
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                AldeiaSocket victim = new AldeiaSocket(client);
                IOException e = assertThrows(IOException.class, () -> victim.connect(fake.getLocalAddress(), 5000));
                assertTrue(e.getMessage().contains(refusals.get(k)), e.getMessage());
                answered.get(10, TimeUnit.SECONDS);
            }
        }
        legitimateExchange();
    }

    /** Connections made at once between the same two processes agree on the same pair key. */
    @Test
    void concurrentFirstConnectionsBetweenTwoProcessesAllSucceed() throws Exception {
        List<CompletableFuture<Void>> exchanges = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            exchanges.add(CompletableFuture.runAsync(() -> {
                try {
                    legitimateExchange();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (CompletableFuture<Void> exchange : exchanges) {
            exchange.get(30, TimeUnit.SECONDS);
        }
    }
}
