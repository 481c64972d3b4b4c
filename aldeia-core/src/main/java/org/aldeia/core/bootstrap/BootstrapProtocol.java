package org.aldeia.core.bootstrap;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.aldeia.core.upgrade.TcpFirstChannel;
import org.aldeia.core.upgrade.UnconfirmedChannel;

/**
 * The messages of the bootstrap (thesis Fig. 4.4, steps 1 to 5), over the plain TCP connection
 * a client makes to the application's port. Big-endian.
 *
 * <pre>
 * client -> server, first (a server that also takes plain TCP clients tells an Aldeia client by
 * these 8 bytes):
 *     +-----------+-------------+
 *     | magic (4) | version (4) |        "ALDE", VERSION
 *     +-----------+-------------+
 * then, in the same segment, either
 *   TCP first (aldeia.conf upgrade_after > 0): the connection itself carries the data, on TCP, in
 *   frames, until its client upgrades it in band ({@link TcpFirstChannel}); the server hands the
 *   socket to accept at once and answers with its own magic and version in front of its first frame:
 *     +-----------------+
 *     | TCP_FIRST = -1  |        (in place of a HELLO's length)
 *     +-----------------+
 *   the upgrade is the bootstrap below, its messages in control frames of that connection;
 * or
 *   a new connection set up at once (upgrade_after = 0, the thesis's bootstrap), the HELLO:
 *     +------------+-----------------+------------+-------------+-------------------+-----------+-----------+------------------------+
 *     | length (4) | public key (32) | nonce (32) | ticket (32) | ticket proof (32) | route (1) | route (r) | endpoint info (the rest)|
 *     +------------+-----------------+------------+-------------+-------------------+-----------+-----------+------------------------+
 *     ticket and its proof are zeros unless the client holds a ticket this server gave it (below);
 *     route: the length, then the name (ASCII), of the route the endpoint is on
 *     ({@link org.aldeia.core.spi.Transport#route}, e.g. "deck", "fabric verbs;IB-0xfe80::")
 * server -> client, when the HELLO's route is not one of the server's (UNROUTED; nothing was
 * created or computed for it), then the server waits for one more HELLO on this connection:
 *     +-----------+-------------+------------+----------+------------------------------------------+
 *     | magic (4) | version (4) | length (4) | mode (1) | the server's routes ('\n' between them)   |
 *     +-----------+-------------+------------+----------+------------------------------------------+
 * server -> client (REPLY), only once a valid HELLO is in (a client that sent anything else,
 * or too little, hears nothing at all):
 *     +-----------+-------------+------------+----------+-----------------+------------+------------+-----------------------+
 *     | magic (4) | version (4) | length (4) | mode (1) | public key (32) | nonce (32) | proof (32) | identity (length - 97)|
 *     +-----------+-------------+------------+----------+-----------------+------------+------------+-----------------------+
 *   mode CHALLENGE: the server has created nothing for the client yet; client -> server:
 *     +------------+
 *     | proof (32) |
 *     +------------+
 *   mode RESUMED: the ticket proved the client; the INFO follows the REPLY in the same write.
 * server -> client (INFO), once the client is proved and the server's endpoint is created:
 *     +------------+------------------------------------+-----------------+------------+
 *     | length (4) | endpoint info (length bytes)       | next ticket (32)| MAC (32)   |
 *     +------------+------------------------------------+-----------------+------------+
 * then both connect their endpoints at once (a transport may need the client's connect to
 * finish the server's, when the client cannot be reached first; a server endpoint that needs
 * nothing of the client connects before the INFO goes, and the CONNECTED follows it in the
 * same write: {@link org.aldeia.core.spi.Endpoint#connectsBeforeAnswer}), and
 * server -> client, once its endpoint is connected:               CONNECTED (1 byte, value 1)
 * client -> server, once its endpoint and the server's are:       CONNECTED (1 byte, value 1)
 * so neither side sends data before the other side's endpoint admits it (the server's socket
 * may reach accept before the client's CONNECTED: its sends wait for it, {@link UnconfirmedChannel}).
 * </pre>
 *
 * <p>The public key is the sending process's X25519 key ({@link org.aldeia.core.spi.PeerKeys});
 * the nonce, 32 fresh random bytes; the identity, who the server is to the transport
 * ({@link org.aldeia.core.spi.Transport#identity}). The pair key comes from the transport
 * ({@link org.aldeia.core.spi.Transport#pairKey}); each proof is a MAC with it of everything
 * sent before, and the INFO's MAC covers that, the info and the next ticket ({@link BootstrapKeys}),
 * so no side can be impersonated or replayed without the key. The endpoint info is the transport's
 * ({@link org.aldeia.core.spi.Endpoint}), at most {@link #MAX_INFO_LENGTH} bytes, the identity
 * at most {@link #MAX_IDENTITY_LENGTH}: every length is checked before anything is allocated.
 *
 * <p>A ticket saves the CHALLENGE round trip of the next connection between the same two
 * processes, as a session ticket resumes TLS: 32 random bytes the server issued in an INFO, which
 * it accepts once ({@link ServerTickets}) from the client it issued them to, with the HELLO's
 * ticket proof (a MAC with the pair key of the whole HELLO, {@link BootstrapKeys#ticketProof}). A
 * replayed HELLO finds its ticket spent; a ticket the server does not know (spent, expired,
 * another process on the port) gets the CHALLENGE, as a HELLO without one.
 */
