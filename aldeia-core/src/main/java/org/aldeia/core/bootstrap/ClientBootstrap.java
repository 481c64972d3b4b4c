package org.aldeia.core.bootstrap;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.upgrade.TcpFirstChannel;

/**
 * The client side of the bootstrap ({@link BootstrapProtocol}), in the connecting thread, over
 * a TCP connection already established (step 1), for an endpoint already created (step 2):
 * sends its start and HELLO (with a ticket from this server, when it holds one), checks the
 * server's reply and proof, proves itself unless the ticket did, takes the server's connection
 * information and next ticket (vouched for by the pair's key), connects its endpoint, waits for
 * the server's to be connected and confirms. Every wait is bounded.
 */
public final class ClientBootstrap {

    private final InetSocketAddress server;
    private final String peerName;
    private final int timeoutMillis;
    private final DataOutputStream out;
    private final DataInputStream in;

    /** Over {@code in} and {@code out}, whose reads time out after {@code timeoutMillis}; a flush sends a message. */
    private ClientBootstrap(InetSocketAddress server, InputStream in, OutputStream out, int timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
        this.server = server;
        this.peerName = "server at " + AddressText.of(server);
        this.out = new DataOutputStream(out);
        this.in = new DataInputStream(in);
    }

    private static ClientBootstrap over(SocketChannel bootstrap, int timeoutMillis) throws IOException {
        Socket socket = bootstrap.socket();
        socket.setSoTimeout(timeoutMillis);
        socket.setTcpNoDelay(true);
        return new ClientBootstrap((InetSocketAddress) bootstrap.getRemoteAddress(),
                new BufferedInputStream(socket.getInputStream()), new BufferedOutputStream(socket.getOutputStream()),
                timeoutMillis);
    }

    /** Makes the endpoint of this connection on another route, when the server refused the first. */
    @FunctionalInterface
    public interface EndpointMaker {
        Endpoint create(Transport transport) throws IOException;
    }

    /**
     * Steps 3 to 5 on the client side, for {@code endpoint} (of {@code transport}, one of
     * {@code routes}), which this takes over: it is released if the bootstrap fails. A server
     * that has not that route lists its own: the first of {@code routes} it has gets an endpoint
     * from {@code maker}, offered on the same connection. The bootstrap connection is left open;
     * the caller closes it.
     *
     * @param timeoutMillis bound on each wait for the server
     * @return the connected channel
     * @throws IOException naming the server and the step that failed
     */
    public static Channel connect(SocketChannel bootstrap, Routes routes, Transport transport, Endpoint endpoint,
            EndpointMaker maker, int timeoutMillis) throws IOException {
        ClientBootstrap client;
        try {
            client = over(bootstrap, timeoutMillis);
        } catch (IOException | RuntimeException e) {
            closeAfterFailure(endpoint, e);
            throw e;
        }
        return client.run(routes, transport, endpoint, maker);
    }

    /**
     * The same steps over a TCP-first connection's control frames ({@link TcpFirstChannel}):
     * {@code in} gives the server's messages (its reads time out after {@code timeoutMillis}), a
     * flush of {@code out} sends one.
     */
    public static Channel upgrade(InetSocketAddress server, InputStream in, OutputStream out, Routes routes,
            Transport transport, Endpoint endpoint, EndpointMaker maker, int timeoutMillis) throws IOException {
        return new ClientBootstrap(server, in, out, timeoutMillis).run(routes, transport, endpoint, maker);
    }

    /** What the client offered in its HELLO, and on which route. */
    private record Offer(Transport transport, Endpoint endpoint, ClientTickets.Ticket ticket, byte[] ticketKey,
            byte[] hello) {}

    private Offer offer(Transport transport, Endpoint endpoint) throws IOException {
        ClientTickets.Ticket ticket = ClientTickets.PROCESS.take(server, transport.publicKey());
        byte[] ticketKey = ticket == null ? null : transport.pairKey(ticket.serverIdentity(), ticket.serverPublicKey());
        return new Offer(transport, endpoint, ticket, ticketKey, hello(transport, endpoint, ticket, ticketKey));
    }

