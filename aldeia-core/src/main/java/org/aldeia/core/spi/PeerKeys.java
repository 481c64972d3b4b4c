package org.aldeia.core.spi;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.interfaces.XECPublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPublicKeySpec;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * This process's key pair for the bootstrap, and the pair keys it agrees with its peers: an
 * X25519 key pair made when the transport opens (the private key never leaves this object, and
 * lives as long as the process), and for each peer's public key the pair key
 * HMAC-SHA-256(X25519(our private key, its public key), "aldeia pair key" | both public keys,
 * smaller first). Both processes compute the same pair key, however many bootstraps between them
 * run at once, and nobody else can: a process that claims another's identity but not its key
 * pair gets another key and fails its proof. From the JDK's providers only (javax.crypto).
 */
public final class PeerKeys {

    public static final int KEY_BYTES = 32;
    private static final String CURVE = "X25519";
    private static final byte[] LABEL = "aldeia pair key".getBytes(StandardCharsets.US_ASCII);

    private final KeyPair pair;
    private final byte[] publicKey;
    /**
     * How many agreed pair keys are kept: anybody may send a HELLO with a new public key, so the
     * cache is bounded; a peer pushed out costs one more X25519 on its next connection.
     */
    static final int REMEMBERED = 1024;
    /** Pair keys already agreed, by the peer's public key in hex, least recently used first. */
    private final Map<String, byte[]> agreed = new LinkedHashMap<>(64, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, byte[]> eldest) {
            return size() > REMEMBERED;
        }
    };

    /** How many pair keys are remembered now, for tests. */
    int remembered() {
        synchronized (agreed) {
            return agreed.size();
        }
    }

    /** Makes this process's key pair. */
    public PeerKeys() throws IOException {
        try {
            pair = KeyPairGenerator.getInstance(CURVE).generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IOException("this JDK cannot make the X25519 key pair of the Aldeia bootstrap: " + e, e);
        }
        publicKey = encode((XECPublicKey) pair.getPublic());
    }

    /** This process's public key, 32 bytes (RFC 7748). */
    public byte[] publicKey() {
        return publicKey.clone();
    }

    /** Whether {@code peerPublicKey} is this process's own. */
    public boolean isOwn(byte[] peerPublicKey) {
        return MessageDigest.isEqual(publicKey, peerPublicKey);
    }

    /**
     * Whether the pair key with the process whose public key is {@code peerPublicKey} is already
     * agreed, so that {@link #agree} costs no X25519: a bootstrap server answers such a HELLO at
     * once instead of handing the key agreement to a worker.
     */
    public boolean knows(byte[] peerPublicKey) {
        if (peerPublicKey == null || peerPublicKey.length != KEY_BYTES) {
            return false;
        }
        String peer = HexFormat.of().formatHex(peerPublicKey);
        synchronized (agreed) {
            return agreed.containsKey(peer);
        }
    }

    /**
     * The pair key with the process whose public key is {@code peerPublicKey}.
     *
     * @throws IOException if that is not a usable X25519 public key
     */
    public byte[] agree(byte[] peerPublicKey, String peerName) throws IOException {
        if (peerPublicKey == null || peerPublicKey.length != KEY_BYTES) {
            throw new IOException(peerName + " sent a public key of " + (peerPublicKey == null ? 0 : peerPublicKey.length)
                    + " bytes, not " + KEY_BYTES);
        }
        String peer = HexFormat.of().formatHex(peerPublicKey);
        byte[] key;
        synchronized (agreed) {
            key = agreed.get(peer);
        }
        if (key == null) {
            key = derive(peerPublicKey, peerName); // outside the lock: two at once agree the same key
            synchronized (agreed) {
                agreed.put(peer, key);
            }
        }
        return key.clone();
    }

    private byte[] derive(byte[] peerPublicKey, String peerName) throws IOException {
        try {
            KeyAgreement agreement = KeyAgreement.getInstance(CURVE);
            agreement.init(pair.getPrivate());
            agreement.doPhase(decode(peerPublicKey), true);
            byte[] shared = agreement.generateSecret();
            boolean oursFirst = Arrays.compareUnsigned(publicKey, peerPublicKey) <= 0;
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(shared, "HmacSHA256"));
            mac.update(LABEL);
            mac.update(oursFirst ? publicKey : peerPublicKey);
            return mac.doFinal(oursFirst ? peerPublicKey : publicKey);
        } catch (InvalidKeyException e) {
            throw new IOException(peerName + " sent a public key that agrees no key: " + e.getMessage(), e);
        } catch (GeneralSecurityException e) {
            throw new IOException("X25519 key agreement with " + peerName + " failed: " + e, e);
        }
    }

    /** RFC 7748: the u-coordinate, 32 bytes little-endian. */
    private static byte[] encode(XECPublicKey key) {
        byte[] bigEndian = key.getU().toByteArray();
        byte[] out = new byte[KEY_BYTES];
        for (int i = 0; i < out.length && i < bigEndian.length; i++) {
            out[i] = bigEndian[bigEndian.length - 1 - i];
        }
        return out;
    }

    private static PublicKey decode(byte[] key) throws GeneralSecurityException {
        byte[] bigEndian = new byte[key.length];
        for (int i = 0; i < key.length; i++) {
            bigEndian[i] = key[key.length - 1 - i];
        }
        bigEndian[0] &= 0x7f; // RFC 7748: the top bit of the last byte is ignored
        XECPublicKeySpec spec = new XECPublicKeySpec(NamedParameterSpec.X25519, new BigInteger(1, bigEndian));
        return KeyFactory.getInstance(CURVE).generatePublic(spec);
    }
}
