package org.aldeia.vapi;

import java.io.IOException;
import java.net.InetAddress;

/**
 * What a VAPI library needs, beyond the LID and QP number, to reach a peer. MicroVAPI in
 * dynamic DECK mode passes the peer's DECK contact address this way; real verbs need nothing
 * ({@link #NONE}).
 */
public interface PeerIntroducer {

    /** Needs nothing: no extra bytes, no introduction. */
    PeerIntroducer NONE = new PeerIntroducer() {
        @Override
        public byte[] localExtra() {
            return new byte[0];
        }

        @Override
        public void introduce(int remoteId, byte[] remoteExtra, InetAddress peer) {
            // real verbs reach the peer by LID and QP number alone
        }
    };

    /** Bytes appended to this side's connection information; may be empty, never null. */
    byte[] localExtra();

    /**
     * Called by {@code connect} before the queue pair is connected to the peer.
     *
     * @param remoteId the peer's information 1 (LID, or MicroVAPI's DECK id)
     * @param remoteExtra the peer's {@link #localExtra()}
     * @param peer the address the bootstrap connection reached the peer at
     */
    void introduce(int remoteId, byte[] remoteExtra, InetAddress peer) throws IOException;
}
