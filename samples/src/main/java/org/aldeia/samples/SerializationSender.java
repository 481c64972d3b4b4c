package org.aldeia.samples;

import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectOutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The timing side of the serialization benchmark (thesis Fig. 5.11, Table 5.1): writes an
 * {@code int[]} through an {@link ObjectOutputStream}, flushes, and waits for the receiver's
 * one-byte acknowledgement, so each run's time includes delivery and deserialization.
 */
final class SerializationSender {

    /** One array size and how many timed transfers of it to make. */
    record Case(int elements, int runs) {
    }

    private final ObjectOutputStream objects;
    private final InputStream acks;

    SerializationSender(Socket socket) throws IOException {
        this.objects = new ObjectOutputStream(socket.getOutputStream());
        // The stream header goes now: the receiver's ObjectInputStream constructor waits for it.
        this.objects.flush();
        this.acks = socket.getInputStream();
    }

    /** Arrays above this many elements are left out of the JIT warm-up: they take milliseconds each. */
    static final int JIT_WARMUP_MAX_ELEMENTS = 100_000;

    /**
     * Measures every case in order, then sends the end marker and waits for its acknowledgement.
     *
     * @param warmup untimed transfers of each case before its timed ones
     * @param jitWarmupMillis how long to transfer the cases' arrays (up to
     *        {@link #JIT_WARMUP_MAX_ELEMENTS}) in turn before anything is timed, so that both JVMs
     *        run compiled code from the first case on (0: none)
     */
    List<SerializationResult> run(List<Case> cases, int warmup, int jitWarmupMillis) throws IOException {
        warmUpJit(cases, jitWarmupMillis);
        List<SerializationResult> results = new ArrayList<>();
        for (Case c : cases) {
            int[] array = IntArrayPattern.create(c.elements());
            for (int k = 0; k < warmup; k++) {
                transfer(array);
            }
            long start = System.nanoTime();
            for (int k = 0; k < c.runs(); k++) {
                transfer(array);
            }
            results.add(new SerializationResult(c.elements(), c.runs(), (System.nanoTime() - start) / 1e6));
        }
        transfer(null);
        return results;
    }

    /*
     * As the ping-pong's warm-up (PingPongClient): with 100 untimed transfers of its own, the
     * first case (10 ints) was timed while the JIT compiled the stream and serialization code of
     * both JVMs, 0.07-0.09 ms per transfer over either socket against 0.01-0.04 once compiled,
     * and its figure said how fast each warmed up, not what a transfer costs.
     */
    private void warmUpJit(List<Case> cases, int millis) throws IOException {
        if (millis <= 0) {
            return;
        }
        List<int[]> arrays = cases.stream().filter(c -> c.elements() <= JIT_WARMUP_MAX_ELEMENTS)
                .map(c -> IntArrayPattern.create(c.elements())).toList();
        if (arrays.isEmpty()) {
            return;
        }
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (int k = 0; System.nanoTime() < end; k++) {
            transfer(arrays.get(k % arrays.size()));
        }
    }

    /** One run; {@code null} is the end marker. */
    private void transfer(int[] array) throws IOException {
        // reset() forgets the previous run's array, so every run serializes it in full again.
        objects.reset();
        objects.writeObject(array);
        objects.flush();
        int ack = acks.read();
        if (ack != SerializationReceiver.ACK) {
            String what = array == null ? "the end marker" : "an int[" + array.length + "]";
            throw new IOException(ack < 0
                    ? "serialization receiver closed the connection before acknowledging " + what
                    : "serialization receiver answered " + ack + " instead of acknowledging " + what);
        }
    }
}
