package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.AldeiaServerSocket;
import org.aldeia.core.AldeiaSocket;
import org.aldeia.deck.Deck;
import org.aldeia.deck.DeckSegments;
import org.aldeia.microvapi.PeerMain.Command;

/**
 * One node of a 2-node static DECK run started by DeckLauncher.launchAldeia, running the
 * {@link StreamScenarios} of {@link TwoJvmStreams} over whatever DECK transport the
 * configuration names. Node 0 plays the child: a {@link PeerMain} server on a free port, which
 * it publishes in the run directory (next to the nodes file), until node 1 sends STOP. Node 1
 * plays the test: every scenario in turn, one {@code OK <scenario> in <s> s} line each, then
 * {@code SEGMENTS <n>} (the /dev/shm segments of the run, when DECK_RUN_KEY names it), STOP,
 * and {@code STREAMS OK}. A node exits 0 only if everything matched; else 1 with the trace.
 *
 * <p>Arguments: randomBytes (each way, random writes and reads) bulkBytes (timed, node 1 to node 0).
 */
public final class StaticStreamMain {

    /** The environment variable naming a static run's key in its /dev/shm segment names. */
    static final String ENV_RUN_KEY = "DECK_RUN_KEY";
    private static final String PORT_FILE = "node-0.port";
    private static final long PORT_PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(30);

    private StaticStreamMain() {
    }

    public static void main(String[] args) {
        try {
            long randomBytes = Long.parseLong(args[0]);
            long bulkBytes = Long.parseLong(args[1]);
            Path runDir = Path.of(System.getenv(Deck.ENV_FILE)).toAbsolutePath().getParent();
            int me = Integer.parseInt(System.getenv(Deck.ENV_ID));
            if (me == 0) {
                serve(runDir);
            } else {
                runScenarios(runDir, randomBytes, bulkBytes);
                System.out.println("STREAMS OK");
            }
            System.exit(0); // DECK and Aldeia threads are not all daemons; the shutdown hook closes them
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void serve(Path runDir) throws IOException, InterruptedException {
        try (AldeiaServerSocket server = new AldeiaServerSocket(0)) {
            Path partial = runDir.resolve(PORT_FILE + ".partial");
            Files.writeString(partial, Integer.toString(server.getLocalPort()), StandardCharsets.UTF_8);
            // Atomic: node 1 never reads a half-written port.
            Files.move(partial, runDir.resolve(PORT_FILE), StandardCopyOption.ATOMIC_MOVE);
            int failures = PeerMain.serveUntilStopped(server);
            if (failures > 0) {
                throw new IOException(failures + " connection(s) served by node 0 failed; their traces are logged above");
            }
        }
    }

    private static void runScenarios(Path runDir, long randomBytes, long bulkBytes) throws Exception {
        // This node starts DECK only when it connects, after node 0's DECK is up and listening:
        // DECK's start must not wait for the other nodes (sci maps peers when first needed).
        int port = awaitPort(runDir.resolve(PORT_FILE));
        new StreamScenarios(port).runEach(System.out, randomBytes, bulkBytes);
        String runKey = System.getenv(ENV_RUN_KEY);
        if (runKey != null) {
            System.out.println("SEGMENTS " + segmentsOfRun(runKey).size());
        }
        try (AldeiaSocket socket = PeerMain.request(port, Command.STOP, 0, 0)) {
            assertEquals(-1, socket.getInputStream().read(), "node 0 ends the STOP connection once it stopped");
        }
    }

    /** Node 0 publishes its port once listening; the nodes start together, so wait a little. */
    private static int awaitPort(Path file) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + PORT_PATIENCE_NANOS;
        while (true) {
            try {
                return Integer.parseInt(Files.readString(file, StandardCharsets.UTF_8));
            } catch (NoSuchFileException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("node 0 published no port in " + file + " within 30 s", e);
                }
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
    }

    /**
     * The segments of the static run {@code runKey}: DECK names them key-node-id (the key is
     * DECK_RUN_KEY, set by the test) in this user's segment directory.
     */
    static List<String> segmentsOfRun(String runKey) throws IOException {
        return DeckSegments.all().stream().map(s -> s.file().getFileName().toString())
                .filter(name -> name.startsWith(runKey + "-")).sorted().toList();
    }
}
