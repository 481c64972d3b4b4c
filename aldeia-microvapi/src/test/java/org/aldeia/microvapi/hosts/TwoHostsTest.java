package org.aldeia.microvapi.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.aldeia.deck.DeckSegments;
import org.aldeia.deck.DeckSegments.Segment;
import org.aldeia.microvapi.ChildJvm;
import org.aldeia.microvapi.MovedOffTcp;
import org.aldeia.microvapi.PeerMain;
import org.aldeia.microvapi.RemoteStreamsMain;
import org.aldeia.microvapi.VictimClientMain;
import org.aldeia.microvapi.hosts.TwoHosts.Host;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * Aldeia between two emulated hosts ({@link TwoHosts}), with no configuration file: a
 * {@link PeerMain} server in host A, a client in host B. Needs root (CI runs it as root);
 * elsewhere every test is skipped with the reason. Each test checks afterwards that nothing of
 * its hosts is left on this machine.
 */
@Timeout(value = 180, threadMode = ThreadMode.SEPARATE_THREAD)
class TwoHostsTest {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TwoHostsTest.class);
    /** peer_timeout's default: neither JVM has a configuration file. */
    private static final long PEER_TIMEOUT_MILLIS = 10_000;

    private static final long MIB = 1 << 20;
    /** The "Aldeia: using" INFO line of a JVM that chose nothing itself. */
    private static final String AUTO = "Aldeia: using MicroVAPI over DECK dynamic/auto";
    /** ss -i's count of a socket's retransmitted segments (now/in all), at least one in all. */
    private static final Pattern RETRANSMITTED = Pattern.compile("retrans:\\d+/[1-9]");

    @BeforeEach
    void hostsCanBeMadeHere() {
        TwoHosts.assumeAvailable();
    }

    @Test
    void betweenTwoHostsAutoPicksTcpAndStreamsArriveIntactBothWays() throws Exception {
        List<Long> pids = new ArrayList<>();
        String id;
        try (TwoHosts hosts = TwoHosts.up()) {
            id = hosts.id();
            ChildJvm server = hosts.start(Host.A, List.of(), PeerMain.class);
            pids.add(server.pid());
            String port = server.awaitLine("PORT ");

            // The server's DECK is up (its server socket started it): its segments are in A's
            // /dev/shm alone, not in B's, not in this machine's (where other DECK processes may
            // use the same names: DECK records its pid in each segment).
            List<String> segmentsOfA = files(hosts.run(Host.A, "find", "/dev/shm", "-type", "f"));
            assertFalse(segmentsOfA.isEmpty(), "DECK auto made no shared segment in host A; " + server.describe());
            assertEquals(List.of(), files(hosts.run(Host.B, "find", "/dev/shm", "-type", "f")), "host B's /dev/shm");
            assertEquals(List.of(), segmentsHereOf(pids), "host A's segments in this machine's /dev/shm");

            // Random writes and reads each way, a timed bulk stream, objects, close and skip.
            ChildJvm client = hosts.start(Host.B, List.of(), RemoteStreamsMain.class,
                    Host.A.address(), port, Long.toString(8 * MIB), Long.toString(16 * MIB));
            pids.add(client.pid());
            assertEquals("OK", client.awaitLine("STREAMS "), client::describe);
            assertEquals(0, client.waitFor(30), client::describe);

            // Neither side was configured. The side that accepts decides (DECK auto): A finds
            // B's boot id is another host's and answers with a tcp port, not shared memory; B
            // then reaches A over tcp too, as between real hosts.
            String serverLog = server.stderr(), clientLog = client.stderr();
            assertTrue(serverLog.contains(AUTO) && clientLog.contains(AUTO), serverLog + clientLog);
            assertTrue(route(Host.B, "another host").matcher(serverLog).find(), "host A's route to B:\n" + serverLog);
            assertTrue(route(Host.A, "the peer offers no shared memory").matcher(clientLog).find(),
                    "host B's route to A:\n" + clientLog);
        }
        assertEquals(List.of(), TwoHosts.leftovers(id, pids), "left of run " + id);
        assertEquals(List.of(), segmentsHereOf(pids), "the hosts' segments in this machine's /dev/shm after the run");
    }

    private record Streaming(ChildJvm server, ChildJvm client) {
    }

    /** A server in A and a client in B that streams to it, A checking every byte, until told to stop. */
    private static Streaming streamFromBToA(TwoHosts hosts, List<Long> pids, int seed) throws Exception {
        ChildJvm server = hosts.start(Host.A, List.of(), PeerMain.class);
        pids.add(server.pid());
        String port = server.awaitLine("PORT ");
        ChildJvm client = hosts.start(Host.B, List.of(), VictimClientMain.class, port, Integer.toString(seed),
                Host.A.address());
        pids.add(client.pid());
        client.awaitLine("STREAMING");
        // the stream starts on TCP and moves to DECK tcp, whose faults these tests are about (on
        // TCP, a partition is TCP's: retransmissions for many minutes, as with java.net)
        MovedOffTcp.await(command -> hosts.run(Host.B, command), Host.A.address(), Integer.parseInt(port));
        return new Streaming(server, client);
    }

    @Test
    void partitionCutsTheLinkAndAfterHealAnOpenConnectionFinishesIntact() throws Exception {
        List<Long> pids = new ArrayList<>();
        String id;
        try (TwoHosts hosts = TwoHosts.up()) {
            id = hosts.id();
            Streaming streaming = streamFromBToA(hosts, pids, 41);
            ChildJvm server = streaming.server();
            ChildJvm client = streaming.client();

            // Port 9 of A has no listener: a connection there is refused while the link is
            // up, and cannot even leave B while it is cut.
            String connectToA = "exec 3<>/dev/tcp/" + Host.A.address() + "/9";
            hosts.partition();
            IOException cut = assertThrows(IOException.class, () -> hosts.run(Host.B, "bash", "-c", connectToA));
            assertTrue(cut.getMessage().contains("Network is unreachable"), cut.getMessage());
            Thread.sleep(2000); // the open connection's packets are dropped meanwhile
            hosts.heal();
            IOException refused = assertThrows(IOException.class, () -> hosts.run(Host.B, "bash", "-c", connectToA));
            assertTrue(refused.getMessage().contains("Connection refused"), refused.getMessage());

            // The connection DECK streams on from B to A retransmits what the cut dropped (at
            // its next timeout, up to a few seconds after the heal).
            String sockets = "";
            for (long deadline = System.nanoTime() + 15_000_000_000L; System.nanoTime() < deadline; Thread.sleep(200)) {
                sockets = hosts.run(Host.B, "ss", "-tin", "dst", Host.A.address());
                if (RETRANSMITTED.matcher(sockets).find()) {
                    break;
                }
            }
            assertTrue(RETRANSMITTED.matcher(sockets).find(), "B's TCP sockets to A after the cut:\n" + sockets);

            // The stream goes on, and A has verified every byte B sent, before, during and after
            // the cut.
            client.send("STOP");
            String end = client.awaitLine("STREAM ");
            assertTrue(end.startsWith("OK "), end + "; " + client.describe() + "\nserver: " + server.describe());
            assertEquals(0, client.waitFor(30), client::describe);

        }
        assertEquals(List.of(), TwoHosts.leftovers(id, pids), "left of run " + id);
    }

    /**
     * A partition longer than the peer timeout (peer_timeout, 10 s) fails the connection at
     * both ends with an IOException, within that timeout and a few seconds: the writer in B, and
     * the reader in A, neither of which can tell a cut link from a slow peer before then.
     */
    @Test
    void aPartitionLongerThanThePeerTimeoutFailsBothEnds() throws Exception {
        List<Long> pids = new ArrayList<>();
        String id;
        try (TwoHosts hosts = TwoHosts.up()) {
            id = hosts.id();
            Streaming streaming = streamFromBToA(hosts, pids, 43);
            ChildJvm server = streaming.server();
            ChildJvm client = streaming.client();
            long cut = System.nanoTime();
            hosts.partition();
            String end = client.awaitLine("STREAM ");
            long clientMillis = (System.nanoTime() - cut) / 1_000_000;
            assertTrue(end.startsWith("FAILED ") && end.contains("Exception"), end);
            long serverMillis;
            while (!server.stderr().contains(" failed")) {
                assertTrue(System.nanoTime() - cut < 30_000_000_000L, "the server's socket did not fail: " + server.describe());
                Thread.sleep(100);
            }
            serverMillis = (System.nanoTime() - cut) / 1_000_000;
            LOG.info("partition: the writer in B failed after {} ms ({}), the reader in A after about {} ms",
                    clientMillis, end, serverMillis);
            assertTrue(clientMillis < PEER_TIMEOUT_MILLIS + 5000, "the writer failed after " + clientMillis + " ms");
            assertTrue(serverMillis < PEER_TIMEOUT_MILLIS + 5000, "the reader failed after " + serverMillis + " ms");
            hosts.heal();
            assertEquals(1, client.waitFor(30), client::describe);
        }
        assertEquals(List.of(), TwoHosts.leftovers(id, pids), "left of run " + id);
    }

    @Test
    void aRunWhoseOwnerHasGoneIsRemovedByTheNextUp() throws Exception {
        Process owner = new ProcessBuilder("sleep", "600").start();
        String stale;
        try {
            stale = TwoHosts.script("up", "--owner", Long.toString(owner.pid())).strip();
            assertTrue(TwoHosts.script("list").contains(stale), "the run is listed while its owner lives");
        } finally {
            owner.destroyForcibly().waitFor(); // as a test JVM killed before its close
        }
        assertFalse(TwoHosts.leftovers(stale, List.of()).isEmpty(), "the run outlives its owner until the next up");
        try (TwoHosts next = TwoHosts.up()) {
            assertEquals(List.of(), TwoHosts.leftovers(stale, List.of()), "left of the stale run " + stale);
            assertFalse(TwoHosts.leftovers(next.id(), List.of()).isEmpty(), "the new run exists");
        }
    }

    /** The INFO line of a JVM that reaches {@code peer} over tcp, for {@code reason}. */
    private static Pattern route(Host peer, String reason) {
        return Pattern.compile("Aldeia peer " + Pattern.quote(peer.address()) + " \\(DECK node \\d+\\): tcp \\("
                + Pattern.quote(reason) + "\\)");
    }

    private static List<String> files(String listing) {
        return listing.lines().filter(line -> !line.isBlank()).sorted().toList();
    }

    /** The segments in this machine's /dev/shm made by one of {@code pids}. */
    private static List<Segment> segmentsHereOf(List<Long> pids) throws IOException {
        return DeckSegments.all().stream().filter(segment -> pids.contains(segment.ownerPid())).toList();
    }
}
