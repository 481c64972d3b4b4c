package org.aldeia.samples;

import java.io.IOException;
import java.io.InvalidObjectException;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.OutputStream;
import java.net.Socket;

/** The receiving side of the serialization benchmark: reads each array, acknowledges it, checks it. */
final class SerializationReceiver {

    /** The one-byte acknowledgement of each object. */
    static final int ACK = 0x06;

    private SerializationReceiver() {
    }

    /** Receives arrays until the sender's end marker (a null object); returns how many arrived intact. */
    static long serve(Socket socket) throws IOException {
        ObjectInputStream objects = new ObjectInputStream(socket.getInputStream());
        // Only int[] is expected; refusing every other class keeps the benchmark from deserializing
        // whatever a stray peer sends.
        objects.setObjectInputFilter(info -> info.serialClass() == null ? ObjectInputFilter.Status.UNDECIDED
                : info.serialClass() == int[].class ? ObjectInputFilter.Status.ALLOWED
                : ObjectInputFilter.Status.REJECTED);
        OutputStream acks = socket.getOutputStream();
        long received = 0;
        while (true) {
            Object object = readObject(objects);
            acks.write(ACK);
            acks.flush();
            if (object == null) {
                return received;
            }
            // Checked after the acknowledgement: the check is the receiver's own work, not transfer
            // time. A bad array still fails the sender, which then misses a later acknowledgement.
            if (!(object instanceof int[] array)) {
                throw new IOException("serialization sender sent a " + object.getClass().getName() + ", not an int[]");
            }
            int bad = IntArrayPattern.firstMismatch(array);
            if (bad >= 0) {
                throw new IOException("received int[" + array.length + "] differs from what was sent at index " + bad);
            }
            received++;
        }
    }

    private static Object readObject(ObjectInputStream objects) throws IOException {
        try {
            return objects.readObject();
        } catch (ClassNotFoundException e) {
            throw new InvalidObjectException("serialization sender sent an object of unknown class " + e.getMessage());
        }
    }
}
