package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.AldeiaSocket;
import org.aldeia.microvapi.PeerMain.Command;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One byte stream between this JVM and a child JVM over Aldeia with no configuration file
 * (MicroVAPI over DECK dynamic/tcp), checked end to end by SHA-256. Every test opens its own
 * connection to the same child. Timeouts run the test in its own thread so that a read that
 * never returns fails the test instead of hanging the build.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class TwoJvmStreamTest {

    private static final Logger LOG = LoggerFactory.getLogger(TwoJvmStreamTest.class);
    private static final long MIB = 1 << 20;

    private static ChildJvm child;
    private static int port;

    @BeforeAll
    static void startChild() throws Exception {
        child = ChildJvm.start(List.of(), PeerMain.class);
        port = Integer.parseInt(child.awaitLine("PORT "));
    }

    @AfterAll
    static void stopChild() throws Exception {
        if (child != null) {
            child.close();
        }
    }

    @Test
    void randomWritesFromThisJvmArriveIntactInTheChild() throws Exception {
        try (AldeiaSocket socket = PeerMain.request(port, Command.SINK, 11, 32 * MIB)) {
            PeerMain.sendToSink(socket, 11, 32 * MIB);
        }
    }

    @Test
    void randomWritesFromTheChildArriveIntactHere() throws Exception {
        try (AldeiaSocket socket = PeerMain.request(port, Command.SOURCE, 12, 32 * MIB)) {
            StreamCheck.receive(socket.getInputStream(), 12, 32 * MIB);
            assertEquals(-1, socket.getInputStream().read(), "the child closed after its digest");
        }
    }

    @Test
    void sixtyFourMebibytesArriveWithTheSameSha256() throws Exception {
        long total = 64 * MIB;
        try (AldeiaSocket socket = PeerMain.request(port, Command.SINK, 13, total)) {
            long start = System.nanoTime();
            PeerMain.sendToSink(socket, 13, total);
            double seconds = (System.nanoTime() - start) / 1e9;
            LOG.info("64 MiB to the child and its SHA-256 back in {} s: {} MB/s",
                    String.format("%.2f", seconds), String.format("%.1f", total / 1e6 / seconds));
        }
    }

    @Test
    void objectGraphWithCyclesComesBackEqual() throws Exception {
        RingGraph sent = RingGraph.build(14);
        try (AldeiaSocket socket = PeerMain.request(port, Command.ECHO_OBJECT, 0, 0)) {
            ObjectOutputStream out = new ObjectOutputStream(socket.getOutputStream());
            out.writeObject(sent);
            out.flush();
            RingGraph echoed = (RingGraph) new ObjectInputStream(socket.getInputStream()).readObject();
            sent.assertCopiedAs(echoed);
        }
    }

    /** Close flushes: with or without an explicit flush, every byte arrives, then -1, twice. */
    @ParameterizedTest(name = "flush before close: {0}")
    @ValueSource(booleans = {true, false})
    void closeDeliversEveryByteThenEndOfStream(boolean flushFirst) throws Exception {
        Command command = flushFirst ? Command.SOURCE_FLUSHED : Command.SOURCE;
        try (AldeiaSocket socket = PeerMain.request(port, command, 15, 3 * MIB + 7)) {
            InputStream in = socket.getInputStream();
            StreamCheck.receive(in, 15, 3 * MIB + 7);
            assertEquals(-1, in.read(), "read() after the last byte of a closed peer");
            assertEquals(-1, in.read(new byte[10], 3, 5), "a second read at end of stream");
        }
    }

    @Test
    void availableCountsReceivedBytesAndSkipSkipsExactly() throws Exception {
        long total = 256 * 1024;
        try (AldeiaSocket socket = PeerMain.request(port, Command.SOURCE_FLUSHED, 16, total)) {
            InputStream in = socket.getInputStream();
            awaitAvailable(in);
            int available = in.available();
            assertTrue(available > 0 && available <= total, "available() = " + available);

            long position = 0;
            // Within what is held locally, skip must not block and must skip exactly what it says.
            long skipped = in.skip(1);
            assertEquals(1, skipped, "skip(1) with " + available + " bytes available");
            position += skipped;
            position += skipFully(in, 100_000); // crosses many 1024-byte blocks
            assertEquals(1 + 100_000, position);

            byte[] expected = new byte[5000];
            StreamCheck.content(16, position, expected, 0, expected.length);
            assertArrayEquals(expected, in.readNBytes(expected.length), "the bytes right after the skipped ones");
        }
    }

    /** Polls briefly: the data is on its way, available() only reports what already arrived. */
    private static void awaitAvailable(InputStream in) throws Exception {
        while (in.available() == 0) {
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }

    /** skip may skip fewer bytes than asked (like java.net) but never more, and not 0 with data coming. */
    private static long skipFully(InputStream in, long n) throws Exception {
        long done = 0;
        while (done < n) {
            long step = in.skip(n - done);
            assertTrue(step > 0 && step <= n - done, "skip(" + (n - done) + ") returned " + step);
            done += step;
        }
        return done;
    }
}
