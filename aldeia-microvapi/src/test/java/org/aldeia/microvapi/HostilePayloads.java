package org.aldeia.microvapi;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Random;

/**
 * What outsiders send ({@link HostileClients}), built from the wire layouts as an outsider
 * would read them in the documentation: the Aldeia bootstrap's
 * (org.aldeia.core.bootstrap.BootstrapProtocol), VAPI connection information (org.aldeia.vapi.ConnectionInfo)
 * and DECK tcp's frames (native-c/deck/tcp.h).
 */
final class HostilePayloads {

    private static final int ALDEIA_MAGIC = 0x414C4445;   // "ALDE"
    /** The bootstrap's current version: a HELLO of another version is dropped before it is read. */
    private static final int ALDEIA_VERSION = 7;
    /** The route every DECK-based Aldeia process offers (org.aldeia.core.spi.Transport#route). */
    private static final byte[] DECK_ROUTE = "deck".getBytes(StandardCharsets.US_ASCII);
    private static final int KEY_NONCE_TICKET_PROOF = 4 * 32;
    /**
     * The most a REPLY in CHALLENGE mode can be: start (8), length (4), mode (1), key, nonce and
     * proof (3 x 32), an identity of at most 64 bytes (org.aldeia.core.bootstrap.BootstrapProtocol).
     */
    static final int MOST_CHALLENGE_BYTES = 8 + 4 + 1 + 3 * 32 + 64;
    private static final int DECK_AUTH1 = 1;
    private static final int DECK_AUTH3 = 3;
    private static final int DECK_DATA = 4;
    private static final Random RANDOM = new SecureRandom();

    private HostilePayloads() {
    }

    static byte[] nothing() {
        return new byte[0];
    }

    /** Random bytes that do not start with the bootstrap's magic. */
    static byte[] garbage() {
        byte[] b = random(64);
        b[0] = 'x';
        return b;
    }

    static byte[] httpGet() {
        return "GET / HTTP/1.1\r\nHost: victim\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** The bootstrap's start, then a whole HELLO's length and only the first half of its body. */
    static byte[] truncatedHello() {
        byte[] whole = hello(1, "tcp");
        return Arrays.copyOf(whole, 12 + (whole.length - 12) / 2);
    }

    /**
     * The bootstrap's start and a whole HELLO on the DECK route: a random public key and nonce,
     * no ticket, and VAPI connection information with the DECK id and contact given (queue pair
     * 1, mtu 1024, no window, no address). A server that cannot refute the identity it claims
     * answers it with a CHALLENGE; one that can (AttackTest) says nothing.
     */
    static byte[] hello(int deckId, String deckContact) {
        byte[] extra = deckContact.getBytes(StandardCharsets.US_ASCII);
        byte[] info = ByteBuffer.allocate(18 + extra.length).putInt(deckId).putInt(1).putInt(1024).putInt(0)
                .putShort((short) 0).put(extra).array();
        int length = KEY_NONCE_TICKET_PROOF + 1 + DECK_ROUTE.length + info.length;
        return ByteBuffer.allocate(8 + 4 + length).putInt(ALDEIA_MAGIC).putInt(ALDEIA_VERSION).putInt(length)
                .put(random(64)).put(new byte[64]).put((byte) DECK_ROUTE.length).put(DECK_ROUTE).put(info).array();
    }

    /** As {@link #hello}, followed by 32 random bytes as the answer to the server's CHALLENGE. */
    static byte[] helloWithMadeUpProof(int deckId, String deckContact) {
        byte[] hello = hello(deckId, deckContact);
        return ByteBuffer.allocate(hello.length + 32).put(hello).put(random(32)).array();
    }

    /**
     * DECK tcp: an AUTH1 that claims to be node {@code claimed} connecting to {@code victim},
     * then an AUTH3 whose MAC is made up (the claimer does not hold the pair's key).
     */
    static byte[] deckImpersonation(int claimed, int victim) {
        ByteBuffer b = ByteBuffer.allocate(24 + 24 + 24 + 32);  // header, AUTH1 payload, header, AUTH3 payload
        frame(b, DECK_AUTH1, claimed, victim, 24).putInt(1).putInt(0).put(random(16));
        frame(b, DECK_AUTH3, claimed, victim, 32).put(random(32));
        return b.array();
    }

    /** DECK tcp: a DATA frame that announces 2^63 - 1 bytes, before any handshake. */
    static byte[] deckHugeUnprovedFrame(int claimed) {
        ByteBuffer b = ByteBuffer.allocate(24 + 1024);
        frame(b, DECK_DATA, claimed, 0x10000, Long.MAX_VALUE).put(random(1024));
        return b.array();
    }

    private static ByteBuffer frame(ByteBuffer b, int type, int src, int index, long len) {
        return b.putInt(type).putInt(src).putInt(index).putInt(0).putLong(len); // 0: reserved
    }

    private static byte[] random(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }
}
