package org.aldeia.samples;

import static org.aldeia.samples.PingPongProtocol.END;
import static org.aldeia.samples.PingPongProtocol.HEADER_BYTES;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The measuring side of the ping-pong (thesis Fig. 5.2): for each size, round trips of one
 * frame, timed over {@code iterations} after {@code warmup} untimed ones, once a JIT warm-up has
 * run. Every echo is compared byte for byte with what was sent.
 */
final class PingPongClient {

    /** Round trips of one size per turn of the JIT warm-up. */
    static final int JIT_WARMUP_ROUND = 20;

    private final DataInputStream in;
    private final OutputStream out;

    PingPongClient(Socket socket) throws IOException {
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /**
     * Measures every size in order, then tells the server the session is over.
     *
     * @param jitWarmupMillis how long to run untimed round trips of every size in turn first, so
     *     that both JVMs have compiled the send and receive paths before anything is timed (0:
     *     none, the thesis's method, which on a JVM times interpreted code at the first sizes)
     */
    List<PingPongResult> run(List<Integer> sizes, int iterations, int warmup, int jitWarmupMillis)
            throws IOException {
        warmUpJit(sizes, warmup, jitWarmupMillis);
        List<PingPongResult> results = new ArrayList<>();
        for (int size : sizes) {
            results.add(measure(size, iterations, warmup));
        }
        byte[] end = new byte[HEADER_BYTES];
        PingPongProtocol.writeHeader(end, END);
        out.write(end);
        out.flush();
        return results;
    }

    /*
     * Through measure() itself, JIT_WARMUP_ROUND round trips at a time: warmed through a loop of
     * its own, the round trip was compiled, but measure()'s timed loop was new code when the sweep
     * began, interpreted and then compiled (on-stack replacement) while the first sizes were
     * timed; the sizes 4 to 8 of a sweep then took 2-4x their neighbours, whatever their order.
     * Its untimed loop runs in the warm-up too: compiled as never entered, it made the first
     * size of the sweep deoptimise measure() (0 B at 3.8x its neighbour).
     *
     * Every size in turn, not one: code trained on one size is compiled for it alone, and the
     * first message of another shape (several blocks, a copy above RegisteredRegion's JNI
     * threshold) deoptimises it and has it compiled again while that size is being timed. With
     * 1 KiB messages only, -XX:+PrintCompilation showed C2 code of the round trip and of the
     * channel "made not entrant" and recompiled a second into the sweep, and ./aldeia demo had
     * single sweep sizes at 3.9-5x their neighbours in 4 of 8 runs.
     */
    private void warmUpJit(List<Integer> sizes, int warmup, int millis) throws IOException {
        if (millis <= 0 || sizes.isEmpty()) {
            return;
        }
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (int k = 0; System.nanoTime() < end; k++) {
            measure(sizes.get(k % sizes.size()), JIT_WARMUP_ROUND, Math.min(warmup, JIT_WARMUP_ROUND));
        }
    }

    private PingPongResult measure(int size, int iterations, int warmup) throws IOException {
        byte[][] frames = alternatingFrames(size);
        byte[] echo = new byte[HEADER_BYTES + size];
        for (int k = 0; k < warmup; k++) {
            roundTrip(frames[k & 1], echo, k);
        }
        long start = System.nanoTime();
        for (int k = 0; k < iterations; k++) {
            roundTrip(frames[k & 1], echo, k);
        }
        long elapsed = System.nanoTime() - start;
        return new PingPongResult(size, iterations, elapsed / 1e6);
    }

    private void roundTrip(byte[] frame, byte[] echo, int iteration) throws IOException {
        out.write(frame);
        out.flush();
        try {
            in.readFully(echo);
        } catch (EOFException e) {
            throw new EOFException("ping-pong server closed the connection before echoing a "
                    + (frame.length - HEADER_BYTES) + "-byte message");
        }
        int differsAt = Arrays.mismatch(frame, echo);
        if (differsAt >= 0) {
            throw new IOException("the echo of a " + (frame.length - HEADER_BYTES)
                    + "-byte message differs from what was sent at frame byte " + differsAt
                    + " (round trip " + iteration + ")");
        }
    }

    /*
     * Two frames whose payloads differ in every byte, sent alternately: reusing one echo buffer
     * is then safe, because a stale or missing echo can never pass as the expected one.
     */
    private static byte[][] alternatingFrames(int size) {
        byte[] first = new byte[HEADER_BYTES + size];
        PingPongProtocol.writeHeader(first, size);
        byte[] payload = new byte[size];
        new Random(size).nextBytes(payload);
        System.arraycopy(payload, 0, first, HEADER_BYTES, size);
        byte[] second = first.clone();
        for (int i = HEADER_BYTES; i < second.length; i++) {
            second[i] = (byte) ~second[i];
        }
        return new byte[][] {first, second};
    }
}
