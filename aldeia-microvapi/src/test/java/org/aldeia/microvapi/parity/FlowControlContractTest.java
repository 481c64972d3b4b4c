package org.aldeia.microvapi.parity;

import static org.aldeia.microvapi.parity.FarEnd.Scenario.ECHO;
import static org.aldeia.microvapi.parity.FarEnd.Scenario.STALL;
import static org.aldeia.microvapi.parity.FarEnd.Scenario.WRITE_THEN_READ;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.microvapi.MovedOffTcp;
import org.aldeia.microvapi.TestLoopback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Buffering and flow control as TCP's (issue 10, item 1), checked against the JDK's sockets and
 * every Aldeia kind of this run, with the far end in another JVM ({@link FarEnd}):
 * <ul>
 * <li>a program that writes a whole message, flushes, and only then reads the echo completes
 * wherever loopback TCP does: no post waits for the peer's application below the capacity;
 * <li>so do two ends that both write a whole message before either reads (a large write is
 * posted in portions from the writer's own thread: each end's must go in while the other's
 * application is inside a write, not a read);
 * <li>a writer whose peer reads nothing blocks, after at least as many bytes as loopback TCP
 * absorbs with the JDK's defaults (measured here, in this run) and no more than the
 * connection's bound; it resumes when the peer reads, and every byte arrives.
 * </ul>
 */
