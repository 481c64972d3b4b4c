package org.aldeia.core;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * Tells an Aldeia client from a plain TCP client on a connection that a server socket under a
 * bind rule accepted, by its first bytes: an Aldeia client starts its bootstrap at once with
 * {@link Bootstrap#MAGIC}. A client whose bytes differ from the magic is plain as soon as one
 * byte differs; a client that sends nothing (a protocol where the server speaks first) or
 * closes is plain once {@link #WAIT_MILLIS} have passed or its end arrives. The bytes read are
 * handed on, so neither kind of client loses any.
 */
final class BootstrapDetector {

    /**
     * How long a silent client is waited for. An Aldeia client sends its magic right after TCP's
     * handshake, so this only has to cover a client JVM that is descheduled or in a GC pause at
     * that moment; a plain client of a server-speaks-first protocol waits this long once per
     * connection (leave such servers out of the bind rules).
     */
    static final int WAIT_MILLIS = 3_000;

    private static final byte[] MAGIC = ByteBuffer.allocate(Integer.BYTES).putInt(Bootstrap.MAGIC).array();

    /** What a client's first bytes said, and those bytes. */
    record Verdict(boolean aldeia, byte[] firstBytes) {}

    private BootstrapDetector() {}

    /**
     * Reads at most the magic's length from {@code accepted} (a blocking channel), waiting at
     * most {@code waitMillis} in all. The channel's SO_TIMEOUT is restored afterwards.
     *
     * @throws IOException if the connection fails while being read
     */
    static Verdict detect(SocketChannel accepted, int waitMillis) throws IOException {
        Socket socket = accepted.socket();
        InputStream in = socket.getInputStream();
        int savedTimeout = socket.getSoTimeout();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        byte[] read = new byte[MAGIC.length];
        int count = 0;
        try {
            while (count < MAGIC.length) {
                long leftMillis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (leftMillis <= 0) {
                    break;
                }
                socket.setSoTimeout((int) leftMillis);
                int n;
                try {
                    n = in.read(read, count, MAGIC.length - count);
                } catch (SocketTimeoutException silent) {
                    break;
                }
                if (n < 0) {
                    break;
                }
                if (!Arrays.equals(read, count, count + n, MAGIC, count, count + n)) {
                    return new Verdict(false, Arrays.copyOf(read, count + n));
                }
                count += n;
            }
        } finally {
            socket.setSoTimeout(savedTimeout);
        }
        return new Verdict(count == MAGIC.length, Arrays.copyOf(read, count));
    }
}
