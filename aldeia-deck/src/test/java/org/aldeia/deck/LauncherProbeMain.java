package org.aldeia.deck;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process for DeckLauncherTest, needing no DECK: "env" prints what the launcher gave it (and
 * PROBE_PREFIX, which a node prefix may set);
 * "fail-node N CODE" exits with CODE on node N and sleeps elsewhere; "sleep" sleeps.
 */
public final class LauncherProbeMain {

    private LauncherProbeMain() {
    }

    public static void main(String[] args) throws Exception {
        int id = Integer.parseInt(System.getenv(Deck.ENV_ID));
        switch (args[0]) {
            case "env" -> {
                System.out.println("DECK_ID=" + id);
                System.out.println("DECK_NODES=" + System.getenv(Deck.ENV_NODES));
                System.out.print("NODES_FILE:\n" + Files.readString(Path.of(System.getenv(Deck.ENV_FILE))));
                if (System.getenv("PROBE_PREFIX") != null) {
                    System.out.println("PREFIX=" + System.getenv("PROBE_PREFIX"));
                }
                String conf = System.getProperty("aldeia.configuration");
                if (conf != null) {
                    System.out.print("CONFIGURATION:\n" + Files.readString(Path.of(conf)));
                }
            }
            case "fail-node" -> {
                if (id == Integer.parseInt(args[1])) {
                    System.exit(Integer.parseInt(args[2]));
                }
                Thread.sleep(120_000);
            }
            case "sleep" -> Thread.sleep(120_000);
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }
}
