package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.aldeia.deck.DeckLauncher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three JVMs of a static DECK run (each with its own aldeia-i.conf: SOCKET_DECK, deck_id,
 * deck_nodes, deck_file), every pair connected by Aldeia sockets in both directions, every
 * socket carrying checked data both ways.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class StaticDeckMeshTest {

    private static final int NODES = 3;

    @Test
    void threeStaticDeckNodesExchangeCheckedDataWithEveryOtherNode(@TempDir Path runDir) throws Exception {
        int basePort = freeConsecutivePorts(NODES);
        DeckLauncher.Result run = new DeckLauncher(NODES, StaticMeshMain.class,
                Integer.toString(basePort), Integer.toString(2 << 20))
                .workDir(runDir)
                .timeout(Duration.ofSeconds(90))
                .launchAldeia();
        assertTrue(run.succeeded(), run::toString);
        String nodesFile = Files.readString(run.workDir().resolve("nodes"));
        for (int node = 0; node < NODES; node++) {
            String output = run.output(node);
            assertTrue(output.contains("MESH OK"), output);
            assertTrue(output.contains("MicroVAPI over DECK static/tcp (node " + node + " of " + NODES), output);
            assertFalse(nodesFile.contains(":" + (basePort + node) + "\n"),
                    "bootstrap port " + (basePort + node) + " is also a DECK port:\n" + nodesFile);
        }
    }

    /**
     * {@code count} consecutive ports free now, below the kernel's ephemeral range (from 32768),
     * so they cannot clash with the DECK ports DeckLauncher picks for the nodes file.
     */
    private static int freeConsecutivePorts(int count) throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            int base = ThreadLocalRandom.current().nextInt(20_000, 32_000);
            List<ServerSocket> probes = new ArrayList<>();
            try {
                for (int i = 0; i < count; i++) {
                    probes.add(new ServerSocket(base + i)); // the wildcard address, as the nodes bind
                }
                return base;
            } catch (IOException taken) {
                // try another range
            } finally {
                for (ServerSocket probe : probes) {
                    probe.close();
                }
            }
        }
        throw new IOException("no " + count + " consecutive free ports found between 20000 and 32000");
    }
}
