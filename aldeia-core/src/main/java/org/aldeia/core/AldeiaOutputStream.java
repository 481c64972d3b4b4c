package org.aldeia.core;

import java.io.IOException;
import java.io.OutputStream;
import java.net.SocketException;
import java.util.Objects;
import org.aldeia.core.spi.Channel;

/**
 * The output stream of an {@link AldeiaSocket}. Writes are asynchronous (thesis 4.4.3): they
 * return once the bytes are copied into registered memory and posted. {@link #flush()} blocks
 * until everything written so far was delivered. Closing it closes the socket, as closing a
 * java.net socket's stream does; closing flushes first, and so does the clean-up of a socket
 * the application never closed (see {@link ChannelRelease}).
 */
public final class AldeiaOutputStream extends OutputStream {

    private final AldeiaSocket socket;
    private final Channel channel;

    AldeiaOutputStream(AldeiaSocket socket, Channel channel) {
        this.socket = socket;
        this.channel = channel;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (socket.isClosed()) {
            throw new SocketException("Socket closed");
        }
        if (socket.isOutputShutdown()) {
            throw new SocketException("Socket output is shutdown");
        }
        if (len > 0) {
            try {
                channel.write(b, off, len);
            } catch (IOException e) {
                throw JavaNetExceptions.ofStream(e, socket.isClosed());
            }
        }
    }

    /**
     * Blocks until every write so far was delivered. After close or shutdownOutput there is
     * nothing left to deliver (both flushed), so it returns at once, like java.net's flush:
     * wrappers such as BufferedOutputStream flush in their own close, after the socket's.
     */
    @Override
    public void flush() throws IOException {
        if (!socket.isClosed() && !socket.isOutputShutdown()) {
            try {
                channel.flush();
            } catch (IOException e) {
                throw JavaNetExceptions.ofStream(e, socket.isClosed());
            }
        }
    }

    /** Flushes and closes the socket, as closing a java.net socket's stream does. */
    @Override
    public void close() throws IOException {
        socket.close();
    }
}
