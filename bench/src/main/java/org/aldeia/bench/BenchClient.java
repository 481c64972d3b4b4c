package org.aldeia.bench;

import static org.aldeia.bench.BenchProtocol.HEADER_BYTES;

import java.io.IOException;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

import org.HdrHistogram.Histogram;

/**
 * The measuring side: a ping-pong per message size (each round trip timed into a histogram),
 * the CPU time of both JVMs over the 64 B ping-pong, a one-way stream per write size
 * acknowledged by the server, the asynchronous write per message size, then the connection
 * set-up, application and RMI phases when the row has them. Every echo
 * is checked, so a transport that loses, corrupts or replays data fails instead of reporting a
 * fast number.
 */
final class BenchClient {

    /** The ping-pong sizes of the table: 1 B, 64 B, 1 KiB, 10 KiB, 64 KiB, 1 MiB. */
    static final List<Integer> SIZES = List.of(1, 64, 1024, 10 * 1024, 64 * 1024, 1024 * 1024);
    static final int LARGEST_SIZE = 1024 * 1024;
    /** Bytes per write of the streaming tests: 64 KiB and 1 MiB. */
    static final List<Integer> STREAM_CHUNKS = List.of(64 * 1024, 1024 * 1024);
    /** Timed bursts per stream cell (odd: the median is one of them). */
    static final int STREAM_BURSTS = 5;
    /**
     * Message sizes of the asynchronous-write phase: the thesis's 10 000 B (Fig. 5.8: 91 µs for
     * write() to return on DECK/TCP against about 1000 µs until the data was across) and 1 MB.
     */
    static final List<Integer> ASYNC_SIZES = List.of(10_000, 1_000_000);
    /** The largest payload the client sends: what the server's receive frame must hold. */
    static final int LARGEST_MESSAGE = Math.max(LARGEST_SIZE, Math.max(Collections.max(STREAM_CHUNKS),
            Collections.max(ASYNC_SIZES)));
    /** The ping-pong whose CPU time (both JVMs) is measured: the small message a request/response sends. */
    static final int CPU_SIZE = 64;
    /**
     * Echo bytes compared besides the first and last: every STRIDE-th. The two alternating
     * frames differ in every payload byte, so a stale echo already fails at byte 0; the samples
     * catch corruption without a full compare of 1 MiB inside the timed loop.
     */
    private static final int STRIDE = 509;

    private final MessageLink link;
    private final Pacing pacing;
    private final SocketPhases phases;

    BenchClient(MessageLink link, Pacing pacing, SocketPhases phases) {
        this.link = link;
        this.pacing = pacing;
        this.phases = phases;
    }

    /** Runs every measurement, reporting each as soon as it is done, then ends the session. */
    void run(List<Integer> sizes, Consumer<Measurement> report) throws IOException {
        sweep(sizes);
        for (int size : sizes) {
            pingPong(size, report);
        }
        for (int chunk : STREAM_CHUNKS) {
            report.accept(stream(chunk));
        }
        for (int size : ASYNC_SIZES) {
            asyncWrite(size).forEach(report);
        }
        // Before the application and RMI phases: after them a fabric-tcp connection took 55-67 ms
        // against 6.3 before (./aldeia bench, pinned, 2026-11-29), something they leave behind.
        if (phases.setup().isPresent()) {
            phases.setup().get().measure(link, pacing.setupWarmup(), pacing.setupConnections(), pacing.setupSteadyAfter(),
                    pacing.setupSteadyBudgetSeconds(), report);
        }
        if (phases.application().isPresent()) {
            report.accept(phases.application().get().measure(link, pacing.applicationWarmup(), pacing.applicationCalls()));
        }
        if (phases.rmi().isPresent()) {
            report.accept(phases.rmi().get().measure(link, pacing.rmiWarmup(), pacing.rmiCalls()));
        }
        byte[] end = new byte[HEADER_BYTES];
        link.send(end, BenchProtocol.END, 0);
        link.flush();
    }

    /**
     * Runs, untimed, turns of minIterations round trips of every size and a burst of
     * minIterations writes of every stream size, for {@code pacing.sweepSeconds()} (whole turns,
     * at least one; none when it is 0). A cell's own warm-up is too short for the JIT when a
     * core runs a JVM alone (pinned): the first cell of a new size deoptimizes code compiled for
     * the sizes before it, and the C2 compiler thread then takes the core from the round trips
     * for a time slice (about 1 ms) again and again. A ping-pong of 64 KiB after 20 000 of
     * 10 KiB (Aldeia over DECK tcp, pinned, 2026-11-29) had 6-60 round trips above 1 ms in each
     * thousand of its first 6000, 0-3 per thousand after them, and at most 10 with C1 alone.
     * Sweeping all sizes first lets the compiled code cover them all.
     */
    private void sweep(List<Integer> sizes) throws IOException {
        if (pacing.sweepSeconds() <= 0) {
            return;
        }
        List<byte[][]> frames = sizes.stream().map(BenchClient::alternatingFrames).toList();
        byte[] echo = new byte[HEADER_BYTES + Collections.max(sizes)];
        List<byte[]> chunks = STREAM_CHUNKS.stream().map(bytes -> new byte[HEADER_BYTES + bytes]).toList();
        long end = System.nanoTime() + (long) (pacing.sweepSeconds() * 1e9);
        do {
            for (int i = 0; i < sizes.size(); i++) {
                for (int k = 0; k < pacing.minIterations(); k++) {
                    roundTrip(frames.get(i)[k & 1], echo, sizes.get(i));
                }
            }
            for (int i = 0; i < chunks.size(); i++) {
                streamBurst(chunks.get(i), STREAM_CHUNKS.get(i), pacing.minIterations());
            }
        } while (System.nanoTime() < end);
    }

