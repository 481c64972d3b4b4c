package org.aldeia.vapi;

import java.io.IOException;
import java.net.InetAddress;
import org.aldeia.core.spi.PeerKeys;

/**
 * What a VAPI library needs, beyond the LID and QP number, to reach a peer and to admit only
 * that peer: MicroVAPI passes the peer's DECK contact this way and hands DECK the pair's key,
 * checking that a peer it knows keeps its key; real verbs need nothing ({@link #none()}).
 */
public interface PeerIntroducer {

    /** The client side's bytes appended to its connection information; may be empty, never null. */
    byte[] localExtra();

    /**
     * The server side's bytes, in answer to the client whose extra bytes are {@code remoteExtra}
     * and whose bootstrap arrived on {@code localAddress}; may open what that client needs to
     * reach this side. By default {@link #localExtra()}.
     */
    default byte[] localExtra(byte[] remoteExtra, InetAddress localAddress) throws IOException {
        return localExtra();
    }

    /**
     * The introducer's half of {@link org.aldeia.core.spi.Endpoint#connectsBeforeAnswer}: whether
     * the server side, having answered with {@code answer} ({@link #localExtra(byte[],
     * InetAddress)}), reaches that client without the client acting on the answer, so that its
     * queue pair connects before the answer goes. False by default.
     */
    default boolean connectsBeforeAnswer(byte[] answer) {
        return false;
    }

    /** This process's public key for the bootstrap ({@link PeerKeys}). */
    byte[] publicKey();

    /**
     * The key this process and peer {@code remoteId}, whose public key is {@code peerPublicKey},
     * prove themselves with (see {@link org.aldeia.core.spi.Transport#pairKey}).
     *
     * @throws IOException if the peer's identity does not go with that key
     */
    byte[] pairKey(int remoteId, byte[] peerPublicKey, String peerName) throws IOException;

    /**
     * Whether {@link #pairKey} with {@code peerPublicKey} would cost no key agreement ({@link
     * PeerKeys#knows}); false by default, which only costs a server a hand-off to a worker.
     */
    default boolean knowsKey(byte[] peerPublicKey) {
        return false;
    }

    /**
     * Called by {@code connect} before the queue pair is connected to the peer.
     *
     * @param remoteId the peer's information 1 (LID, or MicroVAPI's DECK id)
     * @param remoteExtra the peer's extra bytes
     * @param peer the address the bootstrap connection reached the peer at
     * @param key the pair's key, proved by both sides in the bootstrap
     */
    void introduce(int remoteId, byte[] remoteExtra, InetAddress peer, byte[] key) throws IOException;

    /**
     * For real verbs: no extra bytes, no introduction; the bootstrap's keys are agreed from the
     * processes' key pairs, which makes sure the peer is the process it proved itself to be.
     */
    static PeerIntroducer none() throws IOException {
        PeerKeys keys = new PeerKeys();
        return new PeerIntroducer() {
            @Override
            public byte[] localExtra() {
                return new byte[0];
            }

            @Override
            public byte[] publicKey() {
                return keys.publicKey();
            }

            @Override
            public byte[] pairKey(int remoteId, byte[] peerPublicKey, String peerName) throws IOException {
                return keys.agree(peerPublicKey, peerName);
            }

            @Override
            public boolean knowsKey(byte[] peerPublicKey) {
                return keys.knows(peerPublicKey);
            }

            @Override
            public void introduce(int remoteId, byte[] remoteExtra, InetAddress peer, byte[] key) {
                // real verbs reach the peer by LID and QP number alone
            }
        };
    }
}
