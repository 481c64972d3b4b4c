package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.aldeia.bench.Measurement.Metric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The client and server of the JDK transports in one JVM, a few round trips each: no timing is asserted. */
@Timeout(60)
class LinkSmokeTest {

    /**
     * Three timed round trips per size, 3-chunk streams, 2 + 5 + 1 + 5 set-up connections, 4 + 9
     * application calls, 2 + 6 RMI calls, warm-up as short as possible.
     */
    private static final Pacing TINY = new Pacing(0, 0, 0, 3, 3, 0, 2, 5, 8, 4, 9, 2, 6, 100);
    private static final List<Integer> SIZES = List.of(1, 1024, 70_000, BenchClient.LARGEST_SIZE);

    private final ExecutorService serverThread = Executors.newSingleThreadExecutor();

    @TempDir
    Path dir;

    @AfterEach
    void stopServer() throws InterruptedException {
        serverThread.shutdownNow();
        assertTrue(serverThread.awaitTermination(10, TimeUnit.SECONDS), "the server thread did not end");
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"JDK_LOOPBACK", "JDK_UNIX"})
    void pingPongAndStreamRunAndEveryEchoIsAnswered(Transport transport) throws Exception {
        List<Measurement> results = new ArrayList<>();
        long echoed = session(transport, TINY, SIZES, results);
        // Warm-up (3) plus timed (3) round trips per size.
        assertEquals(6L * SIZES.size(), echoed);
        List<Measurement> latencies = results.stream().filter(m -> m.metric() == Metric.LATENCY).toList();
        assertEquals(SIZES, latencies.stream().map(Measurement::sizeBytes).toList());
        for (Measurement latency : latencies) {
            assertEquals(3, latency.count());
            assertTrue(latency.p50Nanos() > 0 && latency.p999Nanos() >= latency.p50Nanos(), latency.toString());
        }
        assertEquals(BenchClient.STREAM_CHUNKS, results.stream().filter(m -> m.metric() == Metric.BANDWIDTH)
                .map(Measurement::sizeBytes).toList());
        for (int size : BenchClient.ASYNC_SIZES) {
            Measurement returned = only(results, Metric.WRITE_RETURN, size);
            Measurement delivered = only(results, Metric.WRITE_DELIVERED, size);
            assertEquals(3, returned.count());
            assertEquals(3, delivered.count());
            // Each message's acknowledgement comes after its write() returned, so every quantile does too.
            assertTrue(returned.p50Nanos() > 0 && delivered.p50Nanos() >= returned.p50Nanos()
                    && delivered.p999Nanos() >= returned.p999Nanos(), returned + " / " + delivered);
        }
        // 64 B is not among these sizes: no CPU cell. Only the socket row has set-up, application and RMI phases.
        assertTrue(results.stream().noneMatch(m -> m.metric() == Metric.CPU));
        List<Metric> setup = results.stream().filter(m -> m.metric() == Metric.SETUP || m.metric() == Metric.SETUP_STEADY)
                .map(Measurement::metric).toList();
        assertEquals(transport == Transport.JDK_LOOPBACK ? List.of(Metric.SETUP, Metric.SETUP_STEADY) : List.of(), setup,
                results.toString());
        results.stream().filter(m -> setup.contains(m.metric())).forEach(s -> assertEquals(5, s.count()));
        List<Measurement> calls = results.stream().filter(m -> m.metric() == Metric.APPLICATION).toList();
        assertEquals(transport == Transport.JDK_LOOPBACK ? 1 : 0, calls.size(), results.toString());
        calls.forEach(c -> assertEquals(9, c.count(), "the timed calls of all connections"));
        List<Measurement> rmi = results.stream().filter(m -> m.metric() == Metric.RMI).toList();
        assertEquals(transport == Transport.JDK_LOOPBACK ? 1 : 0, rmi.size(), results.toString());
        rmi.forEach(c -> assertEquals(6, c.count()));
    }

    @Test
    void theSweepRunsWholeTurnsOfEverySizeBeforeTheCells() throws Exception {
        // A sweep of a nanosecond: one turn, which the first time check ends.
        Pacing sweeping = new Pacing(1e-9, 0, 0, 3, 3, 0, 2, 5, 8, 4, 9, 2, 6, 100);
        List<Measurement> results = new ArrayList<>();
        long echoed = session(Transport.JDK_UNIX, sweeping, SIZES, results);
        // The turn's 3 round trips per size, then each cell's 3 warm-up and 3 timed ones.
        assertEquals(9L * SIZES.size(), echoed);
        assertEquals(SIZES, results.stream().filter(m -> m.metric() == Metric.LATENCY).map(Measurement::sizeBytes)
                .toList());
    }

    @Test
    void aSetUpWhoseUntimedConnectionsWouldOutlastTheBudgetSkipsTheSteadyBlockAndTheSessionStillEnds()
            throws Exception {
        // 130 untimed connections (connection 128's byte is 0, not the last connection's 0x80),
        // 5 timed, then 50 untimed before the steady block, against a budget of a microsecond
        Pacing tight = new Pacing(0, 0, 0, 3, 3, 0, 130, 5, 185, 4, 9, 2, 6, 1e-6);
        List<Measurement> results = new ArrayList<>();
        assertEquals(6L, session(Transport.JDK_LOOPBACK, tight, List.of(1), results),
                "the server served the whole session and ended");
        List<Measurement> setup = results.stream()
                .filter(m -> m.metric() == Metric.SETUP || m.metric() == Metric.SETUP_STEADY).toList();
        assertEquals(List.of(Metric.SETUP), setup.stream().map(Measurement::metric).toList(), results.toString());
        assertEquals(5, setup.get(0).count());
    }

    /**
     * A whole bench session of {@code transport}, its server on {@link #serverThread}: the
     * client's measurements into {@code results}; returns the round trips the server echoed.
     */
    private long session(Transport transport, Pacing pacing, List<Integer> sizes, List<Measurement> results)
            throws Exception {
        Rendezvous rendezvous = new Rendezvous(dir.resolve("address"));
        Future<Long> echoed = serverThread.submit(() -> {
            try (MessageLink link = Links.server(transport, dir, rendezvous)) {
                return BenchServer.serve(link, SocketPhases.of(transport));
            }
        });
        try (MessageLink link = Links.client(transport, rendezvous)) {
            new BenchClient(link, pacing, SocketPhases.of(transport)).run(sizes, results::add);
        }
        return echoed.get(30, TimeUnit.SECONDS);
    }

    private static Measurement only(List<Measurement> results, Metric metric, int size) {
        List<Measurement> found = results.stream().filter(m -> m.metric() == metric && m.sizeBytes() == size).toList();
        assertEquals(1, found.size(), metric + " " + size + " in " + results);
        return found.get(0);
    }

    @Test
    void theCpuOfBothJvmsIsMeasuredOverThe64BytePingPong() throws Exception {
        Rendezvous rendezvous = new Rendezvous(dir.resolve("address"));
        serverThread.submit(() -> {
            try (MessageLink link = Links.server(Transport.JDK_LOOPBACK, dir, rendezvous)) {
                return BenchServer.serve(link, SocketPhases.NONE);
            }
        });
        List<Measurement> results = new ArrayList<>();
        try (MessageLink link = Links.client(Transport.JDK_LOOPBACK, rendezvous)) {
            BenchClient client = new BenchClient(link, TINY, SocketPhases.NONE);
            client.pingPong(BenchClient.CPU_SIZE, results::add);
            link.send(new byte[BenchProtocol.HEADER_BYTES], BenchProtocol.END, 0);
            link.flush();
        }
        assertEquals(List.of(Metric.CPU, Metric.LATENCY), results.stream().map(Measurement::metric).toList());
        assertEquals(3, results.get(0).count(), "CPU is per timed round trip");
    }

    @Test
    void aCorruptedEchoFailsTheClientInsteadOfBeingTimed() throws Exception {
        Rendezvous rendezvous = new Rendezvous(dir.resolve("address"));
        // A broken server: echoes every ping with its last payload byte flipped.
        serverThread.submit(() -> {
            try (MessageLink link = Links.server(Transport.JDK_LOOPBACK, dir, rendezvous)) {
                byte[] frame = new byte[BenchProtocol.HEADER_BYTES + 4096];
                int length = link.receive(frame);
                frame[BenchProtocol.HEADER_BYTES + length - 1] ^= 1;
                link.send(frame, BenchProtocol.PONG, length);
                link.flush();
                link.receive(frame); // until the client hangs up
            }
            return null;
        });
        try (MessageLink link = Links.client(Transport.JDK_LOOPBACK, rendezvous)) {
            IOException e = assertThrows(IOException.class,
                    () -> new BenchClient(link, TINY, SocketPhases.NONE).pingPong(1000, m -> { }));
            assertTrue(e.getMessage().contains("differs from what was sent at payload byte 999"), e.getMessage());
        }
    }

    @Test
    void aLostStreamChunkFailsTheServer() throws Exception {
        Rendezvous rendezvous = new Rendezvous(dir.resolve("address"));
        Future<Long> server = serverThread.submit(() -> {
            try (MessageLink link = Links.server(Transport.JDK_UNIX, dir, rendezvous)) {
                return BenchServer.serve(link, SocketPhases.NONE);
            }
        });
        try (MessageLink link = Links.client(Transport.JDK_UNIX, rendezvous)) {
            byte[] chunk = new byte[BenchProtocol.HEADER_BYTES + 64];
            BenchProtocol.putLong(chunk, BenchProtocol.HEADER_BYTES, 0);
            link.send(chunk, BenchProtocol.CHUNK, 64);
            BenchProtocol.putLong(chunk, BenchProtocol.HEADER_BYTES, 2); // chunk 1 "lost"
            link.send(chunk, BenchProtocol.CHUNK, 64);
            link.flush();
            Exception e = assertThrows(Exception.class, () -> server.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("stream chunk 1 expected, got chunk 2"), e.toString());
        }
    }

    @Test
    void sampledComparisonFindsADifferenceAtTheFirstOrLastByte() {
        byte[] sent = new byte[BenchProtocol.HEADER_BYTES + 2000];
        byte[] echo = sent.clone();
        assertEquals(-1, BenchClient.firstSampledDifference(sent, echo, 2000));
        echo[BenchProtocol.HEADER_BYTES + 1999] = 1;
        assertEquals(1999, BenchClient.firstSampledDifference(sent, echo, 2000));
        echo[BenchProtocol.HEADER_BYTES] = 1;
        assertEquals(0, BenchClient.firstSampledDifference(sent, echo, 2000));
        assertEquals(-1, BenchClient.firstSampledDifference(sent, echo, 0));
    }
}
