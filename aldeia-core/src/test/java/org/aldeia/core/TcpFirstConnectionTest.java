package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.TestEnvironments.Pair;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.config.ConfigurationKey;
import org.aldeia.core.memory.InMemoryTransportProvider;
import org.aldeia.core.upgrade.TcpFirstChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connections that start on TCP and move to their route (upgrade_after > 0, {@link
 * TcpFirstChannel}), over the in-memory transport: what a connection costs before it moves, that
 * no byte is lost or reordered while each direction moves, and how shutdowns and closes cross
 * the move.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // reads on TCP ignore interrupts, as java.net's
class TcpFirstConnectionTest {

    private AldeiaEnvironment environment;

    private AldeiaEnvironment upgradingAfter(int millis) {
        environment = TestEnvironments.inMemory(Map.of(ConfigurationKey.UPGRADE_AFTER, millis));
        return environment;
    }

    @AfterEach
    void closeEnvironment() throws IOException {
        if (environment != null) {
            environment.close();
        }
    }

    private static TcpFirstChannel tcpFirst(AldeiaSocket socket) {
        return assertInstanceOf(TcpFirstChannel.class, socket.connection());
    }

    @Test
    void aShortConnectionRunsOnTcpAndNeverCreatesAnEndpoint() throws Exception {
        upgradingAfter(60_000);
        int before = InMemoryTransportProvider.openEndpoints();
        try (Pair p = TestEnvironments.connect(environment)) {
            p.client().getOutputStream().write(7);
            assertEquals(7, p.server().getInputStream().read());
            p.server().getOutputStream().write(8);
            assertEquals(8, p.client().getInputStream().read());
            assertEquals(before, InMemoryTransportProvider.openEndpoints(), "an endpoint for a TCP-first connection");
            assertFalse(tcpFirst(p.client()).writesMoved());
            assertFalse(tcpFirst(p.server()).readsMoved());
        }
        assertEquals(before, InMemoryTransportProvider.openEndpoints());
    }

