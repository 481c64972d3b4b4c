package org.aldeia.samples;

import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectOutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

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

    /** Measures every case in order, then sends the end marker and waits for its acknowledgement. */
    List<SerializationResult> run(List<Case> cases, int warmup) throws IOException {
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