@Timeout(value = 60, threadMode = ThreadMode.SEPARATE_THREAD)
class FlowControlContractTest {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FlowControlContractTest.class);

    private static final InetAddress LOOPBACK = TestLoopback.address();
    private static final int CHUNK = 64 * 1024;
    /**
     * The writer counts as blocked once its byte count stood still this long. The fabric route
     * opens its window beyond the posted receives from its keeper thread, which looks every
     * 250 ms: a writer to a silent reader may pause for two of its looks before it goes on (at
     * 600 ms it was taken for blocked at 1 MiB one run in four).
     */
    private static final long STALL_MILLIS = 1500;
    /**
     * What an Aldeia connection holds at most beyond its send ring and its receive window with
     * the default configuration: the posted receive buffers (receive_buffers of at most 64 KiB)
     * and one coalesced message in flight.
     */
    private static final long ALDEIA_SLACK =
            (long) AldeiaConfiguration.defaults().receiveBuffers() * 65536 + 2 * 65536;

    /** Tells the writer thread to stop after the write it is in. */
    private static final java.util.concurrent.atomic.AtomicBoolean STOP = new java.util.concurrent.atomic.AtomicBoolean();
    private static final FarEnds FAR_ENDS = new FarEnds();
    private static long loopbackTcpAbsorbs;

    static java.util.stream.Stream<SocketKind> kinds() {
        return SocketContractTest.kinds();
    }

    @BeforeAll
    static void measureLoopbackTcp() throws Exception {
        TestLoopback.assumeUsable(LOOPBACK);
        try (ServerSocket server = new ServerSocket(0, 1, LOOPBACK);
                Socket writer = new Socket(LOOPBACK, server.getLocalPort());
                Socket silent = server.accept()) {
            AtomicLong written = new AtomicLong();
            loopbackTcpAbsorbs = waitUntilBlocked(startWriter(writer, written, Long.MAX_VALUE), written, Long.MAX_VALUE);
        }
    }

    @AfterAll
    static void stopFarEnds() throws InterruptedException {
        FAR_ENDS.stopAll();
    }

    private static FarEndProcess farEnd(SocketKind kind) throws IOException {
        return FAR_ENDS.of(kind);
    }

    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> kindsAndSizes() {
        return kinds().flatMap(kind -> java.util.stream.Stream.of(100_000, 1_000_000, 4_000_000)
                .map(size -> org.junit.jupiter.params.provider.Arguments.of(kind, size)));
    }

    @ParameterizedTest(name = "{0}, {1} bytes")
    @MethodSource("kindsAndSizes")
    void aWholeWriteFlushedBeforeReadingTheEchoCompletes(SocketKind kind, int size) throws Exception {
        byte[] sent = new byte[size];
        new Random(size).nextBytes(sent);
        try (FarEndProcess.Request echo = farEnd(kind).listen(ECHO);
                Socket socket = kind.connectedSocket(LOOPBACK, echo.port())) {
            OutputStream out = socket.getOutputStream();
            out.write(sent);
            out.flush();
            byte[] got = socket.getInputStream().readNBytes(size);
            assertArrayEquals(sent, got);
            socket.shutdownOutput();
            assertEquals("echoed " + size, echo.outcome());
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void bothEndsWriteAMebibyteBeforeEitherReads(SocketKind kind) throws Exception {
        byte[] mine = FarEnd.crossing();
        try (FarEndProcess.Request crossing = farEnd(kind).listen(WRITE_THEN_READ);
                Socket socket = kind.connectedSocket(LOOPBACK, crossing.port())) {
            OutputStream out = socket.getOutputStream();
            out.write(mine);
            out.flush();
            assertArrayEquals(mine, socket.getInputStream().readNBytes(FarEnd.CROSSING_BYTES));
            assertEquals("crossed " + FarEnd.CROSSING_BYTES, crossing.outcome());
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aWriterToASilentReaderBlocksAfterTcpsCapacityWithinItsBoundAndResumes(SocketKind kind) throws Exception {
        try (FarEndProcess.Request paused = farEnd(kind).listen(STALL);
                Socket socket = kind.connectedSocket(LOOPBACK, paused.port())) {
            AtomicLong written = new AtomicLong();
            boolean aldeia = kind.connectsOverAldeia();   // else it is TCP: blocking and resuming is checked
            long bound = !aldeia ? Long.MAX_VALUE
                    : (long) socket.getSendBufferSize() + socket.getReceiveBufferSize() + ALDEIA_SLACK;
            Thread writer = startWriter(socket, written, bound);
            long absorbed = waitUntilBlocked(writer, written, bound);
            LOG.info("{}: the writer blocked after {} bytes (loopback TCP: {}, bound {})", kind, absorbed,
                    loopbackTcpAbsorbs, bound);
            if (aldeia) {
                // where connections start on TCP (upgrade_after > 0), this one stays there (the far
                // end never reads the upgrade's messages), and each write's frame header (4 bytes)
                // takes room: TCP's capacity holds one write of CHUNK bytes fewer
                long framing = MovedOffTcp.connectionsStartOnTcp() ? CHUNK : 0;
                assertTrue(absorbed >= loopbackTcpAbsorbs - framing, kind + " absorbed " + absorbed
                        + " bytes before its writer blocked, loopback TCP " + loopbackTcpAbsorbs);
                assertTrue(absorbed <= bound, kind + " absorbed " + absorbed + " bytes, more than its bound " + bound);
            }
            // once the far end reads, the blocked writer finishes its write and stops; 2 MiB more
            // go through, then end of stream
            paused.release();
            writer.join(10_000);
            assertTrue(!writer.isAlive(), "the blocked writer did not resume when the far end read");
            OutputStream out = socket.getOutputStream();
            byte[] chunk = new byte[CHUNK];
            for (int i = 0; i < 32; i++) {
                out.write(chunk);
                written.addAndGet(CHUNK);
            }
            socket.shutdownOutput();
            assertEquals("read " + written.get() + " then end of stream", paused.outcome());
        }
    }

    /**
     * Starts a thread that writes 64 KiB chunks, adding each to {@code written}, until the count
     * passes {@code limit} or {@link #STOP} is set between two writes (a blocked write finishes
     * first: the count stays exact).
     */
    private static Thread startWriter(Socket socket, AtomicLong written, long limit) throws IOException {
        OutputStream out = socket.getOutputStream();
        STOP.set(false);
        Thread writer = new Thread(() -> {
            byte[] chunk = new byte[CHUNK];
            try {
                while (written.get() <= limit && !STOP.get()) {
                    out.write(chunk);
                    written.addAndGet(CHUNK);
                }
            } catch (IOException e) {
                written.set(-1);   // the far end never fails: a failure shows as a negative count
            }
        }, "flow-control-writer");
        writer.setDaemon(true);
        writer.start();
        return writer;
    }

    /**
     * Waits until the writer's count stands still for {@link #STALL_MILLIS} (it blocked) or
     * passes {@code limit}; returns the count then, and tells the writer to stop after the
     * write it is in.
     */
    private static long waitUntilBlocked(Thread writer, AtomicLong written, long limit) throws Exception {
        long last = -1;
        long stillSince = System.nanoTime();
        while (true) {
            Thread.sleep(50);
            long now = written.get();
            assertTrue(now >= 0, "the writer failed");
            if (now > limit || !writer.isAlive()) {
                STOP.set(true);
                return now;
            }
            if (now != last) {
                last = now;
                stillSince = System.nanoTime();
            } else if (System.nanoTime() - stillSince > TimeUnit.MILLISECONDS.toNanos(STALL_MILLIS)) {
                STOP.set(true);
                return now;
            }
        }
    }
}
