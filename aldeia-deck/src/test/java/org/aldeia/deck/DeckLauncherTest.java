package org.aldeia.deck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher's process handling, with processes that need no DECK. */
class DeckLauncherTest {

    @TempDir
    Path dir;

    @Test
    void eachProcessGetsItsIdAndTheSharedNodesFile() throws Exception {
        DeckLauncher.Result run = new DeckLauncher(3, LauncherProbeMain.class, "env").workDir(dir).launch();
        assertTrue(run.succeeded(), run::toString);
        List<String> nodes = Files.readAllLines(dir.resolve("nodes")).stream()
                .filter(line -> !line.startsWith("#")).toList();
        assertEquals(3, nodes.size());
        assertEquals(3, nodes.stream().distinct().count(), "ports must differ: " + nodes);
        for (int id = 0; id < 3; id++) {
            String out = run.output(id);
            assertTrue(out.contains("DECK_ID=" + id + "\n"), out);
            assertTrue(out.contains("DECK_NODES=3\n"), out);
            for (String node : nodes) {
                assertTrue(node.matches("127\\.0\\.0\\.1:\\d+"), node);
                assertTrue(out.contains(node), out);
            }
            assertFalse(out.contains("CONFIGURATION"), out);
        }
    }

    @Test
    void aNodePrefixRunsBeforeThatNodesCommandOnly() throws Exception {
        DeckLauncher.Result run = new DeckLauncher(2, LauncherProbeMain.class, "env").workDir(dir)
                .nodePrefix(1, List.of("env", "PROBE_PREFIX=node1")).launch();
        assertTrue(run.succeeded(), run::toString);
        assertTrue(run.output(1).contains("PREFIX=node1\n"), run.output(1));
        assertTrue(run.output(1).contains("DECK_ID=1\n"), run.output(1));
        assertFalse(run.output(0).contains("PREFIX="), run.output(0));
        assertThrows(IllegalArgumentException.class, () -> new DeckLauncher(2, LauncherProbeMain.class, "env")
                .nodePrefix(2, List.of("env")));
    }

    @Test
    void aNodeAddressReplacesLoopbackOnThatNodesLineOnly() throws Exception {
        DeckLauncher.Result run = new DeckLauncher(3, LauncherProbeMain.class, "env").workDir(dir)
                .nodeAddress(1, InetAddress.getByName("198.18.0.2")).launch();
        assertTrue(run.succeeded(), run::toString);
        List<String> nodes = Files.readAllLines(dir.resolve("nodes")).stream()
                .filter(line -> !line.startsWith("#")).toList();
        assertTrue(nodes.get(0).matches("127\\.0\\.0\\.1:\\d+"), nodes::toString);
        assertTrue(nodes.get(1).matches("198\\.18\\.0\\.2:\\d+"), nodes::toString);
        int port = Integer.parseInt(nodes.get(1).substring(nodes.get(1).lastIndexOf(':') + 1));
        assertTrue(port >= DeckLauncher.FIXED_PORT_FIRST && port <= DeckLauncher.FIXED_PORT_LAST,
                "an emulated host's port is below the ephemeral range: " + port);
        assertTrue(nodes.get(2).matches("127\\.0\\.0\\.1:\\d+"), nodes::toString);
        assertThrows(IllegalArgumentException.class, () -> new DeckLauncher(2, LauncherProbeMain.class, "env")
                .nodeAddress(2, InetAddress.getLoopbackAddress()));
    }

    @Test
    void nodesFileEntriesPutAnIpv6AddressInBrackets() throws Exception {
        assertEquals("127.0.0.1:5000", DeckLauncher.nodesFileEntry(InetAddress.getByName("127.0.0.1"), 5000));
        assertEquals("[0:0:0:0:0:0:0:1]:5001", DeckLauncher.nodesFileEntry(InetAddress.getByName("::1"), 5001));
    }

