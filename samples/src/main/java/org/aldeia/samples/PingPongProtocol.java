package org.aldeia.samples;

/**
 * What travels in a ping-pong: each round trip the client writes one frame, a 4-byte
 * big-endian length followed by that many payload bytes, and the server echoes the whole frame.
 * Size 0 is a frame with the header only. A length of {@link #END} ends the session.
 */
final class PingPongProtocol {

    /** Length field that tells the server the client is done. */
    static final int END = -1;

    static final int HEADER_BYTES = Integer.BYTES;

    /** Largest payload a server accepts, so a corrupt header cannot make it allocate gigabytes. */
    static final int MAX_PAYLOAD = 256 * 1024 * 1024;

    private PingPongProtocol() {
    }

    static void writeHeader(byte[] frame, int length) {
        frame[0] = (byte) (length >>> 24);
        frame[1] = (byte) (length >>> 16);
        frame[2] = (byte) (length >>> 8);
        frame[3] = (byte) length;
    }

    static int readHeader(byte[] frame) {
        return (frame[0] & 0xff) << 24 | (frame[1] & 0xff) << 16 | (frame[2] & 0xff) << 8 | (frame[3] & 0xff);
    }
}