public final class BootstrapProtocol {

    /** "ALDE". */
    public static final int MAGIC = 0x414C4445;
    /**
     * 7: TCP-first connections and their upgrades (6: a VAPI endpoint's information carries its
     * receive window; 5: a HELLO names its route; 4: one route per process; 3: every client
     * answered a challenge).
     */
    public static final int VERSION = 7;
    /** In place of a HELLO's length: a TCP-first connection. */
    public static final int TCP_FIRST = -1;
    public static final int START_BYTES = 8;
    public static final int KEY_BYTES = 32;
    static final int NONCE_BYTES = 32;
    public static final int TICKET_BYTES = 32;
    public static final int PROOF_BYTES = 32;
    public static final int CONNECTED = 1;
    /** REPLY modes: the client must prove the key now, or its ticket did. */
    public static final byte CHALLENGE = 0;
    public static final byte RESUMED = 1;
    /** The reply to a HELLO on a route the server does not have: its routes instead. */
    public static final byte UNROUTED = 2;
    /** Connection information is a few dozen bytes; anything bigger is garbage. */
    public static final int MAX_INFO_LENGTH = 4096;
    /** An identity is a few bytes (VAPI: 4). */
    static final int MAX_IDENTITY_LENGTH = 64;
    /** A route's name: "deck", "fabric " and libfabric's provider and fabric names. */
    public static final int MAX_ROUTE_LENGTH = 200;
    /** The routes an UNROUTED reply may list. */
    public static final int MAX_ROUTES = 4;
    static final int MAX_UNROUTED_LENGTH = 1 + MAX_ROUTES * (MAX_ROUTE_LENGTH + 1);
    private static final int TICKET_OFFSET = KEY_BYTES + NONCE_BYTES;
    private static final int TICKET_PROOF_OFFSET = TICKET_OFFSET + TICKET_BYTES;
    public static final int HELLO_FIXED = TICKET_PROOF_OFFSET + PROOF_BYTES;
    public static final int MAX_HELLO_LENGTH = HELLO_FIXED + 1 + MAX_ROUTE_LENGTH + MAX_INFO_LENGTH;
    public static final int REPLY_FIXED = 1 + KEY_BYTES + NONCE_BYTES + PROOF_BYTES;
    public static final int MAX_REPLY_LENGTH = REPLY_FIXED + MAX_IDENTITY_LENGTH;
    /** The client's own bound on each wait for the server. */
    public static final int CLIENT_TIMEOUT_MILLIS = 30_000;

    private BootstrapProtocol() {}

