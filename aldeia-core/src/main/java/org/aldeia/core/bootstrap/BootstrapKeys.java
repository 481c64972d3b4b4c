package org.aldeia.core.bootstrap;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The proofs of the bootstrap, from the JDK's providers only (javax.crypto):
 * <ul>
 *   <li>transcript = SHA-256("aldeia bootstrap 4" | client's HELLO body | server's reply body
 *       without its proof): both public keys, both nonces, the client's ticket and its proof, the
 *       client's endpoint info, the reply's mode and the server's identity;</li>
 *   <li>proof of a ticket = HMAC-SHA-256(pair key, "aldeia client ticket" | SHA-256("aldeia
 *       bootstrap 4" | the HELLO body with zeros for that proof));</li>
 *   <li>proof of a side = HMAC-SHA-256(pair key, "aldeia server" or "aldeia client" |
 *       transcript), compared in constant time;</li>
 *   <li>MAC of the server's INFO = HMAC-SHA-256(pair key, "aldeia server info" | transcript |
 *       the server's endpoint info | the next ticket).</li>
 * </ul>
 * Fresh nonces on both sides make every transcript new, so a proof cannot be replayed; a
 * ticket's proof has no server nonce in it, and a ticket is taken once ({@link ServerTickets}).
 */
public final class BootstrapKeys {

    private static final byte[] TRANSCRIPT_LABEL = "aldeia bootstrap 4".getBytes(StandardCharsets.US_ASCII);
    public static final String SERVER = "aldeia server";
    public static final String CLIENT = "aldeia client";
    private static final String CLIENT_TICKET = "aldeia client ticket";
    private static final String SERVER_INFO = "aldeia server info";
    private static final SecureRandom RANDOM = new SecureRandom();
    /**
     * One digest and one MAC per thread, reset by each use: getInstance searches the providers
     * every time, a few microseconds on every connection's path (client and accepting side).
     */
    private static final ThreadLocal<MessageDigest> SHA256 =
            perThread(() -> MessageDigest.getInstance("SHA-256"), "SHA-256");
    private static final ThreadLocal<Mac> HMAC = perThread(() -> Mac.getInstance("HmacSHA256"), "HMAC-SHA-256");

    /** A JDK algorithm every Java 17 has: one instance per thread (they are not thread-safe). */
    @FunctionalInterface
    private interface Algorithm<T> {
        T get() throws GeneralSecurityException;
    }

    private static <T> ThreadLocal<T> perThread(Algorithm<T> algorithm, String name) {
        return ThreadLocal.withInitial(() -> {
            try {
                return algorithm.get();
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("the JDK has no " + name, e);
            }
        });
    }

    private BootstrapKeys() {}

    /** 32 bytes from the kernel's random source: a nonce or a ticket. */
    public static byte[] nonce() {
        byte[] bytes = new byte[BootstrapProtocol.NONCE_BYTES];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    public static byte[] transcript(byte[] helloBody, byte[] replyCovered) {
        return sha256(helloBody, replyCovered);
    }

    /** The proof that goes with a ticket in a HELLO: the pair key's MAC of the HELLO body without it. */
    public static byte[] ticketProof(byte[] key, byte[] helloBody) {
        return mac(key, CLIENT_TICKET, sha256(BootstrapProtocol.withoutTicketProof(helloBody), new byte[0]), new byte[0]);
    }

    static boolean verifyTicketProof(byte[] key, byte[] helloBody) {
        return MessageDigest.isEqual(ticketProof(key, helloBody), BootstrapProtocol.ticketProof(helloBody));
    }

    private static byte[] sha256(byte[] first, byte[] second) {
        MessageDigest sha = SHA256.get();
        sha.reset(); // a use that threw half-way left its bytes in
        sha.update(TRANSCRIPT_LABEL);
        sha.update(first);
        return sha.digest(second);
    }

    public static byte[] proof(byte[] key, String role, byte[] transcript) {
        return mac(key, role, transcript, new byte[0]);
    }

    public static boolean verify(byte[] key, String role, byte[] transcript, byte[] proof) {
        return MessageDigest.isEqual(proof(key, role, transcript), proof);
    }

    /** The MAC of the server's INFO carrying {@code info} and the next {@code ticket}. */
    static byte[] infoMac(byte[] key, byte[] transcript, byte[] info, byte[] ticket) {
        return mac(key, SERVER_INFO, transcript, ByteBuffer.allocate(info.length + ticket.length).put(info).put(ticket).array());
    }

    public static boolean verifyInfo(byte[] key, byte[] transcript, byte[] info, byte[] ticket, byte[] mac) {
        return MessageDigest.isEqual(infoMac(key, transcript, info, ticket), mac);
    }

    private static byte[] mac(byte[] key, String role, byte[] transcript, byte[] more) {
        try {
            Mac mac = HMAC.get(); // init() starts it afresh with this key
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(role.getBytes(StandardCharsets.US_ASCII));
            mac.update(transcript);
            return mac.doFinal(more);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA-256 refused the pair key", e);
        }
    }
}
