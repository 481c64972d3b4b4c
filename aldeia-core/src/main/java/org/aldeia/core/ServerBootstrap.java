package org.aldeia.core;

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
 * written by {@link BootstrapAcceptor}'s selector; {@link #answer} and {@link #connect} are
 * native work and run on its workers. Nothing is created for a client before its HELLO was
 * complete and its connection information and identity checked by the transport.
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
     * Checks the client's information and identity, creates the endpoint and makes the reply,
     * with our proof of the pair's key.
     *
     * @param helloBody the client's HELLO after its length, of a valid length
     * @param localAddress where the client's connection arrived: a listener the client needs is
     *     opened there
     */
    ByteBuffer answer(Transport transport, int socketId, EndpointSizes sizes, byte[] helloBody,
            InetAddress localAddress) throws IOException {
        clientInfo = BootstrapProtocol.info(helloBody);
        key = transport.pairKey(clientInfo, BootstrapProtocol.publicKey(helloBody)); // checks info and identity
        endpoint = transport.createEndpoint(socketId, sizes);
        byte[] info = endpoint.localInfo(clientInfo, localAddress);
        byte[] ours = transport.publicKey(), nonce = BootstrapKeys.nonce();
        transcript = BootstrapKeys.transcript(helloBody, BootstrapProtocol.body(ours, nonce, info));
        return BootstrapProtocol.reply(ours, nonce, BootstrapKeys.proof(key, BootstrapKeys.SERVER, transcript), info);
    }

    /** Checks the client's proof: it holds the pair's key, so it is the process it claims to be. */
    void checkProof(byte[] proof) throws IOException {
        if (!BootstrapKeys.verify(key, BootstrapKeys.CLIENT, transcript, proof)) {
            throw new IOException(peerName + " failed to prove it holds the key of the process it claims to be");
        }
    }

    /** Connects the endpoint to the client's (step 4); the transport admits the client with the pair key. */
    Channel connect(InetAddress peer) throws IOException {
        channel = endpoint.connect(clientInfo, peer, key);
        endpoint = null;
        return channel;
    }

    /** Releases what was created, after a failure: the endpoint, or the channel it became. */
    void abandon() {
        try {
            if (channel != null) {
                channel.close();
            } else if (endpoint != null) {
                endpoint.close();
            }
        } catch (IOException | RuntimeException e) {
            // the failure that led here is what gets reported
        }
        channel = null;
        endpoint = null;
    }
}
