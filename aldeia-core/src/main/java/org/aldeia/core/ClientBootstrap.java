package org.aldeia.core;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.Transport;

/**
 * The client side of the bootstrap ({@link BootstrapProtocol}), in the connecting thread, over
 * a TCP connection already established (step 1), for an endpoint already created (step 2):
 * sends its start and HELLO, checks the server's
 * reply and proof, proves itself, takes the server's connection information (vouched for by the
 * pair's key), connects its endpoint, waits for the server's to be connected and confirms. Every
 * wait is bounded.
 */
final class ClientBootstrap {

    private final SocketChannel bootstrap;
    private final String peerName;
    private final int timeoutMillis;
    private final DataOutputStream out;
    private final DataInputStream in;

    private ClientBootstrap(SocketChannel bootstrap, int timeoutMillis) throws IOException {
        this.bootstrap = bootstrap;
        this.timeoutMillis = timeoutMillis;
        InetSocketAddress peer = (InetSocketAddress) bootstrap.getRemoteAddress();
        this.peerName = "server at " + AddressText.of(peer);
        Socket socket = bootstrap.socket();
        socket.setSoTimeout(timeoutMillis);
        socket.setTcpNoDelay(true);
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
    }

    /**
     * Steps 3 to 5 on the client side, for {@code endpoint} (of {@code transport}), which this
     * takes over: it is released if the bootstrap fails. The bootstrap connection is left open;
     * the caller closes it.
     *
     * @param timeoutMillis bound on each wait for the server
     * @return the connected channel
     * @throws IOException naming the server and the step that failed
     */
    static Channel connect(SocketChannel bootstrap, Transport transport, Endpoint endpoint, int timeoutMillis)
            throws IOException {
        ClientBootstrap client;
        try {
            client = new ClientBootstrap(bootstrap, timeoutMillis);
        } catch (IOException | RuntimeException e) {
            closeAfterFailure(endpoint, e);
            throw e;
        }
        return client.run(transport, endpoint);
    }

    private Channel run(Transport transport, Endpoint endpoint) throws IOException {
        Channel channel;
        try {
            // The start and the HELLO in one segment: each write to the server costs a wake-up
            // of its selector.
            byte[] hello = BootstrapProtocol.body(transport.publicKey(), BootstrapKeys.nonce(), endpoint.localInfo());
            write(BootstrapProtocol.startAndHello(hello).array());
            BootstrapProtocol.Reply reply = readReply();
            byte[] transcript = BootstrapKeys.transcript(hello, reply.covered());
            byte[] key = transport.pairKey(reply.identity(), reply.publicKey());
            if (!BootstrapKeys.verify(key, BootstrapKeys.SERVER, transcript, reply.proof())) {
                throw new IOException(peerName + " failed to prove it holds the key of this pair of processes: "
                        + "it is not the process it claims to be");
            }
            write(BootstrapKeys.proof(key, BootstrapKeys.CLIENT, transcript));
            byte[] info = readServerInfo(key, transcript);
            if (!Arrays.equals(transport.identityOf(info), reply.identity())) {
                throw new IOException(peerName + " sent connection information of another process than it proved to be");
            }
            channel = endpoint.connect(info, ((InetSocketAddress) bootstrap.getRemoteAddress()).getAddress(), key);
        } catch (IOException | RuntimeException e) {
            closeAfterFailure(endpoint, e);
            throw e;
        }
        try {
            String what = "its connection confirmation";
            int ack = read(in::read, what);
            if (ack < 0) {
                throw closedBy(what, null);
            }
            if (ack != BootstrapProtocol.CONNECTED) {
                throw new IOException(peerName + " sent " + ack + " instead of the Aldeia connection confirmation");
            }
            write(new byte[] {BootstrapProtocol.CONNECTED});
            return channel;
        } catch (IOException | RuntimeException e) {
            closeAfterFailure(channel, e);
            throw e;
        }
    }

    private BootstrapProtocol.Reply readReply() throws IOException {
        String what = "its reply";
        int magic = read(in::readInt, what);
        if (magic != BootstrapProtocol.MAGIC) {
            throw new IOException(peerName + " is not an Aldeia endpoint (bootstrap started with 0x"
                    + Integer.toHexString(magic) + ", expected 0x" + Integer.toHexString(BootstrapProtocol.MAGIC) + ")");
        }
        int version = read(in::readInt, "its protocol version");
        if (version != BootstrapProtocol.VERSION) {
            throw new IOException(peerName + " speaks Aldeia bootstrap protocol version " + version
                    + ", which is unsupported (this side speaks version " + BootstrapProtocol.VERSION + ")");
        }
        int length = read(in::readInt, what);
        if (length < BootstrapProtocol.REPLY_FIXED || length > BootstrapProtocol.MAX_REPLY_LENGTH) {
            throw new IOException(peerName + " sent an invalid bootstrap reply length " + length);
        }
        return BootstrapProtocol.Reply.parse(readFully(length, what), peerName);
    }

    /** The server's INFO: its endpoint's information, which it must have MACed with the pair key. */
    private byte[] readServerInfo(byte[] key, byte[] transcript) throws IOException {
        String what = "its connection information";
        int length = read(in::readInt, what);
        if (length < 0 || length > BootstrapProtocol.MAX_INFO_LENGTH) {
            throw new IOException(peerName + " sent an invalid connection information length " + length);
        }
        byte[] info = readFully(length, what);
        byte[] mac = readFully(BootstrapProtocol.PROOF_BYTES, what);
        if (!BootstrapKeys.verifyInfo(key, transcript, info, mac)) {
            throw new IOException(peerName + " sent connection information that the pair's key does not vouch for");
        }
        return info;
    }

    private byte[] readFully(int length, String what) throws IOException {
        byte[] bytes = new byte[length];
        read(() -> {
            in.readFully(bytes);
            return length;
        }, what);
        return bytes;
    }

    private void write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    @FunctionalInterface
    private interface IntRead {
        int read() throws IOException;
    }

    /** One read from the server, with a timeout or an early end turned into a clear message. */
    private int read(IntRead read, String what) throws IOException {
        try {
            return read.read();
        } catch (SocketTimeoutException e) {
            SocketTimeoutException timeout = new SocketTimeoutException(peerName + " did not send " + what
                    + " within " + timeoutMillis + " ms of the Aldeia bootstrap");
            timeout.initCause(e);
            throw timeout;
        } catch (EOFException e) {
            throw closedBy(what, e);
        }
    }

    private IOException closedBy(String what, Throwable cause) {
        return new IOException(peerName + " closed the Aldeia bootstrap connection before sending " + what
                + " (is it an Aldeia server socket of the same version, and did its side fail?)", cause);
    }

    private static void closeAfterFailure(Closeable resource, Exception failure) {
        try {
            resource.close();
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }
}
