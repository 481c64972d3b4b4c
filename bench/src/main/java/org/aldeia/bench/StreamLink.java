package org.aldeia.bench;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** A {@link MessageLink} over a byte stream: JDK sockets, JDK Unix-domain channels, Aldeia sockets. */
final class StreamLink implements MessageLink {

    private final String name;
    private final InputStream in;
    private final OutputStream out;
    private final AutoCloseable connection;

    StreamLink(String name, InputStream in, OutputStream out, AutoCloseable connection) {
        this.name = name;
        this.in = in;
        this.out = out;
        this.connection = connection;
    }

    @Override
    public void send(byte[] frame, int type, int payloadLength) throws IOException {
        BenchProtocol.writeHeader(frame, type, payloadLength);
        out.write(frame, 0, BenchProtocol.HEADER_BYTES + payloadLength);
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public int receive(byte[] frame) throws IOException {
        readFully(frame, 0, BenchProtocol.HEADER_BYTES, true);
        int length = BenchProtocol.length(frame);
        if (length < 0 || length > frame.length - BenchProtocol.HEADER_BYTES) {
            throw new IOException(name + ": frame header announces " + length + " bytes; expected 0.."
                    + (frame.length - BenchProtocol.HEADER_BYTES) + " (corrupt stream?)");
        }
        readFully(frame, BenchProtocol.HEADER_BYTES, length, false);
        return length;
    }

    /**
     * Reads a frame's header or its payload. Nothing here allocates unless the read falls short:
     * a message built per call (a String per frame) made the ping-pong's JVMs touch fresh heap
     * pages, a page fault about every 100 round trips of 64 B and about 11 us each on this
     * virtual machine, which the 64 B p99 then measured instead of the transport.
     */
    private void readFully(byte[] frame, int offset, int length, boolean header) throws IOException {
        int got = in.readNBytes(frame, offset, length);
        if (got != length) {
            String what = header ? "a frame header" : "a " + length + "-byte payload";
            throw new EOFException(name + ": the peer closed the connection in the middle of " + what
                    + " (" + got + " of " + length + " bytes)");
        }
    }

    @Override
    public void close() throws IOException {
        try {
            connection.close();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(name + ": closing failed", e);
        }
    }
}
