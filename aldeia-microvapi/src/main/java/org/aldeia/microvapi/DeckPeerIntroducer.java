package org.aldeia.microvapi;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.aldeia.core.spi.PeerKeys;
import org.aldeia.deck.Deck;
import org.aldeia.vapi.PeerIntroducer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How MicroVAPI's DECK learns its peers and their keys from the bootstrap.
 *
 * <p>Dynamic DECK has no nodes file: the client sends its DECK contact with information 1 and 2
 * ({@code shm=<boot id>.<node>.<nonce>}, or {@code tcp}), the server answers with what the
 * client needs to reach it ({@link Deck#contactFor}: its shared memory for a client on this
 * host, else a DECK tcp port opened then, on the address the bootstrap came to or on
 * {@code deck_listen_address}, which the contact then names: {@code port=<n>,host=<address>}),
 * and each side makes the other reachable with the pair's key before MicroVAPI clones the peer's
 * mailbox.
 * DECK admits the peer on its data path only with that key. Each new peer's route is logged once.
 *
 * <p>Keys: in a dynamic run the pair key is agreed from the two processes' key pairs
 * ({@link PeerKeys}); DECK keeps it with the peer's id, so a process that claims the id of a peer
 * this one knows, but has another key pair, is refused, and so is one that claims this process's
 * own id. A static run's processes know each other from the nodes file: no extra bytes, and every
 * pair's key is the run key ({@link Deck#peerKey}).
 */
final class DeckPeerIntroducer implements PeerIntroducer {

    private static final Logger LOG = LoggerFactory.getLogger(DeckPeerIntroducer.class);
    /** How a contact that names a process's shared memory begins (native-c/deck/auto_transport.c). */
    private static final String SHARED_MEMORY_CONTACT = "shm=";

    private final boolean staticRun;
    /** deck_listen_address; null: the address each client's bootstrap came to. */
    private final String listenAddress;
    private final PeerKeys keys;
    /** Peers already introduced: DECK keeps a peer's route for the life of the process. */
    private final Set<Integer> known = ConcurrentHashMap.newKeySet();

    DeckPeerIntroducer(boolean staticRun, String listenAddress) throws IOException {
        this.staticRun = staticRun;
        this.listenAddress = listenAddress;
        this.keys = new PeerKeys();
    }

    @Override
    public byte[] localExtra() {
        if (staticRun) {
            return new byte[0];
        }
        try {
            return Deck.contact().getBytes(StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalStateException("DECK has no contact: " + e.getMessage(), e);
        }
    }

    @Override
    public byte[] localExtra(byte[] remoteExtra, InetAddress localAddress) throws IOException {
        if (staticRun) {
            return new byte[0];
        }
        String at = listenAddress != null ? listenAddress : localAddress.getHostAddress();
        String contact = Deck.contactFor(new String(remoteExtra, StandardCharsets.US_ASCII), at);
        if (listenAddress != null && contact.startsWith("port=")) {
            contact += ",host=" + listenAddress; // not where the client's bootstrap went: say where
        }
        return contact.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The answer names this process's shared memory: DECK reaches the client through sci, whose
     * mailboxes this side finds in the client's segment by itself. An answer naming a tcp port
     * waits for the client to connect to it, and a static run's connections are DECK's own.
     */
    @Override
    public boolean connectsBeforeAnswer(byte[] answer) {
        return !staticRun && new String(answer, StandardCharsets.US_ASCII).startsWith(SHARED_MEMORY_CONTACT);
    }

    @Override
    public byte[] publicKey() {
        return keys.publicKey();
    }

    @Override
    public byte[] pairKey(int remoteId, byte[] peerPublicKey, String peerName) throws IOException {
        if (staticRun) {
            return Deck.peerKey(remoteId).orElseThrow(() -> new IOException(peerName + " is not a node of this static "
                    + "DECK run (deck_nodes in its configuration and this one's differ?)"));
        }
        boolean self = remoteId == Deck.node();
        if (self != keys.isOwn(peerPublicKey)) {
            throw new IOException(peerName + (self ? " claims to be this process, DECK node " + remoteId
                    + ", with another key pair" : " has this process's own key pair under another DECK id"));
        }
        byte[] key = keys.agree(peerPublicKey, peerName);
        Optional<byte[]> known = self ? Optional.empty() : Deck.peerKey(remoteId);
        if (known.isPresent() && !MessageDigest.isEqual(known.get(), key)) {
            throw new IOException(peerName + " claims DECK id " + remoteId + ", which this process knows with another "
                    + "key pair: another process claims that peer's identity");
        }
        return key;
    }

    /** A static run's keys are the run key, at hand; a dynamic run's once agreed ({@link PeerKeys#knows}). */
    @Override
    public boolean knowsKey(byte[] peerPublicKey) {
        return staticRun || keys.knows(peerPublicKey);
    }

    @Override
    public void introduce(int remoteId, byte[] remoteExtra, InetAddress peer, byte[] key) throws IOException {
        if (staticRun || remoteId == Deck.node()) {
            return; // the nodes file names every peer; a socket to its own JVM needs no route
        }
        Deck.addPeer(remoteId, peer.getHostAddress(), new String(remoteExtra, StandardCharsets.US_ASCII), key);
        if (known.add(remoteId)) {
            LOG.info("Aldeia peer {} (DECK node {}): {}", peer.getHostAddress(), remoteId, Deck.describePeer(remoteId));
        }
    }
}
