package org.aldeia.microvapi;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import org.aldeia.deck.Deck;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.aldeia.vapi.PeerIntroducer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dynamic DECK has no nodes file: each side sends its DECK contact with information 1 and 2
 * (e.g. "port=40123,shm=&lt;boot id&gt;.&lt;node&gt;.&lt;nonce&gt;"), and the receiver makes the peer
 * reachable at the address the bootstrap connection came from, before MicroVAPI clones the
 * peer's mailbox. DECK reaches a peer with the same boot id (this host) through shared memory
 * and any other over tcp; each new peer's route is logged once.
 */
final class DeckPeerIntroducer implements PeerIntroducer {

    private static final Logger LOG = LoggerFactory.getLogger(DeckPeerIntroducer.class);

    /** Peers already introduced: DECK keeps a peer's route for the life of the process. */
    private final Set<Integer> known = ConcurrentHashMap.newKeySet();

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
        if (known.add(remoteId)) {
            LOG.info("Aldeia peer {} (DECK node {}): {}", peer.getHostAddress(), remoteId, Deck.describePeer(remoteId));
        }
    }
}