    /**
     * Reports the ping-pong of {@code size}; for {@link #CPU_SIZE} also the CPU time both JVMs
     * spent in its timed loop (the server's asked for before and after, outside the loop).
     */
    void pingPong(int size, Consumer<Measurement> report) throws IOException {
        byte[][] frames = alternatingFrames(size);
        byte[] echo = new byte[HEADER_BYTES + size];
        long count = warmUp(round -> roundTrip(frames[(int) (round & 1)], echo, size));
        boolean cpu = size == CPU_SIZE;
        long cpuBefore = cpu ? serverCpuNanos() + ProcessCpu.nanos() : 0;
        Histogram roundTrips = new Histogram(3);
        long start = System.nanoTime();
        // One clock read per round trip: each ends where the next begins, so the recorded
        // round trips add up to the loop's time (recording costs some ns of the next one).
        long previous = start;
        for (long k = 0; k < count; k++) {
            roundTrip(frames[(int) (k & 1)], echo, size);
            long now = System.nanoTime();
            roundTrips.recordValue(now - previous);
            previous = now;
        }
        long total = previous - start;
        if (cpu) {
            long cpuNanos = ProcessCpu.nanos() + serverCpuNanos() - cpuBefore;
            report.accept(Measurement.total(Measurement.Metric.CPU, size, count, cpuNanos));
        }
        report.accept(Measurement.distribution(Measurement.Metric.LATENCY, size, total, roundTrips, true));
    }

    /** One unit of a timed loop (a round trip, a message); {@code index} counts from 0. */
    @FunctionalInterface
    private interface Unit {
        void run(long index) throws IOException;
    }

    /**
     * Runs {@code unit} untimed for the warm-up (at least minIterations times) and returns the
     * count of units that fills the cell's target time at the warm-up's pace.
     */
    private long warmUp(Unit unit) throws IOException {
        long warmupNanos = (long) (pacing.warmupSeconds() * 1e9);
        long start = System.nanoTime();
        long units = 0;
        long elapsed;
        do {
            unit.run(units);
            units++;
            elapsed = System.nanoTime() - start;
        } while (units < pacing.minIterations() || elapsed < warmupNanos);
        return pacing.count(pacing.targetSeconds(), (double) elapsed / units);
    }

    /**
     * The asynchronous write of one {@code size}-byte message at a time (thesis Fig. 5.8): the
     * time write() takes to return (WRITE_RETURN) and the time until the server's
     * acknowledgement of the whole message is back (WRITE_DELIVERED), both from the call of
     * write(). A transport whose write returns once the data is queued shows the first well
     * below the second; one whose write waits until the kernel took the data, close to it.
     * The flush between them is the thesis's "sync" point: the stream may hold nothing back.
     */
    List<Measurement> asyncWrite(int size) throws IOException {
        byte[] frame = new byte[HEADER_BYTES + size];
        new Random(size).nextBytes(frame);
        byte[] ack = new byte[HEADER_BYTES + 1];
        long[] times = new long[2];
        long count = warmUp(message -> timedWrite(frame, size, ack, times));
        Histogram returned = new Histogram(3);
        Histogram delivered = new Histogram(3);
        long returnedSum = 0;
        long deliveredSum = 0;
        for (long k = 0; k < count; k++) {
            timedWrite(frame, size, ack, times);
            returned.recordValue(times[0]);
            delivered.recordValue(times[1]);
            returnedSum += times[0];
            deliveredSum += times[1];
        }
        return List.of(Measurement.distribution(Measurement.Metric.WRITE_RETURN, size, returnedSum, returned, false),
                Measurement.distribution(Measurement.Metric.WRITE_DELIVERED, size, deliveredSum, delivered, false));
    }

    /** Sends one message; {@code times} gets the ns until write() returned and until the acknowledgement came. */
    private void timedWrite(byte[] frame, int size, byte[] ack, long[] times) throws IOException {
        long start = System.nanoTime();
        link.send(frame, BenchProtocol.WRITE_TIMED, size);
        long returned = System.nanoTime();
        link.flush();
        awaitAck(ack, "a " + size + "-byte message");
        times[0] = returned - start;
        times[1] = System.nanoTime() - start;
    }

