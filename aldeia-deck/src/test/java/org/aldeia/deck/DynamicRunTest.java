package org.aldeia.deck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamic mode needs one process per DECK node, so two JVMs: the client publishes its id and
 * contact on stdout, the test hands it to the server, which answers with its own, and they
 * exchange a message, both proving themselves with the same pair key.
 */
class DynamicRunTest {

    @Test
    void twoDynamicProcessesFindEachOtherThroughAddPeer(@TempDir Path dir) throws Exception {
        List<Process> peers = new ArrayList<>();
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(90), () -> {
                byte[] key = new byte[Deck.KEY_BYTES];
                new SecureRandom().nextBytes(key);
                String[] roles = {"server", "client"};
                for (int i = 0; i < 2; i++) {
                    peers.add(new ProcessBuilder(DeckLauncher.javaCommand(List.of(), DynamicPeerMain.class,
                            List.of(roles[i], HexFormat.of().formatHex(key))))
                            .redirectError(dir.resolve("peer-" + i + ".err").toFile()).start());
                }
                BufferedReader[] out = new BufferedReader[2];
                String[] published = new String[2];
                for (int i = 0; i < 2; i++) {
                    out[i] = new BufferedReader(new InputStreamReader(peers.get(i).getInputStream(), StandardCharsets.UTF_8));
                }
                published[1] = readLine(out[1], "PEER ", dir, 1);
                tell(peers.get(0), published[1]);
                published[0] = readLine(out[0], "PEER ", dir, 0);
                tell(peers.get(1), published[0]);
                int[] ids = {Integer.parseInt(published[0].split(" ")[1]), Integer.parseInt(published[1].split(" ")[1])};
                assertNotEquals(ids[0], ids[1], "dynamic ids must be unique");
                for (int i = 0; i < 2; i++) {
                    assertEquals("RECEIVED " + ids[1 - i], readLine(out[i], "RECEIVED ", dir, i));
                }
                for (int i = 0; i < 2; i++) {
                    tell(peers.get(i), "EXIT");
                }
                for (int i = 0; i < 2; i++) {
                    assertTrue(peers.get(i).waitFor(30, TimeUnit.SECONDS), "peer " + i + " did not exit");
                    assertEquals(0, peers.get(i).exitValue(), () -> stderr(dir, 0) + stderr(dir, 1));
                }
            });
        } finally {
            peers.forEach(Process::destroyForcibly);
        }
    }

    /** The first line with {@code prefix}; other lines (stray output) are skipped. */
    private static String readLine(BufferedReader out, String prefix, Path dir, int peer) throws IOException {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        throw new AssertionError("peer " + peer + " ended without printing " + prefix + ":\n" + stderr(dir, peer));
    }

    private static void tell(Process peer, String line) throws IOException {
        Writer in = new OutputStreamWriter(peer.getOutputStream(), StandardCharsets.UTF_8);
        in.write(line + "\n");
        in.flush();
    }

    private static String stderr(Path dir, int peer) {
        try {
            return "--- peer " + peer + " stderr ---\n" + Files.readString(dir.resolve("peer-" + peer + ".err"));
        } catch (IOException e) {
            return "--- peer " + peer + " stderr unreadable: " + e.getMessage();
        }
    }
}
