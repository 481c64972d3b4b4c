package org.aldeia.microvapi;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.AldeiaServerSocket;
import org.aldeia.core.AldeiaSocket;
import org.aldeia.deck.Deck;

/**
 * One node of a static DECK run started by DeckLauncher.launchAldeia. Node i listens on
 * {@code basePort + i} (bootstrap ports, not the DECK ports of the nodes file), connects to
 * every other node and accepts every other node's connection, and on each of those sockets
 * exchanges {@code bytes} both ways, checked by SHA-256. Prints "MESH OK" and exits 0 only if
 * every exchange matched; exits 1 with the stack trace otherwise.
 *
 * <p>Arguments: basePort bytes.
 */
public final class StaticMeshMain {

    private static final long CONNECT_PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(30);

    private StaticMeshMain() {
    }

    public static void main(String[] args) {
        try {
            int basePort = Integer.parseInt(args[0]);
            long bytes = Long.parseLong(args[1]);
            int me = Integer.parseInt(System.getenv(Deck.ENV_ID));
            int nodes = Integer.parseInt(System.getenv(Deck.ENV_NODES));
            run(me, nodes, basePort, bytes);
            System.out.println("MESH OK");
            System.exit(0);
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(int me, int nodes, int basePort, long bytes) throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool();
        // Results in completion order: the first failure ends the node at once instead of
        // after the launcher's timeout, and its stack trace reaches the test's report.
        CompletionService<String> exchanges = new ExecutorCompletionService<>(pool);
        try (AldeiaServerSocket server = new AldeiaServerSocket(basePort + me)) {
            for (int peer = 0; peer < nodes; peer++) {
                if (peer == me) {
                    continue;
                }
                int target = peer;
                long seed = 1000L * me + target;
                exchanges.submit(() -> {
                    try (Socket socket = connectWhenListening(basePort + target)) {
                        StreamCheck.exchange(socket, seed, bytes);
                    }
                    return "node " + me + " -> node " + target + ": " + bytes + " bytes each way matched";
                });
                long acceptSeed = 1000L * me + 100 + target;
                exchanges.submit(() -> {
                    try (Socket socket = server.accept()) {
                        StreamCheck.exchange(socket, acceptSeed, bytes);
                        return "node " + me + " <- " + socket.getInetAddress() + ": " + bytes + " bytes each way matched";
                    }
                });
            }
            for (int i = 0; i < 2 * (nodes - 1); i++) {
                System.out.println(exchanges.take().get()); // rethrows a failure
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** The peers start at the same time: retry until the peer's server socket listens. */
    private static Socket connectWhenListening(int port) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + CONNECT_PATIENCE_NANOS;
        while (true) {
            try {
                return new AldeiaSocket(InetAddress.getLoopbackAddress(), port);
            } catch (ConnectException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
    }
}
