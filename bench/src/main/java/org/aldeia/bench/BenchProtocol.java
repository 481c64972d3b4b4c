package org.aldeia.bench;

/**
 * What travels between the client and the server of one transport: every message is a frame,
 * an 8-byte header (int type, int payload length, big-endian) followed by the payload. The
 * caller's frame array holds the header too, so a stream transport sends header and payload in
 * one write (one descriptor chain for Aldeia) and no transport copies the payload to frame it.
 */
final class BenchProtocol {

    static final int HEADER_BYTES = 8;

    /** Client → server: echo this frame (the ping-pong). */
    static final int PING = 1;
    /** Server → client: the echo of a {@link #PING}. */
    static final int PONG = 2;
    /** Client → server: one chunk of the stream; its first 8 payload bytes are its sequence number. */
    static final int CHUNK = 3;
    /** Client → server: the stream is over; the payload (8 bytes) is how many chunks were sent. */
    static final int STREAM_END = 4;
    /** Server → client: every chunk arrived, in order (1-byte payload). */
    static final int ACK = 5;
    /** Client → server: the session is over. */
    static final int END = 6;
    /** Client → server: report your process's CPU time (to time the CPU of both JVMs). */
    static final int CPU_QUERY = 7;
    /** Server → client: the server JVM's user + sys CPU time in ns (8-byte payload). */
    static final int CPU_TIME = 8;
    /** Client → server: listen for this many set-up connections (4-byte payload). */
    static final int SETUP = 9;
    /** Server → client: listening; the payload is the port, as text. */
    static final int SETUP_READY = 10;
    /** Client → server: serve this many application connections (4-byte payload). */
    static final int APPLICATION = 11;
    /** Server → client: listening for them; the payload is the port, as text. */
    static final int APPLICATION_READY = 12;
    /** Client → server: export the RMI phase's remote object. */
    static final int RMI = 13;
    /** Server → client: exported; the payload is its serialized stub. */
    static final int RMI_READY = 14;
    /** Client → server: the RMI calls are over; unexport. */
    static final int RMI_DONE = 15;
    /**
     * Client → server: one message of the asynchronous-write phase, its payload the message;
     * the server answers {@link #ACK} once all of it has arrived.
     */
    static final int WRITE_TIMED = 16;

    private BenchProtocol() {
    }

    static void writeHeader(byte[] frame, int type, int length) {
        putInt(frame, 0, type);
        putInt(frame, 4, length);
    }

    static int type(byte[] frame) {
        return getInt(frame, 0);
    }

    static int length(byte[] frame) {
        return getInt(frame, 4);
    }

    static void putLong(byte[] frame, int offset, long value) {
        putInt(frame, offset, (int) (value >>> 32));
        putInt(frame, offset + 4, (int) value);
    }

    static long getLong(byte[] frame, int offset) {
        return (long) getInt(frame, offset) << 32 | (getInt(frame, offset + 4) & 0xffffffffL);
    }

    static void putInt(byte[] frame, int offset, int value) {
        frame[offset] = (byte) (value >>> 24);
        frame[offset + 1] = (byte) (value >>> 16);
        frame[offset + 2] = (byte) (value >>> 8);
        frame[offset + 3] = (byte) value;
    }

    static int getInt(byte[] frame, int offset) {
        return (frame[offset] & 0xff) << 24 | (frame[offset + 1] & 0xff) << 16
                | (frame[offset + 2] & 0xff) << 8 | (frame[offset + 3] & 0xff);
    }
}
