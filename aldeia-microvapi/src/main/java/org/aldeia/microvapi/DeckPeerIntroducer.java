package org.aldeia.microvapi;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import org.aldeia.deck.Deck;
import org.aldeia.vapi.PeerIntroducer;

/**
 * Dynamic DECK has no nodes file: each side sends its DECK contact (e.g. "port=40123") with
 * information 1 and 2, and the receiver makes the peer reachable at the address the bootstrap
 * connection came from, before MicroVAPI clones the peer's mailbox.
 */
final class DeckPeerIntroducer implements PeerIntroducer {

    @Override
    public byte[] localExtra() {
        try {
            return Deck.contact().getBytes(StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalStateException("DECK has no contact address: " + e.getMessage(), e);
        }
    }

    @Override
    public void introduce(int remoteId, byte[] remoteExtra, InetAddress peer) throws IOException {
        if (remoteId == Deck.node()) {
            return; // a socket connected to its own JVM: DECK reaches its own mailboxes already
        }
        Deck.addPeer(remoteId, peer.getHostAddress(), new String(remoteExtra, StandardCharsets.US_ASCII));
    }
}
