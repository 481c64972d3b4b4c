package org.aldeia.core;

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
 * written by {@link BootstrapAcceptor}'s selector; {@link #prove}, {@link #create} and
 * {@link #connect} run on its workers. A client that has not proved itself costs a key agreement
 * and nothing else: the endpoint is created only once its proof was right.
 */
final class ServerBootstrap {

    private final String peerName;
    private byte[] transcript;
    private byte[] key;
    private byte[] clientInfo;
    private Endpoint endpoint;
    private Channel channel;

    ServerBootstrap(String peerName) {
        this.peerName = peerName;
    }

    /**
     * Checks the client's information and identity and makes the reply, with our proof of the
     * pair's key and our identity.
     *
     * @param helloBody the client's HELLO after its length, of a valid length
     */
    ByteBuffer prove(Transport transport, byte[] helloBody) throws IOException {
        clientInfo = BootstrapProtocol.info(helloBody);
        byte[] identity = transport.identity();
        key = transport.pairKey(transport.identityOf(clientInfo), BootstrapProtocol.publicKey(helloBody));
        byte[] ours = transport.publicKey(), nonce = BootstrapKeys.nonce();
        transcript = BootstrapKeys.transcript(helloBody, BootstrapProtocol.body(ours, nonce, identity));
        return BootstrapProtocol.reply(ours, nonce, BootstrapKeys.proof(key, BootstrapKeys.SERVER, transcript), identity);
    }

    /** Checks the client's proof: it holds the pair's key, so it is the process it claims to be. */
    void checkProof(byte[] proof) throws IOException {
        if (!BootstrapKeys.verify(key, BootstrapKeys.CLIENT, transcript, proof)) {
            throw new IOException(peerName + " failed to prove it holds the key of the process it claims to be");
        }
    }

    /**
     * Creates the endpoint (step 2) and makes the INFO that tells the client its information,
     * vouched for by the pair key.
     *
     * @param localAddress where the client's connection arrived: a listener the client needs is
     *     opened there
     */
    ByteBuffer create(Transport transport, int socketId, EndpointSizes sizes, InetAddress localAddress)
            throws IOException {
        endpoint = transport.createEndpoint(socketId, sizes);
        byte[] info = endpoint.localInfo(clientInfo, localAddress);
        return BootstrapProtocol.serverInfo(info, BootstrapKeys.infoMac(key, transcript, info));
    }

    /** Connects the endpoint to the client's (step 4); the transport admits the client with the pair key. */
    void connect(InetAddress peer) throws IOException {
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
    Channel takeChannel() {
        Channel taken = channel;
        channel = null;
        return taken;
    }

    /** Releases the endpoint, or the channel it became, after a failure. */
    void abandon() {
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
