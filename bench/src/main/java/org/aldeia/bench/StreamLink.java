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
        readFully(frame, 0, BenchProtocol.HEADER_BYTES, "a frame header");
        int length = BenchProtocol.length(frame);
        if (length < 0 || length > frame.length - BenchProtocol.HEADER_BYTES) {
            throw new IOException(name + ": frame header announces " + length + " bytes; expected 0.."
                    + (frame.length - BenchProtocol.HEADER_BYTES) + " (corrupt stream?)");
        }
        readFully(frame, BenchProtocol.HEADER_BYTES, length, "a " + length + "-byte payload");
        return length;
    }

    private void readFully(byte[] frame, int offset, int length, String what) throws IOException {
        int got = in.readNBytes(frame, offset, length);
        if (got != length) {
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
