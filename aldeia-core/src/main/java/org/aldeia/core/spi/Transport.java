package org.aldeia.core.spi;

import java.io.Closeable;
import java.io.IOException;

/** A provider's live environment, shared by every Aldeia socket of the JVM. */
public interface Transport extends Closeable {

    /** One line for the log and for users: e.g. "MicroVAPI over DECK dynamic/tcp, mtu 1024". */
    String description();

    /**
     * Creates the queue pair of one socket (step 2 of the connection algorithm), not yet
     * connected.
     *
     * @param socketId the serial id of the Aldeia socket, from 0
     * @param sizes the send ring and receive buffers of this connection (from the socket's
     *     SO_SNDBUF and SO_RCVBUF, or the configuration)
     */
    Endpoint createEndpoint(int socketId, EndpointSizes sizes) throws IOException;

    /** This process's public key, sent in every bootstrap ({@link PeerKeys#publicKey()}). */
    byte[] publicKey();

    /**
     * The key this process and the peer of {@code remoteInfo} (the peer's
     * {@link Endpoint#localInfo()}) prove themselves with, the peer's public key being
     * {@code peerPublicKey}: agreed from the two processes' key pairs ({@link PeerKeys}), or the
     * run secret of a static run. Checks the identity the information claims: a peer this
     * process already knows must come with the key it came with before, and a peer claiming to be
     * this process must have this process's public key. A server calls it before it creates
     * anything for a client, so it is also where a transport checks that the information is its
     * own.
     *
     * @throws IOException if {@code remoteInfo} is not this transport's connection information,
     *     or its identity does not go with {@code peerPublicKey}
     */
    byte[] pairKey(byte[] remoteInfo, byte[] peerPublicKey) throws IOException;
}
