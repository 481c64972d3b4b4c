package org.aldeia.core.plain;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.channels.ClosedChannelException;
import java.util.Objects;

/**
 * The streams of a plain TCP connection that an installed socket carries on an NIO channel
 * ({@link PlainChannelIo} does the waiting; {@code socket} is the channel's socket, for
 * SO_TIMEOUT, the state and available()). They throw what java.net's own sockets throw: the
 * channel reports a closed or shut down socket with ClosedChannelException and a reset or
 * broken connection with a bare IOException; java.net reports every one of them with
 * SocketException (timeouts stay SocketTimeoutException). The input stream first delivers the
 * bytes a server read to tell a plain client from an Aldeia one (the acceptor of org.aldeia.core).
 */
public final class PlainSocketStreams {

    private PlainSocketStreams() {}

    public static InputStream input(Socket socket, PlainChannelIo io, byte[] firstBytes) throws IOException {
        // The socket's own stream cannot read a channel in non-blocking mode, but it can count.
        return new Input(socket, io, socket.getInputStream(), firstBytes);
    }

    public static OutputStream output(Socket socket, PlainChannelIo io) {
        return new Output(socket, io);
    }

    /** One call on the channel. */
    @FunctionalInterface
    private interface ChannelCall<T> {
        T run() throws IOException;
    }

    /** Runs {@code call}, throwing what java.net would: SocketException, or a timeout as it is. */
    private static <T> T asJavaNet(Socket socket, boolean writing, ChannelCall<T> call) throws IOException {
        try {
            return call.run();
        } catch (SocketException | InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            throw translated(socket, e, writing);
        }
    }

    private static SocketException translated(Socket socket, IOException e, boolean writing) {
        if (!(e instanceof ClosedChannelException)) {
            return (SocketException) new SocketException(e.getMessage()).initCause(e);
        }
        String message = socket.isClosed() ? "Socket closed"
                : writing && socket.isOutputShutdown() ? "Socket output is shutdown"
                : !writing && socket.isInputShutdown() ? "Socket input is shutdown"
                : "Socket closed";
        return (SocketException) new SocketException(message).initCause(e);
    }

    private static final class Input extends InputStream {
        private final Socket socket;
        private final PlainChannelIo io;
        private final InputStream counter;
        private final byte[] firstBytes;
        private int delivered;

        Input(Socket socket, PlainChannelIo io, InputStream counter, byte[] firstBytes) {
            this.socket = socket;
            this.io = io;
            this.counter = counter;
            this.firstBytes = firstBytes;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            synchronized (firstBytes) {
                if (delivered < firstBytes.length) {
                    int n = Math.min(len, firstBytes.length - delivered);
                    System.arraycopy(firstBytes, delivered, b, off, n);
                    delivered += n;
                    return n;
                }
            }
            return asJavaNet(socket, false, () -> io.read(b, off, len, socket.getSoTimeout()));
        }

        @Override
        public int available() throws IOException {
            int waiting;
            synchronized (firstBytes) {
                waiting = firstBytes.length - delivered;
            }
            return waiting + asJavaNet(socket, false, counter::available);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    private static final class Output extends OutputStream {
        private final Socket socket;
        private final PlainChannelIo io;

        Output(Socket socket, PlainChannelIo io) {
            this.socket = socket;
            this.io = io;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            asJavaNet(socket, true, () -> {
                io.write(b, off, len);
                return null;
            });
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
