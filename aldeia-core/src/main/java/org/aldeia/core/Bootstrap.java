package org.aldeia.core;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.SequenceInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.SocketChannel;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.EndpointSizes;
import org.aldeia.core.spi.Transport;

/**
 * Steps 2 to 5 of the connection algorithm (thesis Fig. 4.4), the same on both sides, over a
 * plain TCP connection that is already established (step 1). The bootstrap is a
 * {@link SocketChannel} rather than a {@link java.net.Socket} so that it never goes through
 * Aldeia itself when an Aldeia SocketImplFactory is installed.
 *
 * <p>Wire format, each side sends: {@code int magic, int version} at once, then {@code int
 * length, length bytes of Endpoint.localInfo()}, and after connecting its endpoint one
 * {@link #CONNECTED} byte. The
 * final byte keeps either side from using the channel before the other one is connected.
 * Every read is bounded by a timeout, so a broken or foreign peer cannot hang a connect or an
 * accept forever.
 */
final class Bootstrap {

    /** "ALDE". */
    static final int MAGIC = 0x414C4445;
    static final int VERSION = 1;
    static final int CONNECTED = 1;
    /** Connection information is a few bytes; anything bigger is garbage from a foreign peer. */
    static final int MAX_INFO_LENGTH = 64 * 1024;
    static final int DEFAULT_TIMEOUT_MILLIS = 30_000;

    private Bootstrap() {}

    /**
     * Creates the socket's endpoint, exchanges connection information with the peer, connects
     * and confirms. The bootstrap connection is left open; the caller closes it.
     *
     * @param alreadyRead the first bytes the peer sent, already read from {@code bootstrap} by
     *     a server that had to tell an Aldeia client from a plain TCP one (see
     *     {@link BootstrapDetector}); empty otherwise
     * @param sizes the memory of the endpoint to create
     * @param timeoutMillis bound on each wait for the peer
     * @return the connected channel
     * @throws IOException naming the peer and the step that failed; the endpoint is released
     */
    static Channel establish(SocketChannel bootstrap, byte[] alreadyRead, Transport transport, int socketId,
            EndpointSizes sizes, int timeoutMillis) throws IOException {
        Socket socket = bootstrap.socket();
        InetSocketAddress peer = (InetSocketAddress) bootstrap.getRemoteAddress();
        String peerName = "peer at " + peer.getAddress().getHostAddress() + ":" + peer.getPort();
        socket.setSoTimeout(timeoutMillis);
        socket.setTcpNoDelay(true);
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
        DataInputStream in = new DataInputStream(new SequenceInputStream(new ByteArrayInputStream(alreadyRead),
                new BufferedInputStream(socket.getInputStream())));

        // The magic goes out before the endpoint is created (which can take milliseconds): a
        // server that accepts plain TCP clients too waits for it to tell the two apart.
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.flush();
        Endpoint endpoint = transport.createEndpoint(socketId, sizes);
        Channel channel;
        try {
            byte[] localInfo = endpoint.localInfo();
            out.writeInt(localInfo.length);
            out.write(localInfo);
            out.flush();
            byte[] remoteInfo = readHello(in, peerName, timeoutMillis);
            channel = endpoint.connect(remoteInfo, peer.getAddress());
        } catch (IOException | RuntimeException e) {
            closeAfterFailure(endpoint, e);
            throw e;
        }
        try {
            out.write(CONNECTED);
            out.flush();
            String what = "its connection confirmation";
            int ack = read(in::read, peerName, what, timeoutMillis);
            if (ack < 0) {
                throw closedBy(peerName, what, null);
            }
            if (ack != CONNECTED) {
                throw new IOException(peerName + " sent " + ack + " instead of the Aldeia connection confirmation");
            }
            return channel;
        } catch (IOException | RuntimeException e) {
            closeAfterFailure(channel, e);
            throw e;
        }
    }

    private static byte[] readHello(DataInputStream in, String peerName, int timeoutMillis) throws IOException {
        int magic = read(in::readInt, peerName, "its connection information", timeoutMillis);
        if (magic != MAGIC) {
            throw new IOException(peerName + " is not an Aldeia endpoint (bootstrap started with 0x"
                    + Integer.toHexString(magic) + ", expected 0x" + Integer.toHexString(MAGIC) + ")");
        }
        int version = read(in::readInt, peerName, "its protocol version", timeoutMillis);
        if (version != VERSION) {
            throw new IOException(peerName + " speaks Aldeia bootstrap protocol version " + version
                    + ", which is unsupported (this side speaks version " + VERSION + ")");
        }
        int length = read(in::readInt, peerName, "its connection information", timeoutMillis);
        if (length < 0 || length > MAX_INFO_LENGTH) {
            throw new IOException(peerName + " sent an invalid connection information length " + length);
        }
        byte[] info = new byte[length];
        read(() -> {
            in.readFully(info);
            return length;
        }, peerName, "its connection information", timeoutMillis);
        return info;
    }

    @FunctionalInterface
    private interface IntRead {
        int read() throws IOException;
    }

    /** One read from the peer, with a timeout or an early end turned into a clear message. */
    private static int read(IntRead read, String peerName, String what, int timeoutMillis) throws IOException {
        try {
            return read.read();
        } catch (SocketTimeoutException e) {
            SocketTimeoutException timeout = new SocketTimeoutException(peerName + " did not send " + what
                    + " within " + timeoutMillis + " ms of the Aldeia bootstrap");
            timeout.initCause(e);
            throw timeout;
        } catch (EOFException e) {
            throw closedBy(peerName, what, e);
        }
    }

    private static IOException closedBy(String peerName, String what, Throwable cause) {
        return new IOException(peerName + " closed the Aldeia bootstrap connection before sending " + what
                + " (is it an Aldeia socket, and did its side fail?)", cause);
    }

    private static void closeAfterFailure(Closeable resource, Exception failure) {
        try {
            resource.close();
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }
}