    private Channel run(Routes routes, Transport firstTransport, Endpoint firstEndpoint, EndpointMaker maker)
            throws IOException {
        Channel channel;
        Endpoint endpoint = firstEndpoint;
        try {
            // The start and the HELLO in one segment: each write to the server costs a wake-up
            // of its selector.
            Offer offer = offer(firstTransport, endpoint);
            write(BootstrapProtocol.startAndHello(offer.hello()).array());
            byte[] replyBody = readReplyBody();
            if (replyBody[0] == BootstrapProtocol.UNROUTED) {
                Transport next = routes.afterRefusal(server, firstTransport.route(),
                        BootstrapProtocol.unroutedRoutes(replyBody, peerName));
                Endpoint refused = endpoint;
                endpoint = null;
                refused.close();
                endpoint = maker.create(next);
                offer = offer(next, endpoint);
                write(BootstrapProtocol.hello(offer.hello()).array());
                replyBody = readReplyBody();
                if (replyBody[0] == BootstrapProtocol.UNROUTED) {
                    throw new IOException(peerName + " refused route \"" + next.route() + "\" too, which it had listed");
                }
            }
            Transport transport = offer.transport();
            ClientTickets.Ticket ticket = offer.ticket();
            byte[] ticketKey = offer.ticketKey();
            byte[] hello = offer.hello();
            BootstrapProtocol.Reply reply = BootstrapProtocol.Reply.parse(replyBody, peerName);
            byte[] transcript = BootstrapKeys.transcript(hello, reply.covered());
            byte[] key;
            if (reply.mode() == BootstrapProtocol.RESUMED) {
                if (ticket == null || !Arrays.equals(ticket.serverIdentity(), reply.identity())
                        || !Arrays.equals(ticket.serverPublicKey(), reply.publicKey())) {
                    throw new IOException(peerName + " resumed a connection with a ticket this client did not send");
                }
                key = ticketKey;
            } else {
                if (ticket != null) {
                    ClientTickets.PROCESS.forget(server, transport.publicKey()); // not its tickets: another process, or it forgot them
                }
                key = transport.pairKey(reply.identity(), reply.publicKey());
            }
            if (!BootstrapKeys.verify(key, BootstrapKeys.SERVER, transcript, reply.proof())) {
                throw new IOException(peerName + " failed to prove it holds the key of this pair of processes: "
                        + "it is not the process it claims to be");
            }
            if (reply.mode() == BootstrapProtocol.CHALLENGE) {
                write(BootstrapKeys.proof(key, BootstrapKeys.CLIENT, transcript));
            }
            byte[] info = readServerInfo(key, transcript, reply, transport.publicKey());
            if (!Arrays.equals(transport.identityOf(info), reply.identity())) {
                throw new IOException(peerName + " sent connection information of another process than it proved to be");
            }
            channel = endpoint.connect(info, server.getAddress(), key);
        } catch (IOException | RuntimeException e) {
            if (endpoint != null) {
                closeAfterFailure(endpoint, e);
            }
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

    /** A reply's body (mode first): a {@link BootstrapProtocol.Reply}, or the server's routes. */
    private byte[] readReplyBody() throws IOException {
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
        if (length < 1 || length > Math.max(BootstrapProtocol.MAX_REPLY_LENGTH, BootstrapProtocol.MAX_UNROUTED_LENGTH)) {
            throw new IOException(peerName + " sent an invalid bootstrap reply length " + length);
        }
        return readFully(length, what);
    }

    /** A HELLO body: with {@code ticket} and its proof under {@code ticketKey}, when there is one. */
    private static byte[] hello(Transport transport, Endpoint endpoint, ClientTickets.Ticket ticket, byte[] ticketKey)
            throws IOException {
        byte[] publicKey = transport.publicKey(), nonce = BootstrapKeys.nonce(), info = endpoint.localInfo();
        String route = transport.route();
        if (ticket == null) {
            return BootstrapProtocol.body(publicKey, nonce, route, info);
        }
        byte[] unproved = BootstrapProtocol.helloBody(publicKey, nonce, ticket.ticket(),
                new byte[BootstrapProtocol.PROOF_BYTES], route, info);
        return BootstrapProtocol.helloBody(publicKey, nonce, ticket.ticket(), BootstrapKeys.ticketProof(ticketKey, unproved),
                route, info);
    }

    /**
     * The server's INFO: its endpoint's information and a ticket for the next connection, which
     * it must have MACed with the pair key; the ticket is kept for this server's address.
     */
    private byte[] readServerInfo(byte[] key, byte[] transcript, BootstrapProtocol.Reply reply, byte[] ourPublicKey)
            throws IOException {
        String what = "its connection information";
        int length = read(in::readInt, what);
        if (length < 0 || length > BootstrapProtocol.MAX_INFO_LENGTH) {
            throw new IOException(peerName + " sent an invalid connection information length " + length);
        }
        byte[] info = readFully(length, what);
        byte[] ticket = readFully(BootstrapProtocol.TICKET_BYTES, what);
        byte[] mac = readFully(BootstrapProtocol.PROOF_BYTES, what);
        if (!BootstrapKeys.verifyInfo(key, transcript, info, ticket, mac)) {
            throw new IOException(peerName + " sent connection information that the pair's key does not vouch for");
        }
        ClientTickets.PROCESS.put(server, ourPublicKey, new ClientTickets.Ticket(ticket, reply.identity(), reply.publicKey()));
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