    /** Receives the server's 1-byte acknowledgement of {@code what}. */
    private void awaitAck(byte[] ack, String what) throws IOException {
        int length = link.receive(ack);
        if (BenchProtocol.type(ack) != BenchProtocol.ACK || length != 1) {
            throw new IOException("expected the server's 1-byte acknowledgement of " + what + ", got a frame of type "
                    + BenchProtocol.type(ack) + " with " + length + " bytes");
        }
    }

    /** The server JVM's CPU time so far, asked over the link. */
    private long serverCpuNanos() throws IOException {
        byte[] frame = new byte[HEADER_BYTES + Long.BYTES];
        link.send(frame, BenchProtocol.CPU_QUERY, 0);
        link.flush();
        int length = link.receive(frame);
        if (BenchProtocol.type(frame) != BenchProtocol.CPU_TIME || length != Long.BYTES) {
            throw new IOException("expected the server's CPU time, got a frame of type " + BenchProtocol.type(frame)
                    + " with " + length + " bytes");
        }
        return BenchProtocol.getLong(frame, HEADER_BYTES);
    }

    /**
     * The stream's time as STREAM_BURSTS bursts of equal counts, the median one reported: on
     * this machine one burst of a second swung by a fifth from run to run (a slow phase, a
     * daemon's wake-up), which a ratio against the JDK's row inherited twice.
     */
    Measurement stream(int chunkBytes) throws IOException {
        byte[] chunk = new byte[HEADER_BYTES + chunkBytes];
        new Random(chunkBytes).nextBytes(chunk);
        long warmupNanos = (long) (pacing.warmupSeconds() * 1e9);
        long start = System.nanoTime();
        long chunks = 0;
        long elapsed;
        do {
            chunks += streamBurst(chunk, chunkBytes, pacing.minIterations());
            elapsed = System.nanoTime() - start;
        } while (elapsed < warmupNanos);
        long count = pacing.count(pacing.streamSeconds() / STREAM_BURSTS, (double) elapsed / chunks);
        long[] bursts = new long[STREAM_BURSTS];
        for (int b = 0; b < STREAM_BURSTS; b++) {
            start = System.nanoTime();
            streamBurst(chunk, chunkBytes, count);
            bursts[b] = System.nanoTime() - start;
        }
        Arrays.sort(bursts);
        return Measurement.total(Measurement.Metric.BANDWIDTH, chunkBytes, count, bursts[STREAM_BURSTS / 2]);
    }

    /** Sends {@code count} numbered chunks and waits for the server's acknowledgement of all of them. */
    private long streamBurst(byte[] chunk, int chunkBytes, long count) throws IOException {
        for (long k = 0; k < count; k++) {
            BenchProtocol.putLong(chunk, HEADER_BYTES, k);
            link.send(chunk, BenchProtocol.CHUNK, chunkBytes);
        }
        byte[] end = new byte[HEADER_BYTES + Long.BYTES];
        BenchProtocol.putLong(end, HEADER_BYTES, count);
        link.send(end, BenchProtocol.STREAM_END, Long.BYTES);
        link.flush();
        awaitAck(new byte[HEADER_BYTES + 1], count + " chunks");
        return count;
    }

    private void roundTrip(byte[] frame, byte[] echo, int size) throws IOException {
        link.send(frame, BenchProtocol.PING, size);
        link.flush();
        int length = link.receive(echo);
        if (BenchProtocol.type(echo) != BenchProtocol.PONG || length != size) {
            throw new IOException("expected the echo of a " + size + "-byte ping, got a frame of type "
                    + BenchProtocol.type(echo) + " with " + length + " bytes");
        }
        int differsAt = firstSampledDifference(frame, echo, size);
        if (differsAt >= 0) {
            throw new IOException("the echo of a " + size + "-byte ping differs from what was sent at payload byte "
                    + differsAt);
        }
    }

    /** The first sampled payload index where the two frames differ, or -1. */
    static int firstSampledDifference(byte[] sent, byte[] echo, int size) {
        for (int i = 0; i < size; i += STRIDE) {
            if (sent[HEADER_BYTES + i] != echo[HEADER_BYTES + i]) {
                return i;
            }
        }
        int last = size - 1;
        return size > 0 && sent[HEADER_BYTES + last] != echo[HEADER_BYTES + last] ? last : -1;
    }

    /** Two frames whose payloads differ in every byte, sent alternately (see {@link #STRIDE}). */
    private static byte[][] alternatingFrames(int size) {
        byte[] first = new byte[HEADER_BYTES + size];
        new Random(size).nextBytes(first);
        byte[] second = first.clone();
        for (int i = HEADER_BYTES; i < second.length; i++) {
            second[i] = (byte) ~second[i];
        }
        return new byte[][] {first, second};
    }
}
