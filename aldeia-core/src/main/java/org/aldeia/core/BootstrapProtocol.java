package org.aldeia.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The messages of the bootstrap (thesis Fig. 4.4, steps 1 to 5), over the plain TCP connection
 * a client makes to the application's port. Big-endian.
 *
 * <pre>
 * client -> server, once its endpoint exists (a server that also takes plain TCP clients tells
 * an Aldeia client by these 8 bytes):
 *     +-----------+-------------+
 *     | magic (4) | version (4) |        "ALDE", VERSION
 *     +-----------+-------------+
 * client -> server, right behind them, in the same segment (HELLO):
 *     +------------+----------------+------------+-----------------------------------+
 *     | length (4) | public key (32)| nonce (32) | endpoint info (length - 64 bytes) |
 *     +------------+----------------+------------+-----------------------------------+
 * server -> client (REPLY), only once a valid HELLO is in (a client that sent anything else,
 * or too little, hears nothing at all); the server has created nothing for the client yet:
 *     +-----------+-------------+------------+-----------------+------------+------------+-----------------------+
 *     | magic (4) | version (4) | length (4) | public key (32) | nonce (32) | proof (32) | identity (length - 96)|
 *     +-----------+-------------+------------+-----------------+------------+------------+-----------------------+
 * client -> server:
 *     +------------+
 *     | proof (32) |
 *     +------------+
 * server -> client (INFO), once the proof was right and the server's endpoint is created:
 *     +------------+------------------------------------+------------+
 *     | length (4) | endpoint info (length bytes)       | MAC (32)   |
 *     +------------+------------------------------------+------------+
 * then both connect their endpoints at once (a transport may need the client's connect to
 * finish the server's, when the client cannot be reached first), and
 * server -> client, once its endpoint is connected:               CONNECTED (1 byte, value 1)
 * client -> server, once its endpoint and the server's are:       CONNECTED (1 byte, value 1)
 * so neither side sends data before the other side's endpoint admits it.
 * </pre>
 *
 * <p>The public key is the sending process's X25519 key ({@link org.aldeia.core.spi.PeerKeys});
 * the nonce, 32 fresh random bytes; the identity, who the server is to the transport
 * ({@link org.aldeia.core.spi.Transport#identity}). The pair key comes from the transport
 * ({@link org.aldeia.core.spi.Transport#pairKey}); each proof is a MAC with it of everything
 * sent before, and the INFO's MAC covers that and the info ({@link BootstrapKeys}), so no side
 * can be impersonated or replayed without the key. The endpoint info is the transport's
 * ({@link org.aldeia.core.spi.Endpoint}), at most {@link #MAX_INFO_LENGTH} bytes, the identity
 * at most {@link #MAX_IDENTITY_LENGTH}: every length is checked before anything is allocated.
 */
final class BootstrapProtocol {

    /** "ALDE". */
    static final int MAGIC = 0x414C4445;
    /** 3: nothing is created for a client before its proof (2 answered the HELLO with the endpoint info). */
    static final int VERSION = 3;
    static final int START_BYTES = 8;
    static final int KEY_BYTES = 32;
    static final int NONCE_BYTES = 32;
    static final int PROOF_BYTES = 32;
    static final int CONNECTED = 1;
    /** Connection information is a few dozen bytes; anything bigger is garbage. */
    static final int MAX_INFO_LENGTH = 4096;
    /** An identity is a few bytes (VAPI: 4). */
    static final int MAX_IDENTITY_LENGTH = 64;
    static final int HELLO_FIXED = KEY_BYTES + NONCE_BYTES;
    static final int MAX_HELLO_LENGTH = HELLO_FIXED + MAX_INFO_LENGTH;
    static final int REPLY_FIXED = KEY_BYTES + NONCE_BYTES + PROOF_BYTES;
    static final int MAX_REPLY_LENGTH = REPLY_FIXED + MAX_IDENTITY_LENGTH;
    /** The client's own bound on each wait for the server. */
    static final int CLIENT_TIMEOUT_MILLIS = 30_000;

    private BootstrapProtocol() {}

    /** What a client sends first. */
    static ByteBuffer start() {
        return ByteBuffer.allocate(START_BYTES).putInt(MAGIC).putInt(VERSION).flip();
    }

    /** The client's HELLO: length, then {@code body}. */
    static ByteBuffer hello(byte[] body) {
        return ByteBuffer.allocate(Integer.BYTES + body.length).putInt(body.length).put(body).flip();
    }

    /** What a client sends first: the start, then its HELLO, in one buffer (one write, one segment). */
    static ByteBuffer startAndHello(byte[] body) {
        return ByteBuffer.allocate(START_BYTES + Integer.BYTES + body.length).put(start()).put(hello(body)).flip();
    }

    /** Whether {@code length}, read from a HELLO, is one a client can send. */
    static boolean validHelloLength(int length) {
        return length >= HELLO_FIXED && length <= MAX_HELLO_LENGTH;
    }

    /** A HELLO body (public key, nonce, endpoint info), or what a reply's proof covers (public key, nonce, identity). */
    static byte[] body(byte[] publicKey, byte[] nonce, byte[] infoOrIdentity) {
        return ByteBuffer.allocate(HELLO_FIXED + infoOrIdentity.length).put(publicKey).put(nonce).put(infoOrIdentity).array();
    }

    /** The public key at the start of a HELLO body (of a valid length). */
    static byte[] publicKey(byte[] body) {
        return Arrays.copyOf(body, KEY_BYTES);
    }

    /** The endpoint info after the public key and nonce of a HELLO body. */
    static byte[] info(byte[] body) {
        return Arrays.copyOfRange(body, HELLO_FIXED, body.length);
    }

    /** The whole reply: magic, version, length, public key, nonce, proof, identity. */
    static ByteBuffer reply(byte[] publicKey, byte[] nonce, byte[] proof, byte[] identity) {
        int length = REPLY_FIXED + identity.length;
        return ByteBuffer.allocate(START_BYTES + Integer.BYTES + length).putInt(MAGIC).putInt(VERSION).putInt(length)
                .put(publicKey).put(nonce).put(proof).put(identity).flip();
    }

    /** The whole INFO: length, endpoint info, MAC. */
    static ByteBuffer serverInfo(byte[] info, byte[] mac) {
        return ByteBuffer.allocate(Integer.BYTES + info.length + PROOF_BYTES).putInt(info.length).put(info).put(mac).flip();
    }

    /** A server's reply body (after magic, version and length), taken apart. */
    record Reply(byte[] publicKey, byte[] nonce, byte[] proof, byte[] identity) {

        static Reply parse(byte[] body, String peerName) throws IOException {
            if (body.length < REPLY_FIXED) {
                throw new IOException(peerName + " sent a bootstrap reply of " + body.length + " bytes, too short");
            }
            return new Reply(Arrays.copyOf(body, KEY_BYTES), Arrays.copyOfRange(body, KEY_BYTES, HELLO_FIXED),
                    Arrays.copyOfRange(body, HELLO_FIXED, REPLY_FIXED), Arrays.copyOfRange(body, REPLY_FIXED, body.length));
        }

        /** What the server's proof covers. */
        byte[] covered() {
            return body(publicKey, nonce, identity);
        }
    }
}
