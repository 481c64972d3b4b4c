package org.aldeia.core.spi;

import java.io.Closeable;
import java.io.IOException;

/** A provider's live environment, shared by every Aldeia socket of the JVM. */
public interface Transport extends Closeable {

    /** One line for the log and for users: e.g. "MicroVAPI over DECK dynamic/tcp, mtu 1024". */
    String description();

    /**
     * Where this transport's endpoints reach, for the choice of a route per peer: two
     * processes whose transports name the same route can connect through them ("deck": DECK's
     * shared memory and tcp; "fabric " and libfabric's provider and fabric names). 1 to 200
     * printable ASCII characters. "default" unless a provider says otherwise.
     */
    default String route() {
        return "default";
    }

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
     * Who this process is to its peers' transports, as the pair key depends on it (VAPI:
     * information 1, the LID or MicroVAPI's DECK id). A server sends it in its reply, before the
     * client has proved itself, instead of its endpoint's information, which it creates only
     * for a client that has.
     */
    byte[] identity();

    /**
     * The identity a peer's connection information ({@link Endpoint#localInfo()}) carries.
     *
     * @throws IOException if {@code remoteInfo} is not this transport's connection information
     */
    byte[] identityOf(byte[] remoteInfo) throws IOException;

    /**
     * The key this process and the peer whose identity is {@code remoteIdentity} prove
     * themselves with, the peer's public key being {@code peerPublicKey}: agreed from the two
     * processes' key pairs ({@link PeerKeys}), or the run secret of a static run. Checks the
     * identity: a peer this process already knows must come with the key it came with before,
     * and a peer claiming to be this process must have this process's public key.
     *
     * @throws IOException if {@code remoteIdentity} is not one of this transport's, or does not
     *     go with {@code peerPublicKey}
     */
    byte[] pairKey(byte[] remoteIdentity, byte[] peerPublicKey) throws IOException;

    /**
     * Whether {@link #pairKey} with {@code peerPublicKey} would cost no key agreement (the pair's
     * key is already known, e.g. from an earlier connection between the same two processes): a
     * server then answers that client's HELLO at once, on the thread that read it, rather than
     * handing it to a worker (a hand-off costs a thread wake-up, a key agreement far more). False
     * by default: every HELLO goes to a worker.
     */
    default boolean knowsPairKey(byte[] peerPublicKey) {
        return false;
    }
}