    /** What a client sends first. */
    public static ByteBuffer start() {
        return ByteBuffer.allocate(START_BYTES).putInt(MAGIC).putInt(VERSION).flip();
    }

    /** The client's HELLO: length, then {@code body}. */
    public static ByteBuffer hello(byte[] body) {
        return ByteBuffer.allocate(Integer.BYTES + body.length).putInt(body.length).put(body).flip();
    }

    /** What a client sends first: the start, then its HELLO, in one buffer (one write, one segment). */
    public static ByteBuffer startAndHello(byte[] body) {
        return ByteBuffer.allocate(START_BYTES + Integer.BYTES + body.length).put(start()).put(hello(body)).flip();
    }

    /** A TCP-first connection's start: magic, version, TCP_FIRST; the server answers {@link #start()}. */
    public static ByteBuffer tcpFirst() {
        return ByteBuffer.allocate(START_BYTES + Integer.BYTES).put(start()).putInt(TCP_FIRST).flip();
    }

    /** Whether {@code length}, read from a HELLO, is one a client can send. */
    public static boolean validHelloLength(int length) {
        return length > HELLO_FIXED && length <= MAX_HELLO_LENGTH;
    }

    /** A HELLO body without a ticket: public key, nonce, zeros, route, endpoint info. */
    public static byte[] body(byte[] publicKey, byte[] nonce, String route, byte[] info) {
        return helloBody(publicKey, nonce, new byte[TICKET_BYTES], new byte[PROOF_BYTES], route, info);
    }

    /** A HELLO body: public key, nonce, ticket, the ticket's proof, route, endpoint info. */
    public static byte[] helloBody(byte[] publicKey, byte[] nonce, byte[] ticket, byte[] ticketProof, String route,
            byte[] info) {
        byte[] name = routeBytes(route);
        return ByteBuffer.allocate(HELLO_FIXED + 1 + name.length + info.length).put(publicKey).put(nonce).put(ticket)
                .put(ticketProof).put((byte) name.length).put(name).put(info).array();
    }

    /** A route's name as it travels: 1 to {@link #MAX_ROUTE_LENGTH} printable ASCII characters. */
    public static byte[] routeBytes(String route) {
        byte[] name = route.getBytes(StandardCharsets.US_ASCII);
        if (name.length == 0 || name.length > MAX_ROUTE_LENGTH || !printable(name)
                || !route.equals(new String(name, StandardCharsets.US_ASCII))) {
            throw new IllegalArgumentException("a route's name must be 1 to " + MAX_ROUTE_LENGTH
                    + " printable ASCII characters: \"" + route + "\"");
        }
        return name;
    }

    private static boolean printable(byte[] name) {
        for (byte b : name) {
            if (b < 0x20 || b > 0x7e) {
                return false;
            }
        }
        return true;
    }

    /** The route a HELLO body (of a valid length) names. */
    public static String route(byte[] body) throws IOException {
        int length = Byte.toUnsignedInt(body[HELLO_FIXED]);
        if (length == 0 || length > MAX_ROUTE_LENGTH || HELLO_FIXED + 1 + length > body.length) {
            throw new IOException("a HELLO whose route is " + length + " bytes long, with "
                    + (body.length - HELLO_FIXED - 1) + " bytes after it");
        }
        byte[] name = Arrays.copyOfRange(body, HELLO_FIXED + 1, HELLO_FIXED + 1 + length);
        if (!printable(name)) {
            throw new IOException("a HELLO whose route is not printable ASCII");
        }
        return new String(name, StandardCharsets.US_ASCII);
    }

    /** The UNROUTED reply: magic, version, length, mode, the server's routes. */
    public static ByteBuffer unrouted(List<String> routes) {
        byte[] list = String.join("\n", routes.subList(0, Math.min(routes.size(), MAX_ROUTES)))
                .getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(START_BYTES + Integer.BYTES + 1 + list.length).putInt(MAGIC).putInt(VERSION)
                .putInt(1 + list.length).put(UNROUTED).put(list).flip();
    }