    @Test
    void launchAldeiaGivesEachProcessItsConfigurationFile() throws Exception {
        DeckLauncher.Result run = new DeckLauncher(2, LauncherProbeMain.class, "env").workDir(dir).launchAldeia();
        assertTrue(run.succeeded(), run::toString);
        for (int id = 0; id < 2; id++) {
            String out = run.output(id);
            assertTrue(out.contains("socket_type = SOCKET_DECK\n"), out);
            assertTrue(out.contains("deck_id = " + id + "\n"), out);
            assertTrue(out.contains("deck_nodes = 2\n"), out);
            assertTrue(out.contains("deck_file = " + dir.resolve("nodes").toAbsolutePath() + "\n"), out);
        }
    }

    @Test
    void aldeiaSettingsFollowTheLauncherKeysInEveryConfigurationFile() throws Exception {
        DeckLauncher.Result run = new DeckLauncher(2, LauncherProbeMain.class, "env").workDir(dir)
                .aldeiaSetting("deck_transport", "sci")
                .aldeiaSetting("mtu", "16384")
                .launchAldeia();
        assertTrue(run.succeeded(), run::toString);
        for (int id = 0; id < 2; id++) {
            String out = run.output(id);
            String configuration = out.substring(out.indexOf("CONFIGURATION:\n"));
            assertTrue(configuration.endsWith("deck_file = " + dir.resolve("nodes").toAbsolutePath() + "\n"
                    + "deck_transport = sci\n"
                    + "mtu = 16384\n"), out);
            assertTrue(configuration.contains("deck_id = " + id + "\n"), out);
        }
    }

    @Test
    void aldeiaSettingsCannotOverrideTheLauncherKeysOrBreakTheFile() {
        for (String launcherKey : List.of("socket_type", "deck_id", "deck_nodes", "deck_file")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new DeckLauncher(2, LauncherProbeMain.class).aldeiaSetting(launcherKey, "1"));
            assertTrue(e.getMessage().contains("'" + launcherKey + "' is written by DeckLauncher"), e.getMessage());
        }
        DeckLauncher launcher = new DeckLauncher(2, LauncherProbeMain.class).aldeiaSetting("mtu", "2048");
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> launcher.aldeiaSetting("mtu", "512"));
        assertTrue(twice.getMessage().contains("given twice"), twice.getMessage());
        for (String key : List.of("", "MTU", "mtu = 1", "a#b", "x\ny")) {
            assertThrows(IllegalArgumentException.class, () -> launcher.aldeiaSetting(key, "1"), "key '" + key + "'");
        }
        for (String value : List.of("", " ", "1 # comment", "1\nsocket_type = SOCKET_VAPI", " 1")) {
            assertThrows(IllegalArgumentException.class, () -> launcher.aldeiaSetting("receive_buffers", value),
                    "value '" + value + "'");
        }
        IllegalStateException plain = assertThrows(IllegalStateException.class, launcher::launch);
        assertTrue(plain.getMessage().contains("launchAldeia()"), plain.getMessage());
    }

    @Test
    void theFirstFailureKillsTheOtherProcesses() throws Exception {
        long start = System.nanoTime();
        DeckLauncher.Result run = new DeckLauncher(3, LauncherProbeMain.class, "fail-node", "1", "3")
                .workDir(dir).timeout(Duration.ofSeconds(90)).launch();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertFalse(run.succeeded());
        assertFalse(run.timedOut());
        assertEquals(3, run.exitCode(1), run::toString);
        assertNotEquals(0, run.exitCode(0));
        assertNotEquals(0, run.exitCode(2));
        assertTrue(took.compareTo(Duration.ofSeconds(60)) < 0, "the sleeping processes were not killed: " + took);
    }

    @Test
    void aRunPastItsTimeoutIsKilled() throws Exception {
        long start = System.nanoTime();
        DeckLauncher.Result run = new DeckLauncher(2, LauncherProbeMain.class, "sleep")
                .workDir(dir).timeout(Duration.ofSeconds(3)).launch();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(run.timedOut());
        assertFalse(run.succeeded());
        assertNotEquals(0, run.exitCode(0));
        assertNotEquals(0, run.exitCode(1));
        assertTrue(took.compareTo(Duration.ofSeconds(60)) < 0, "not killed at the deadline: " + took);
    }
}