    /** SO_TIMEOUT on TCP: the reading thread waits itself, as java.net's, no helper thread (PendingRead) in between. */
    @Test
    void aTimedReadOnTcpTimesOutInTheReadersThreadAndLosesNothing() throws Exception {
        upgradingAfter(60_000);
        try (Pair p = TestEnvironments.connect(environment)) {
            p.server().setSoTimeout(150);
            InputStream in = p.server().getInputStream();
            long start = System.nanoTime();
            SocketTimeoutException timeout = assertThrows(SocketTimeoutException.class, in::read);
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(140), "timed out too early");
            assertTrue(Arrays.stream(timeout.getStackTrace())
                    .noneMatch(frame -> frame.getClassName().equals(PendingRead.class.getName())), "through a helper thread");
            p.client().getOutputStream().write(new byte[] {5, 6});
            assertEquals(5, in.read());
            assertEquals(6, in.read());
            assertFalse(tcpFirst(p.server()).readsMoved());
        }
    }

    /**
     * Both directions stream numbered bytes while the connection moves, each writer going on for
     * a megabyte after its own move; each reader checks every byte.
     */
    @Test
    void bothDirectionsMoveWithoutLosingOrReorderingAByte() throws Exception {
        upgradingAfter(1);
        int before = InMemoryTransportProvider.openEndpoints();
        Pair p = TestEnvironments.connect(environment); // closes its server socket: the upgrade needs none
        CompletableFuture<Long> clientWrites = closingOnFailure(p, () -> writeCounting(p.client()));
        CompletableFuture<Long> serverWrites = closingOnFailure(p, () -> writeCounting(p.server()));
        CompletableFuture<Long> serverReads = closingOnFailure(p, () -> readCounting(p.server()));
        long clientRead = readCounting(p.client());
        assertEquals(serverWrites.get(30, TimeUnit.SECONDS), clientRead);
        assertEquals(clientWrites.get(30, TimeUnit.SECONDS), serverReads.get(30, TimeUnit.SECONDS));
        for (AldeiaSocket side : new AldeiaSocket[] {p.client(), p.server()}) {
            assertTrue(tcpFirst(side).readsMoved(), "reads still on TCP at " + side);
        }
        assertEquals(before + 2, InMemoryTransportProvider.openEndpoints(), "the two ends of the new channel");
        p.close();
        TestEnvironments.awaitOpenEndpoints(before);
    }

    /** {@code task} on its own thread; if it fails, both sockets close, so the other threads of the test end too. */
    private static CompletableFuture<Long> closingOnFailure(Pair p, java.util.function.Supplier<Long> task) {
        CompletableFuture<Long> result = CompletableFuture.supplyAsync(task);
        result.whenComplete((value, failure) -> {
            if (failure != null) {
                failure.printStackTrace();
                try {
                    p.close();
                } catch (IOException e) {
                    failure.addSuppressed(e);
                }
            }
        });
        return result;
    }

    /**
     * Writes bytes 0, 1, 2, ... (mod 251) in writes of varying sizes until its writes have moved
     * and a megabyte more, then shuts its output down; returns how many it wrote.
     */
    private static long writeCounting(AldeiaSocket socket) {
        try {
            OutputStream out = socket.getOutputStream();
            byte[] chunk = new byte[7919];
            long sent = 0;
            long stopAt = Long.MAX_VALUE;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (int round = 0; sent < stopAt; round++) {
                int n = (int) Math.min(stopAt - sent, 1 + (round * 131) % chunk.length);
                for (int i = 0; i < n; i++) {
                    chunk[i] = (byte) ((sent + i) % 251);
                }
                out.write(chunk, 0, n);
                sent += n;
                if (stopAt == Long.MAX_VALUE && tcpFirst(socket).writesMoved()) {
                    stopAt = sent + (1 << 20);
                }
                if (System.nanoTime() - deadline > 0) {
                    socket.close(); // the reader's end
                    throw new IllegalStateException("the writes of " + socket + " never moved");
                }
            }
            out.flush();
            socket.shutdownOutput();
            return sent;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Reads to the end, checking that byte i is i mod 251; returns how many came. */
    private static long readCounting(AldeiaSocket socket) {
        try {
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[5003];
            long count = 0;
            for (int n; (n = in.read(buffer)) >= 0; ) {
                for (int i = 0; i < n; i++, count++) {
                    if (buffer[i] != (byte) (count % 251)) {
                        throw new IllegalStateException("byte " + count + " is " + buffer[i] + ", not "
                                + (byte) (count % 251));
                    }
                }
            }
            return count;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The client shuts its output down on TCP before any upgrade: its upgrade could not say a
     * word, so the connection stays on TCP, and the other direction goes on to the server's close.
     */
    @Test
    void aConnectionWhoseOutputEndedOnTcpStaysOnTcp() throws Exception {
        upgradingAfter(1);
        try (Pair p = TestEnvironments.connect(environment)) {
            p.client().getOutputStream().write(new byte[] {1, 2, 3});
            p.client().shutdownOutput();
            InputStream serverIn = p.server().getInputStream();
            assertArrayEquals(new byte[] {1, 2, 3}, serverIn.readNBytes(3));
            assertEquals(-1, serverIn.read());
            OutputStream serverOut = p.server().getOutputStream();
            InputStream clientIn = p.client().getInputStream();
            for (int i = 0; i < 50; i++) {
                serverOut.write(i);
                assertEquals(i, clientIn.read()); // the client's reads would start its upgrade
                Thread.sleep(1);
            }
            assertFalse(tcpFirst(p.server()).writesMoved());
            p.server().close();
            assertEquals(-1, clientIn.read());
        }
    }

    /** A server that only writes, to a client that only reads: the upgrade's messages still get through, and both move. */
    @Test
    void aServerThatOnlyWritesStillMoves() throws Exception {
        upgradingAfter(1);
        int before = InMemoryTransportProvider.openEndpoints();
        try (Pair p = TestEnvironments.connect(environment)) {
            CompletableFuture<Long> serverWrites = closingOnFailure(p, () -> writeCounting(p.server()));
            long read = readCounting(p.client());
            assertEquals(serverWrites.get(30, TimeUnit.SECONDS), read);
            assertTrue(tcpFirst(p.client()).readsMoved());
        }
        TestEnvironments.awaitOpenEndpoints(before);
    }

    /** A server that closes on TCP while the client's reads have started its upgrade: the client reads to the end. */
    @Test
    void theServersCloseDuringTheMoveIsAnEndOfStream() throws Exception {
        upgradingAfter(1);
        for (int i = 0; i < 20; i++) {
            try (Pair p = TestEnvironments.connect(environment)) {
                Thread.sleep(2);
                CompletableFuture<Long> reads = CompletableFuture.supplyAsync(() -> readCounting(p.client()));
                OutputStream out = p.server().getOutputStream();
                for (int b = 0; b < 1000; b++) {
                    out.write(b % 251);
                }
                p.server().close();
                assertEquals(1000, reads.get(10, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void aServerThatIsNotAldeiaFailsTheFirstRead() throws Exception {
        upgradingAfter(60_000);
        try (ServerSocket plain = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                try (Socket s = plain.accept()) {
                    s.getOutputStream().write("HTTP/1.0 400 Bad Request\r\n\r\n".getBytes());
                    s.getInputStream().read();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            try (AldeiaSocket client = new AldeiaSocket(environment)) {
                client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), plain.getLocalPort()), 5000);
                SocketException e = assertThrows(SocketException.class, () -> client.getInputStream().read());
                assertTrue(e.getMessage().contains("not an Aldeia server socket"), e.getMessage());
            }
            server.get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * A server socket closed while its client's upgrade messages may still come (it lived past
     * the earliest upgrade) reads and drops them until the client's end, so that they do not
     * turn its close into a reset: the client reads everything that was written, then the end.
     * The linger waits for each frame in a read bounded by its 2 s; the client's end, which
     * comes well before, ends it.
     */
    @Test
    void aClosedServerDropsLateUpgradeMessagesAndTheClientReadsEverything() throws Exception {
        upgradingAfter(60_000);
        try (AldeiaServerSocket listener = TestEnvironments.listen(environment); Socket raw = new Socket()) {
            CompletableFuture<AldeiaSocket> accepted = TestEnvironments.acceptAsync(listener);
            raw.connect(listener.getLocalSocketAddress(), 5000);
            DataOutputStream out = new DataOutputStream(raw.getOutputStream());
            out.write(BootstrapProtocol.tcpFirst().array());
            out.flush();
            AldeiaSocket server = accepted.get(10, TimeUnit.SECONDS);
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(TcpFirstChannel.EARLIEST_UPGRADE_NANOS) + 5);
            server.getOutputStream().write("abc".getBytes());
            server.close();
            out.writeInt(TcpFirstChannel.CONTROL); // a late upgrade message, after the server's close
            out.writeInt(5);
            out.write(new byte[5]);
            out.flush();
            Thread.sleep(200); // a reset would be here by now
            DataInputStream in = new DataInputStream(raw.getInputStream());
            in.readFully(new byte[BootstrapProtocol.START_BYTES]); // the server's magic and version
            assertEquals(3, in.readInt());
            assertArrayEquals("abc".getBytes(), in.readNBytes(3));
            assertEquals(TcpFirstChannel.END, in.readInt());
            assertEquals(-1, in.read());
            raw.shutdownOutput();
        }
    }

    /** A server that dies on TCP (its kernel sends FIN, without END) is a broken connection, as on the channels. */
    @Test
    void aServerThatEndsItsTcpWithoutEndIsAResetNotAnEndOfStream() throws Exception {
        assertReadFails("connection reset");
    }

    @Test
    void aServerThatClosesInOrderIsAnEndOfStream() throws Exception {
        assertEquals(-1, readAfterAServerThatSends(TcpFirstChannel.END));
    }

    /** Any int may come as a header, the one a reader uses internally for "not there" as well. */
    @Test
    void aFrameOfAnUnknownTypeFailsTheRead() throws Exception {
        assertReadFails("sent a frame of type " + Integer.MIN_VALUE, Integer.MIN_VALUE);
        assertReadFails("sent a frame of type -4", -4);
    }

    @Test
    void aControlFrameTooLongFailsTheRead() throws Exception {
        assertReadFails("sent a control frame of " + (TcpFirstChannel.MAX_CONTROL + 1) + " bytes",
                TcpFirstChannel.CONTROL, TcpFirstChannel.MAX_CONTROL + 1);
    }

    /** Ended in the middle of a control frame, as in the middle of a header: broken, not ended. */
    @Test
    void aServerThatEndsItsTcpInsideAControlFrameIsAReset() throws Exception {
        assertReadFails("connection reset", TcpFirstChannel.CONTROL, 100);
    }

    private void assertReadFails(String message, int... after) {
        SocketException e = assertThrows(SocketException.class, () -> readAfterAServerThatSends(after));
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    /**
     * Plays a TCP-first server by hand: reads the client's start, answers, sends a data frame of
     * 3 bytes, then the ints {@code after} (an END, a header...) and its FIN; returns what the
     * client's read after the 3 bytes gives.
     */
    private int readAfterAServerThatSends(int... after) throws Exception {
        upgradingAfter(60_000);
        try (ServerSocket plain = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                try (Socket s = plain.accept()) {
                    new DataInputStream(s.getInputStream()).readFully(new byte[BootstrapProtocol.START_BYTES + 4]);
                    ByteBuffer said = ByteBuffer.allocate(15 + 4 * after.length).putInt(BootstrapProtocol.MAGIC)
                            .putInt(BootstrapProtocol.VERSION).putInt(3).put("abc".getBytes());
                    for (int value : after) {
                        said.putInt(value);
                    }
                    s.getOutputStream().write(said.array(), 0, said.position());
                    s.shutdownOutput();
                    s.getInputStream().read(); // the client's end
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            try (AldeiaSocket client = new AldeiaSocket(environment)) {
                client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), plain.getLocalPort()), 5000);
                InputStream in = client.getInputStream();
                assertArrayEquals("abc".getBytes(), in.readNBytes(3));
                return in.read();
            } finally {
                server.get(10, TimeUnit.SECONDS);
            }
        }
    }
}
