package org.aldeia.core;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The proofs of the bootstrap, from the JDK's providers only (javax.crypto):
 * <ul>
 *   <li>transcript = SHA-256("aldeia bootstrap 3" | client's HELLO body | server's reply body
 *       without its proof): both public keys, both nonces, the client's endpoint info and the
 *       server's identity;</li>
 *   <li>proof of a side = HMAC-SHA-256(pair key, "aldeia server" or "aldeia client" |
 *       transcript), compared in constant time;</li>
 *   <li>MAC of the server's INFO = HMAC-SHA-256(pair key, "aldeia server info" | transcript |
 *       the server's endpoint info).</li>
 * </ul>
 * Fresh nonces on both sides make every transcript new, so a proof cannot be replayed.
 */
final class BootstrapKeys {

    private static final byte[] TRANSCRIPT_LABEL = "aldeia bootstrap 3".getBytes(StandardCharsets.US_ASCII);
    static final String SERVER = "aldeia server";
    static final String CLIENT = "aldeia client";
    private static final String SERVER_INFO = "aldeia server info";
    private static final SecureRandom RANDOM = new SecureRandom();

    private BootstrapKeys() {}

    static byte[] nonce() {
        byte[] bytes = new byte[BootstrapProtocol.NONCE_BYTES];
        RANDOM.nextBytes(bytes);
        return bytes;
    }

    static byte[] transcript(byte[] helloBody, byte[] replyCovered) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(TRANSCRIPT_LABEL);
            sha.update(helloBody);
            return sha.digest(replyCovered);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    static byte[] proof(byte[] key, String role, byte[] transcript) {
        return mac(key, role, transcript, new byte[0]);
    }

    static boolean verify(byte[] key, String role, byte[] transcript, byte[] proof) {
        return MessageDigest.isEqual(proof(key, role, transcript), proof);
    }

    /** The MAC of the server's INFO carrying {@code info}. */
    static byte[] infoMac(byte[] key, byte[] transcript, byte[] info) {
        return mac(key, SERVER_INFO, transcript, info);
    }

    static boolean verifyInfo(byte[] key, byte[] transcript, byte[] info, byte[] mac) {
        return MessageDigest.isEqual(infoMac(key, transcript, info), mac);
    }

    private static byte[] mac(byte[] key, String role, byte[] transcript, byte[] more) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(role.getBytes(StandardCharsets.US_ASCII));
            mac.update(transcript);
            return mac.doFinal(more);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK has no HMAC-SHA-256", e);
        }
    }
}
