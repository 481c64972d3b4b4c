package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.AldeiaSocket;
import org.aldeia.microvapi.PeerMain.Command;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client side of the end-to-end stream scenarios, each on its own connection to a
 * {@link PeerMain} server at {@code host}:{@code port}: {@link TwoJvmStreams} runs them against a child
 * JVM in dynamic DECK mode (shared memory or tcp), {@link StaticStreamMain} on node 1 of a static DECK run against
 * node 0, {@link RemoteStreamsMain} in one emulated host against the other. A scenario returns
 * only if the stream was exactly what was sent; otherwise it throws an assertion error or an
 * IOException saying what differed.
 */
final class StreamScenarios {

    private static final Logger LOG = LoggerFactory.getLogger(StreamScenarios.class);

    /** One scenario, as {@link #runEach} runs it. */
    private interface Scenario {
        void run() throws Exception;
    }

    private final InetAddress host;
    private final int port;

    /** Scenarios against a server on this host. */
    StreamScenarios(int port) {
        this(InetAddress.getLoopbackAddress(), port);
    }

    StreamScenarios(InetAddress host, int port) {
        this.host = host;
        this.port = port;
    }

    /** The scenarios {@link #runEach} runs, in its order: its {@code OK} lines name them so. */
    static final List<String> NAMES = List.of("random writes to the peer", "random writes from the peer",
            "bulk SHA-256", "object graph", "close after flush", "close without flush", "available and skip");

    /**
     * Every scenario in turn, seeds from 21, random streams of {@code randomBytes} each way and a
     * timed one of {@code bulkBytes} to the peer; prints {@code OK <name> in <s> s} for each
     * (names: {@link #NAMES}), and a {@code THROUGHPUT} line for the timed one.
     */
    void runEach(PrintStream out, long randomBytes, long bulkBytes) throws Exception {
        List<Scenario> each = List.of(
                () -> randomWritesArriveIntactAtThePeer(21, randomBytes),
                () -> randomWritesFromThePeerArriveIntact(22, randomBytes),
                () -> out.printf("THROUGHPUT %d MiB to the peer with SHA-256: %.1f MB/s%n",
                        bulkBytes >> 20, bulkSha256MegabytesPerSecond(23, bulkBytes)),
                () -> objectGraphWithCyclesComesBackEqual(24),
                () -> closeDeliversEveryByteThenEndOfStream(true, 25, (3 << 20) + 7),
                () -> closeDeliversEveryByteThenEndOfStream(false, 26, (3 << 20) + 7),
                () -> availableCountsReceivedBytesAndSkipSkipsExactly(27));
        for (int i = 0; i < each.size(); i++) {
            run(out, NAMES.get(i), each.get(i));
        }
    }

    private static void run(PrintStream out, String name, Scenario scenario) throws Exception {
        long start = System.nanoTime();
        scenario.run();
        out.printf("OK %s in %.2f s%n", name, (System.nanoTime() - start) / 1e9);
        out.flush();
    }

    /** Random writes from here, random reads there; the peer answers the SHA-256 it computed. */
    void randomWritesArriveIntactAtThePeer(long seed, long total) throws IOException {
        try (AldeiaSocket socket = PeerMain.request(host, port, Command.SINK, seed, total)) {
            PeerMain.sendToSink(socket, seed, total);
        }
    }

    /** Random writes there, random reads here, then the peer's close as end of stream. */
    void randomWritesFromThePeerArriveIntact(long seed, long total) throws IOException {
        try (AldeiaSocket socket = PeerMain.request(host, port, Command.SOURCE, seed, total)) {
            StreamCheck.receive(socket.getInputStream(), seed, total);
            assertEquals(-1, socket.getInputStream().read(), "the peer closed after its digest");
        }
    }

    /** As {@link #randomWritesArriveIntactAtThePeer}, timed. */
    double bulkSha256MegabytesPerSecond(long seed, long total) throws IOException {
        long start = System.nanoTime();
        randomWritesArriveIntactAtThePeer(seed, total);
        double seconds = (System.nanoTime() - start) / 1e9;
        double rate = total / 1e6 / seconds;
        LOG.info("{} MiB to the peer and its SHA-256 back in {} s: {} MB/s", total >> 20,
                String.format("%.2f", seconds), String.format("%.1f", rate));
        return rate;
    }

    /** A graph with cycles and an {@code int[1_000_000]} through Object streams and back. */
    void objectGraphWithCyclesComesBackEqual(long seed) throws IOException, ClassNotFoundException {
        RingGraph sent = RingGraph.build(seed);
        try (AldeiaSocket socket = PeerMain.request(host, port, Command.ECHO_OBJECT, 0, 0)) {
            ObjectOutputStream out = new ObjectOutputStream(socket.getOutputStream());
            out.writeObject(sent);
            out.flush();
            RingGraph echoed = (RingGraph) new ObjectInputStream(socket.getInputStream()).readObject();
            sent.assertCopiedAs(echoed);
        }
    }

    /** Close flushes: with or without an explicit flush there, every byte arrives, then -1, twice. */
    void closeDeliversEveryByteThenEndOfStream(boolean flushFirst, long seed, long total) throws IOException {
        Command command = flushFirst ? Command.SOURCE_FLUSHED : Command.SOURCE;
        try (AldeiaSocket socket = PeerMain.request(host, port, command, seed, total)) {
            InputStream in = socket.getInputStream();
            StreamCheck.receive(in, seed, total);
            assertEquals(-1, in.read(), "read() after the last byte of a closed peer");
            assertEquals(-1, in.read(new byte[10], 3, 5), "a second read at end of stream");
        }
    }

    /**
     * available() counts bytes held here; skip within them skips exactly and does not block; no
     * byte goes missing after the skip.
     */
    void availableCountsReceivedBytesAndSkipSkipsExactly(long seed) throws IOException, InterruptedException {
        long total = 256 * 1024;
        try (AldeiaSocket socket = PeerMain.request(host, port, Command.SOURCE_FLUSHED, seed, total)) {
            InputStream in = socket.getInputStream();
            awaitAvailable(in);
            int available = in.available();
            // the source's SHA-256 follows its bytes, and all of it may have arrived already
            assertTrue(available > 0 && available <= total + StreamCheck.DIGEST_LENGTH, "available() = " + available);

            long position = 0;
            long skipped = in.skip(1);
            assertEquals(1, skipped, "skip(1) with " + available + " bytes available");
            position += skipped;
            position += skipFully(in, 100_000); // crosses many MTU-sized blocks
            assertEquals(1 + 100_000, position);

            byte[] expected = new byte[5000];
            StreamCheck.content(seed, position, expected, 0, expected.length);
            assertArrayEquals(expected, in.readNBytes(expected.length), "the bytes right after the skipped ones");
            position += expected.length;
            // Read to the end: the peer's flush waits for delivery of everything it wrote.
            assertEquals(total - position + StreamCheck.DIGEST_LENGTH, in.readAllBytes().length,
                    "bytes after the checked ones, digest trailer included");
        }
    }

    /** Polls briefly: the data is on its way, available() only reports what already arrived. */
    private static void awaitAvailable(InputStream in) throws IOException, InterruptedException {
        while (in.available() == 0) {
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }

    /** skip may skip fewer bytes than asked (like java.net) but never more, and not 0 with data coming. */
    private static long skipFully(InputStream in, long n) throws IOException {
        long done = 0;
        while (done < n) {
            long step = in.skip(n - done);
            assertTrue(step > 0 && step <= n - done, "skip(" + (n - done) + ") returned " + step);
            done += step;
        }
        return done;
    }
}
