package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.aldeia.deck.DeckSegments;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared memory of a live connection between two JVMs (shared/spec/security.md): another
 * user cannot even open its segments; a process of the same user that overwrites them with 0xFF
 * makes both ends fail with an IOException (the client's within the peer timeout: the server
 * takes nothing from areas that name a process no bootstrap introduced), neither freezes, and the
 * server goes on serving new connections.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class SharedMemoryAttackTest {

    private static final Logger LOG = LoggerFactory.getLogger(SharedMemoryAttackTest.class);
    /** A segment's first line is its owner record (native-c/deck/seg_shm.c), kept so its owner still counts as alive. */
    private static final int OWNER_RECORD = 64;
    private static final String NOBODY = "65534";

    @Test
    void anotherUserCannotOpenTheSegmentsOfALiveConnection(@TempDir Path dir) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run a command as another user");
        try (Victims victims = Victims.start(Victims.Wire.SHARED_MEMORY, dir, 7)) {
            List<DeckSegments.Segment> segments = DeckSegments.ownedBy(victims.server.pid());
            assertFalse(segments.isEmpty());
            String segment = segments.get(0).file().toString();
            for (List<String> command : List.of(List.of("ls", DeckSegments.directory().toString()),
                    List.of("cat", segment), List.of("dd", "if=/dev/zero", "of=" + segment, "count=1", "conv=notrunc"))) {
                Process p = asNobody(command);
                String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(p.waitFor(10, TimeUnit.SECONDS));
                assertNotEquals(0, p.exitValue(), command + " as another user succeeded");
                assertTrue(err.contains("Permission denied"), command + ": " + err);
            }
            String end = victims.finish();
            assertTrue(end.startsWith("STREAM OK "), end);
        }
    }

    private static Process asNobody(List<String> command) throws IOException {
        List<String> full = new ArrayList<>(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY,
                "--clear-groups", "--"));
        full.addAll(command);
        return new ProcessBuilder(full).start();
    }

    @Test
    void segmentsOverwrittenWith0xFfFailBothEnds(@TempDir Path dir) throws Exception {
        try (Victims victims = Victims.start(Victims.Wire.SHARED_MEMORY, dir, 8)) {
            List<Path> mailboxes = DeckSegments.ownedBy(victims.server.pid()).stream().map(DeckSegments.Segment::file)
                    .filter(SharedMemoryAttackTest::isMailboxSegment).toList();
            assertFalse(mailboxes.isEmpty(), "no mailbox segment of the server");
            for (Path segment : mailboxes) {
                fill(segment);
            }
            // The filled areas now name an owner no bootstrap introduced: the server takes nothing
            // from them, so the client's posts find no room and fail after the peer timeout, and
            // the server's connection fails once the client is gone.
            String end = victims.client.awaitLine("STREAM ");
            LOG.info("the client of a filled segment: STREAM {}", end);
            assertTrue(end.startsWith("FAILED ") && end.contains("SocketException"), end);
            assertEquals(1, victims.client.waitFor(10));
            String server = awaitServerFailure(victims.server);
            LOG.info("the server of a filled segment: {}", server);

            // the server goes on: a new connection streams as if nothing happened
            try (ChildJvm another = ChildJvm.start(List.of(), VictimClientMain.class, Integer.toString(victims.port), "9")) {
                another.awaitLine("STREAMING");
                another.send("STOP");
                String again = another.awaitLine("STREAM ");
                assertTrue(again.startsWith("OK "), again);
            }
        }
    }

    /** Segment ids from 2 are mailbox segments ("<token>-<node>-<id>", native-c/deck/sci.h). */
    private static boolean isMailboxSegment(Path file) {
        String[] parts = file.getFileName().toString().split("-");
        return parts.length == 3 && Integer.parseInt(parts[2]) >= 2;
    }

    private static void fill(Path segment) throws IOException {
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            byte[] ones = new byte[(int) channel.size() - OWNER_RECORD];
            Arrays.fill(ones, (byte) 0xff);
            channel.write(ByteBuffer.wrap(ones), OWNER_RECORD);
        }
    }

    /** The server's log line of the failed connection (PeerMain logs "socket N failed" with the exception). */
    private static String awaitServerFailure(ChildJvm server) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - deadline < 0) {
            String log = server.stderr();
            int at = log.indexOf(" failed\n");
            if (at >= 0) {
                return log.substring(at, Math.min(log.length(), at + 600));
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        throw new AssertionError("the server logged no failed socket: " + server.describe());
    }
}
