package org.aldeia.bench;

import java.nio.file.Path;
import org.aldeia.core.Aldeia;
import org.aldeia.deck.Deck;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The main of the two JVMs of one transport, started by {@link Bench} as a 2-node DECK run
 * (DeckLauncher): node 0 is the server, node 1 the client, which prints one
 * {@link Measurement#toLine()} per cell on stdout.
 *
 * <pre>BenchNode --transport NAME --rendezvous FILE --scratch DIR [--quick]</pre>
 */
public final class BenchNode {

    private static final Logger log = LoggerFactory.getLogger(BenchNode.class);

    private BenchNode() {
    }

    public static void main(String[] args) {
        int status;
        String role = System.getenv(Deck.ENV_ID);
        try {
            BenchArguments arguments = BenchArguments.parse(args);
            Transport transport = Transport.parse(arguments.required("transport"));
            Rendezvous rendezvous = new Rendezvous(Path.of(arguments.required("rendezvous")));
            if (transport.isInstalled()) {
                Aldeia.install(); // before any socket: the row's java.net sockets are then Aldeia's
            }
            if ("0".equals(role)) {
                try (MessageLink link = Links.server(transport, Path.of(arguments.required("scratch")), rendezvous)) {
                    log.info("{} server: echoed {} pings", transport.label(),
                            BenchServer.serve(link, SocketPhases.of(transport)));
                }
            } else if ("1".equals(role)) {
                Pacing pacing = arguments.flag("quick") ? Pacing.QUICK : Pacing.DEFAULT;
                try (MessageLink link = Links.client(transport, rendezvous)) {
                    new BenchClient(link, pacing, SocketPhases.of(transport)).run(BenchClient.SIZES, measurement -> {
                        System.out.println(measurement.toLine());
                        System.out.flush();
                    });
                }
            } else {
                throw new IllegalArgumentException("environment " + Deck.ENV_ID + " must be 0 (server) or 1 (client), not "
                        + role + "; BenchNode is started by Bench");
            }
            status = 0;
        } catch (Exception e) {
            log.error("bench node {} failed: {}", role, e.toString());
            log.debug("failure detail", e);
            status = 1;
        }
        // Transports may leave non-daemon threads (Aeron's conductor, DECK's readers) behind a failure.
        System.exit(status);
    }
}
