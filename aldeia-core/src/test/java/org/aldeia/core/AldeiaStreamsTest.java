package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.TestEnvironments.Pair;
import org.aldeia.core.memory.InMemoryTransportProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(60)
class AldeiaStreamsTest extends InMemoryEnvironmentTest {


    /**
     * Writes {@code total} random bytes in random-sized writes, flushes and shuts the output
     * down (the socket stays open for the other direction); returns their digest.
     */
    private static CompletableFuture<byte[]> writeRandomly(AldeiaSocket socket, long seed, int total) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                OutputStream out = socket.getOutputStream();
                Random random = new Random(seed);
                MessageDigest digest = MessageDigest.getInstance("SHA-256");
                for (int sent = 0; sent < total; ) {
                    byte[] chunk = new byte[Math.min(total - sent, random.nextInt(20_000))];
                    random.nextBytes(chunk);
                    if (chunk.length == 1 && random.nextBoolean()) {
                        out.write(chunk[0]);
                    } else {
                        out.write(chunk);
                    }
                    digest.update(chunk);
                    sent += chunk.length;
                }
                out.flush();
                socket.shutdownOutput();
                return digest.digest();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** Reads until end of stream in random-sized reads; returns the digest and the length. */
    private static byte[] readRandomly(AldeiaSocket socket, long seed, long[] length) throws Exception {
        InputStream in = socket.getInputStream();
        Random random = new Random(seed);
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        byte[] buffer = new byte[30_000];
        while (true) {
            int want = random.nextInt(buffer.length);
            int n = want == 0 ? read1(in, buffer) : in.read(buffer, 0, want);
            if (n < 0) {
                return digest.digest();
            }
            digest.update(buffer, 0, n);
            length[0] += n;
        }
    }

    private static int read1(InputStream in, byte[] buffer) throws IOException {
        int b = in.read();
        if (b >= 0) {
            buffer[0] = (byte) b;
        }
        return b < 0 ? -1 : 1;
    }

    @Test
    void randomWritesAndReadsArriveCompleteAndInOrder() throws Exception {
        try (Pair pair = TestEnvironments.connect(environment)) {
            int total = 3_000_000;
            CompletableFuture<byte[]> sent = writeRandomly(pair.client(), 42, total);
            long[] length = {0};
            byte[] received = readRandomly(pair.server(), 7, length);
            assertEquals(total, length[0]);
            assertArrayEquals(sent.get(30, TimeUnit.SECONDS), received);
        }
    }

