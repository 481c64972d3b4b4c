package org.aldeia.core.bootstrap;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.EndpointSizes;
import org.aldeia.core.spi.Transport;

/**
 * The server side of the bootstrap ({@link BootstrapProtocol}) for one client whose HELLO has
 * arrived: the steps that cost something, each called once, in order. The bytes are read and
 * written by {@code BootstrapAcceptor}'s selector; {@link #prove}, {@link #create} and
 * {@link #connect} run on its workers. A client that has not proved itself costs a key agreement
 * and nothing else: the endpoint is created only once its proof (or its ticket's) was right.
 */
public final class ServerBootstrap {

    private final String peerName;
    private final ServerTickets tickets;
    private byte[] clientPublicKey;
    private byte[] transcript;
    /** A RESUMED reply, written with the INFO. */
    private ByteBuffer resumedReply;
    private byte[] key;
    private byte[] clientInfo;
    private Endpoint endpoint;
    private Channel channel;

    public ServerBootstrap(String peerName, ServerTickets tickets) {
        this.peerName = peerName;
        this.tickets = tickets;
    }

    /**
     * Whether the HELLO's ticket proves the client: one of ours, unspent, issued to this client,
     * with a right proof. It is then spent, and the RESUMED reply goes out with the INFO
     * ({@link #create}). False for a HELLO without a ticket, or with one that proves nothing: the
     * client gets the challenge ({@link #prove}). Only for a pair whose key the transport knows
     * already (a few HMACs, no key agreement).
     */
    public boolean resume(Transport transport, byte[] helloBody) throws IOException {
        byte[] ticket = BootstrapProtocol.ticket(helloBody);
        if (!tickets.valid(ticket, BootstrapProtocol.publicKey(helloBody))) {
            return false;
        }
        takePairKey(transport, helloBody);
        if (!BootstrapKeys.verifyTicketProof(key, helloBody) || !tickets.take(ticket, clientPublicKey)) {
            return false;
        }
        resumedReply = reply(transport, helloBody, BootstrapProtocol.RESUMED);
        return true;
    }

    /**
     * Checks the client's information and identity and makes the reply, with our proof of the
     * pair's key and our identity.
     *
     * @param helloBody the client's HELLO after its length, of a valid length
     */
    public ByteBuffer prove(Transport transport, byte[] helloBody) throws IOException {
        takePairKey(transport, helloBody);
        return reply(transport, helloBody, BootstrapProtocol.CHALLENGE);
    }

    /** The client's information and public key, and the key of our pair of processes. */
    private void takePairKey(Transport transport, byte[] helloBody) throws IOException {
        clientInfo = BootstrapProtocol.info(helloBody);
        clientPublicKey = BootstrapProtocol.publicKey(helloBody);
        key = transport.pairKey(transport.identityOf(clientInfo), clientPublicKey);
    }

    /** The reply in {@code mode}, with our proof of the pair's key ({@link #takePairKey} first). */
    private ByteBuffer reply(Transport transport, byte[] helloBody, byte mode) {
        byte[] identity = transport.identity();
        byte[] ours = transport.publicKey(), nonce = BootstrapKeys.nonce();
        transcript = BootstrapKeys.transcript(helloBody, BootstrapProtocol.replyCovered(mode, ours, nonce, identity));
        return BootstrapProtocol.reply(mode, ours, nonce, BootstrapKeys.proof(key, BootstrapKeys.SERVER, transcript),
                identity);
    }

    /** Checks the client's proof: it holds the pair's key, so it is the process it claims to be. */
    public void checkProof(byte[] proof) throws IOException {
        if (!BootstrapKeys.verify(key, BootstrapKeys.CLIENT, transcript, proof)) {
            throw new IOException(peerName + " failed to prove it holds the key of the process it claims to be");
        }
    }

    /**
     * Creates the endpoint (step 2) and makes the INFO that tells the client its information
     * and gives it a ticket for its next connection, vouched for by the pair key; after a
     * resumed HELLO, the reply goes in front of it.
     *
     * @param localAddress where the client's connection arrived: a listener the client needs is
     *     opened there
     */
    public ByteBuffer create(Transport transport, int socketId, EndpointSizes sizes, InetAddress localAddress)
            throws IOException {
        endpoint = transport.createEndpoint(socketId, sizes);
        byte[] info = endpoint.localInfo(clientInfo, localAddress), ticket = tickets.issue(clientPublicKey);
        ByteBuffer message = BootstrapProtocol.serverInfo(info, ticket, BootstrapKeys.infoMac(key, transcript, info, ticket));
        if (resumedReply == null) {
            return message;
        }
        return ByteBuffer.allocate(resumedReply.remaining() + message.remaining()).put(resumedReply).put(message).flip();
    }

    /**
     * After {@link #create}: whether the endpoint connects without the client's help
     * ({@link Endpoint#connectsBeforeAnswer}).
     */
    public boolean connectsBeforeAnswer() {
        return endpoint.connectsBeforeAnswer();
    }

    /** Connects the endpoint to the client's (step 4); the transport admits the client with the pair key. */
    public void connect(InetAddress peer) throws IOException {
        Endpoint connecting = endpoint;
        endpoint = null;
        try {
            channel = connecting.connect(clientInfo, peer, key);
        } catch (IOException | RuntimeException e) {
            closeQuietly(connecting); // a connect that failed may have left it open
            throw e;
        }
    }

    /** The connected channel, once {@link #connect} returned; from now on the caller's. */
    public Channel takeChannel() {
        Channel taken = channel;
        channel = null;
        return taken;
    }

    /** Releases the endpoint, or the channel it became, after a failure. */
    public void abandon() {
        if (channel != null) {
            closeQuietly(channel);
            channel = null;
        } else if (endpoint != null) {
            closeQuietly(endpoint);
            endpoint = null;
        }
    }

    private static void closeQuietly(Closeable resource) {
        try {
            resource.close();
        } catch (IOException | RuntimeException e) {
            // the failure that led here is what gets reported
        }
    }
}