    /** The routes an UNROUTED reply body (mode first) lists. */
    public static List<String> unroutedRoutes(byte[] body, String peerName) throws IOException {
        List<String> routes = new ArrayList<>();
        for (String route : new String(body, 1, body.length - 1, StandardCharsets.US_ASCII).split("\n")) {
            if (!route.isEmpty()) {
                try {
                    routeBytes(route);
                } catch (IllegalArgumentException e) {
                    throw new IOException(peerName + " listed a malformed route in its bootstrap reply", e);
                }
                routes.add(route);
            }
        }
        return routes;
    }

    /** The public key at the start of a HELLO body (of a valid length). */
    public static byte[] publicKey(byte[] body) {
        return Arrays.copyOf(body, KEY_BYTES);
    }

    /** The ticket of a HELLO body: zeros when the client has none. */
    static byte[] ticket(byte[] body) {
        return Arrays.copyOfRange(body, TICKET_OFFSET, TICKET_PROOF_OFFSET);
    }

    static byte[] ticketProof(byte[] body) {
        return Arrays.copyOfRange(body, TICKET_PROOF_OFFSET, HELLO_FIXED);
    }

    /** What a ticket's proof covers: the HELLO body with zeros in place of that proof. */
    static byte[] withoutTicketProof(byte[] body) {
        byte[] covered = body.clone();
        Arrays.fill(covered, TICKET_PROOF_OFFSET, HELLO_FIXED, (byte) 0);
        return covered;
    }

    /** The endpoint info after the fixed part and the route of a HELLO body ({@link #route} checked it). */
    public static byte[] info(byte[] body) {
        return Arrays.copyOfRange(body, HELLO_FIXED + 1 + Byte.toUnsignedInt(body[HELLO_FIXED]), body.length);
    }

    /** What a reply's proof covers: mode, public key, nonce, identity. */
    static byte[] replyCovered(byte mode, byte[] publicKey, byte[] nonce, byte[] identity) {
        return ByteBuffer.allocate(1 + KEY_BYTES + NONCE_BYTES + identity.length).put(mode).put(publicKey).put(nonce)
                .put(identity).array();
    }

    /** The whole reply: magic, version, length, mode, public key, nonce, proof, identity. */
    public static ByteBuffer reply(byte mode, byte[] publicKey, byte[] nonce, byte[] proof, byte[] identity) {
        int length = REPLY_FIXED + identity.length;
        return ByteBuffer.allocate(START_BYTES + Integer.BYTES + length).putInt(MAGIC).putInt(VERSION).putInt(length)
                .put(mode).put(publicKey).put(nonce).put(proof).put(identity).flip();
    }

    /** The whole INFO: length, endpoint info, next ticket, MAC. */
    static ByteBuffer serverInfo(byte[] info, byte[] ticket, byte[] mac) {
        return ByteBuffer.allocate(Integer.BYTES + info.length + TICKET_BYTES + PROOF_BYTES).putInt(info.length).put(info)
                .put(ticket).put(mac).flip();
    }

    /** A server's reply body (after magic, version and length), taken apart. */
    public record Reply(byte mode, byte[] publicKey, byte[] nonce, byte[] proof, byte[] identity) {

        public static Reply parse(byte[] body, String peerName) throws IOException {
            if (body.length < REPLY_FIXED) {
                throw new IOException(peerName + " sent a bootstrap reply of " + body.length + " bytes, too short");
            }
            byte mode = body[0];
            if (mode != CHALLENGE && mode != RESUMED) {
                throw new IOException(peerName + " sent a bootstrap reply of unknown mode " + mode);
            }
            int key = 1, nonce = key + KEY_BYTES, proof = nonce + NONCE_BYTES;
            return new Reply(mode, Arrays.copyOfRange(body, key, nonce), Arrays.copyOfRange(body, nonce, proof),
                    Arrays.copyOfRange(body, proof, REPLY_FIXED), Arrays.copyOfRange(body, REPLY_FIXED, body.length));
        }

        /** What the server's proof covers. */
        public byte[] covered() {
            return replyCovered(mode, publicKey, nonce, identity);
        }
    }
}