    @Test
    void bothDirectionsAtOnce() throws Exception {
        try (Pair pair = TestEnvironments.connect(environment)) {
            CompletableFuture<byte[]> up = writeRandomly(pair.client(), 1, 500_000);
            CompletableFuture<byte[]> down = writeRandomly(pair.server(), 2, 700_000);
            long[] upLength = {0};
            long[] downLength = {0};
            CompletableFuture<byte[]> upReceived = CompletableFuture.supplyAsync(() -> {
                try {
                    return readRandomly(pair.server(), 3, upLength);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertArrayEquals(down.get(30, TimeUnit.SECONDS), readRandomly(pair.client(), 4, downLength));
            assertArrayEquals(up.get(30, TimeUnit.SECONDS), upReceived.get(30, TimeUnit.SECONDS));
            assertEquals(500_000, upLength[0]);
            assertEquals(700_000, downLength[0]);
        }
    }

    @Test
    void writeFlushCloseGivesTheReaderEveryByteThenEndOfStream() throws Exception {
        try (Pair pair = TestEnvironments.connect(environment)) {
            byte[] data = new byte[10_000];
            new Random(5).nextBytes(data);
            OutputStream out = pair.client().getOutputStream();
            out.write(data);
            out.flush();
            out.close();
            assertTrue(pair.client().isClosed(), "closing the stream closes the socket, as in java.net");
            InputStream in = pair.server().getInputStream();
            assertArrayEquals(data, in.readNBytes(20_000));
            assertEquals(-1, in.read());
            assertEquals(-1, in.read(new byte[10], 0, 10));
        }
    }

    @Test
    void closeWithoutFlushStillDeliversEverything() throws Exception {
        try (Pair pair = TestEnvironments.connect(environment)) {
            byte[] data = new byte[100_000];
            new Random(6).nextBytes(data);
            CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
                try {
                    return pair.server().getInputStream().readAllBytes();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            pair.client().getOutputStream().write(data);
            pair.client().close();
            assertArrayEquals(data, received.get(30, TimeUnit.SECONDS));
        }
    }

    static final class Node implements Serializable {
        private static final long serialVersionUID = 1L;
        final String name;
        final List<Node> links = new ArrayList<>();
        int[] payload;

        Node(String name) {
            this.name = name;
        }
    }

    @Test
    void objectStreamsCarryAGraphWithCyclesAndALargeArray() throws Exception {
        try (Pair pair = TestEnvironments.connect(environment)) {
            Node a = new Node("a");
            Node b = new Node("b");
            a.links.add(b);
            b.links.add(a);
            a.links.add(a);
            b.payload = new int[100_000];
            for (int i = 0; i < b.payload.length; i++) {
                b.payload[i] = i * 31 + 7;
            }
            CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                try {
                    ObjectOutputStream out = new ObjectOutputStream(pair.client().getOutputStream());
                    out.writeObject(a);
                    out.flush();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            ObjectInputStream in = new ObjectInputStream(pair.server().getInputStream());
            Node copy = (Node) in.readObject();
            sent.get(30, TimeUnit.SECONDS);
            Node copyOfB = copy.links.get(0);
            assertEquals("a", copy.name);
            assertEquals("b", copyOfB.name);
            assertSame(copy, copyOfB.links.get(0));
            assertSame(copy, copy.links.get(1));
            assertArrayEquals(b.payload, copyOfB.payload);
        }
    }

    @Test
    void availableReportsReceivedBytesAndSkipDiscards() throws Exception {
        try (Pair pair = TestEnvironments.connect(environment)) {
            OutputStream out = pair.client().getOutputStream();
            byte[] data = new byte[3000];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) i;
            }
            out.write(data);
            out.flush();
            InputStream in = pair.server().getInputStream();
            assertEquals(3000, in.available());
            assertEquals(1000, in.skip(1000));
            assertEquals(2000, in.available());
            assertEquals((byte) 1000, (byte) in.read());
            assertEquals(0, in.skip(0));
        }
    }

    @Test
    void boundsAreCheckedLikeOutputStreamAndInputStream() throws Exception {
        try (Pair pair = TestEnvironments.connect(environment)) {
            OutputStream out = pair.client().getOutputStream();
            InputStream in = pair.server().getInputStream();
            assertThrows(IndexOutOfBoundsException.class, () -> out.write(new byte[4], 3, 2));
            assertThrows(IndexOutOfBoundsException.class, () -> out.write(new byte[4], -1, 1));
            assertThrows(NullPointerException.class, () -> out.write(null, 0, 1));
            assertThrows(IndexOutOfBoundsException.class, () -> in.read(new byte[4], 2, 3));
            assertEquals(0, in.read(new byte[4], 4, 0));
        }
    }

    @Test
    void soTimeoutMakesReadTimeOutWithoutLosingLaterData() throws Exception {
        try (Pair pair = TestEnvironments.connect(environment)) {
            pair.server().setSoTimeout(200);
            DataInputStream in = new DataInputStream(pair.server().getInputStream());
            long start = System.nanoTime();
            assertThrows(SocketTimeoutException.class, in::readInt);
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(150));

            byte[] data = new byte[5000];
            new Random(8).nextBytes(data);
            pair.client().getOutputStream().write(data);
            pair.client().getOutputStream().flush();
            byte[] received = new byte[data.length];
            in.readFully(received);
            assertArrayEquals(data, received);

            pair.client().close();
            assertEquals(-1, in.read());
        }
    }

    @Test
    void writesAfterCloseOrShutdownFail() throws Exception {
        try (Pair pair = TestEnvironments.connect(environment)) {
            OutputStream out = pair.client().getOutputStream();
            InputStream in = pair.client().getInputStream();
            pair.client().shutdownOutput();
            assertTrue(pair.client().isOutputShutdown());
            assertEquals(-1, pair.server().getInputStream().read(), "the peer sees end of stream");
            assertThrows(SocketException.class, () -> out.write(1));
            assertThrows(SocketException.class, pair.client()::getOutputStream);
            out.flush(); // nothing left to deliver: returns, as java.net's flush does

            // half-close: the other direction still works
            pair.server().getOutputStream().write(new byte[] {9, 8});
            pair.server().getOutputStream().flush();
            assertEquals(9, in.read());

            pair.client().shutdownInput();
            assertEquals(-1, in.read(), "reads after shutdownInput return end of stream");

            pair.client().close();
            pair.client().close(); // idempotent
            assertThrows(SocketException.class, () -> out.write(new byte[3]));
            assertThrows(SocketException.class, in::read);
            assertThrows(SocketException.class, pair.client()::getInputStream);
        }
    }

    /** With SO_TIMEOUT the read waits on a helper thread's read: its failure must surface the same way. */
    @ParameterizedTest(name = "SO_TIMEOUT {0}")
    @ValueSource(ints = {0, 30_000})
    void closeWakesABlockedReaderWithSocketException(int soTimeout) throws Exception {
        try (Pair pair = TestEnvironments.connect(environment)) {
            pair.server().setSoTimeout(soTimeout);
            InputStream in = pair.server().getInputStream();
            CompletableFuture<Object> read = CompletableFuture.supplyAsync(() -> {
                try {
                    return in.read();
                } catch (IOException e) {
                    return e;
                }
            });
            Thread.sleep(100);
            pair.server().close();
            Object outcome = read.get(10, TimeUnit.SECONDS);
            assertTrue(outcome instanceof SocketException && "Socket closed".equals(((SocketException) outcome).getMessage()),
                    "read ended with " + outcome);
        }
    }

    @Test
    void closedSocketsReleaseTheirEndpoints() throws Exception {
        int before = InMemoryTransportProvider.openEndpoints();
        Pair pair = TestEnvironments.connect(environment);
        assertEquals(before + 2, InMemoryTransportProvider.openEndpoints());
        pair.close();
        TestEnvironments.awaitOpenEndpoints(before);
    }

    @Test
    void aSocketNeverClosedIsFlushedAndClosedByItsCleanUp() throws Exception {
        AldeiaSocket server = connectAndAbandonClient(4321);
        CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
            try {
                return server.getInputStream().readAllBytes();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!received.isDone() && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(50);
        }
        assertEquals(4321, received.get(1, TimeUnit.SECONDS).length);
        server.close();
    }

    /** Returns the server side; the client wrote without flush or close and is dropped. */
    private AldeiaSocket connectAndAbandonClient(int bytes) throws Exception {
        Pair pair = TestEnvironments.connect(environment);
        pair.client().getOutputStream().write(new byte[bytes]);
        return pair.server();
    }
}
