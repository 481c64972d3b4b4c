package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.aldeia.deck.DeckLauncher;

/**
 * A live connection for attack tests: a {@link PeerMain} server JVM and a
 * {@link VictimClientMain} JVM streaming to it, over one of the wires Aldeia uses between two
 * JVMs of one host. The test process plays the outsider and uses no Aldeia itself.
 */
final class Victims implements AutoCloseable {

    /** The wire between the two victims. */
    enum Wire {
        /** No configuration: dynamic DECK, auto, the two JVMs on one host meet in shared memory. */
        SHARED_MEMORY,
        /** Dynamic DECK over tcp only. */
        DECK_TCP_DYNAMIC,
        /** A static DECK run of the two over tcp, proved with the run secret. */
        DECK_TCP_STATIC
    }

    private static final Pattern PEER = Pattern.compile("Aldeia peer \\S+ \\(DECK node (\\d+)\\)");

    final Wire wire;
    final ChildJvm server;
    final ChildJvm client;
    final int port;

    private Victims(Wire wire, ChildJvm server, ChildJvm client, int port) {
        this.wire = wire;
        this.server = server;
        this.client = client;
        this.port = port;
    }

    /** Starts the server, then the client, which streams stream {@code seed} until {@link #finish}. */
    static Victims start(Wire wire, Path dir, long seed) throws Exception {
        List<String> serverOptions = options(wire, dir, 0), clientOptions = options(wire, dir, 1);
        ChildJvm server = ChildJvm.start(serverOptions, PeerMain.class);
        ChildJvm client = null;
        try {
            int port = Integer.parseInt(server.awaitLine("PORT "));
            client = ChildJvm.start(clientOptions, VictimClientMain.class, Integer.toString(port), Long.toString(seed));
            client.awaitLine("STREAMING");
            // the attacks are on the route's data path: the stream must have moved there
            MovedOffTcp.await(MovedOffTcp::here, InetAddress.getLoopbackAddress().getHostAddress(), port);
            return new Victims(wire, server, client, port);
        } catch (Exception | Error e) {
            if (client != null) {
                client.close();
            }
            server.close();
            throw e;
        }
    }

    private static List<String> options(Wire wire, Path dir, int node) throws IOException {
        String conf = switch (wire) {
            case SHARED_MEMORY -> null;
            case DECK_TCP_DYNAMIC -> "deck_transport = tcp\n";
            case DECK_TCP_STATIC -> {
                if (!Files.exists(dir.resolve("nodes"))) {
                    DeckLauncher.writeNodesFile(dir.resolve("nodes"), 2);
                    DeckLauncher.writeRunSecret(dir.resolve("secret"));
                }
                yield "deck_id = " + node + "\ndeck_nodes = 2\ndeck_file = nodes\ndeck_secret_file = secret\n"
                        + "deck_transport = tcp\n";
            }
        };
        if (conf == null) {
            return List.of();
        }
        Path file = Files.writeString(dir.resolve("node-" + node + ".conf"), conf);
        return List.of("-Daldeia.configuration=" + file);
    }

    /** The server's DECK id: 0 in the static run, else what the client's log says of its peer. */
    int serverDeckId() throws IOException {
        return wire == Wire.DECK_TCP_STATIC ? 0 : peerIdIn(client);
    }

    /** The client's DECK id: 1 in the static run, else what the server's log says of its peer. */
    int clientDeckId() throws IOException {
        return wire == Wire.DECK_TCP_STATIC ? 1 : peerIdIn(server);
    }

    private static int peerIdIn(ChildJvm jvm) throws IOException {
        Matcher m = PEER.matcher(jvm.stderr());
        assertTrue(m.find(), "no 'Aldeia peer' line in the log: " + jvm.describe());
        return Integer.parseInt(m.group(1));
    }

    /** Tells the client to end its stream; returns its last line ("STREAM OK <bytes>" or "STREAM FAILED ..."). */
    String finish() throws IOException {
        client.send("STOP");
        return "STREAM " + client.awaitLine("STREAM ");
    }

    @Override
    public void close() throws Exception {
        try {
            client.close();
        } finally {
            server.close();
        }
    }
}
