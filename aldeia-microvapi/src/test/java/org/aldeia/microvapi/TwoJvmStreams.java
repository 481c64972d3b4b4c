package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One byte stream between this JVM and a child JVM over Aldeia in dynamic DECK mode (no
 * configuration file here: deck_transport auto), checked end to end by SHA-256: the
 * {@link StreamScenarios}, which {@link StaticDeckSciStreamTest} runs over DECK static/sci.
 * {@link TwoJvmSciStreamTest}'s child has no configuration either, so DECK reaches it through
 * shared memory; {@link TwoJvmTcpStreamTest}'s child is configured for tcp, so this JVM reaches
 * it over tcp while its mailboxes still serve shared memory: the two halves of auto. Every test
 * opens its own connection to the same child. Timeouts run the test in its own thread so that a
 * read that never returns fails the test instead of hanging the build.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
abstract class TwoJvmStreams {

    private static final long MIB = 1 << 20;

    private static ChildJvm child;
    private static StreamScenarios scenarios;

    /**
     * Starts the child with {@code aldeiaConfiguration} (null: none), listening on every address,
     * and checks, once the first connection (to the loopback address) has been made, that the
     * child's log names {@code route}: over DECK the route its first contact with this JVM took
     * (e.g. "): tcp"), on the fabric route the transport it started.
     */
    static void startChild(Path dir, String aldeiaConfiguration, String route) throws Exception {
        startChild(dir, aldeiaConfiguration, route, null);
    }

    /** As {@link #startChild(Path, String, String)}, the child bound to {@code host} and this JVM connecting there. */
    static void startChild(Path dir, String aldeiaConfiguration, String route, InetAddress host) throws Exception {
        List<String> options = List.of();
        if (aldeiaConfiguration != null) {
            Path conf = Files.writeString(dir.resolve("aldeia.conf"), aldeiaConfiguration);
            options = List.of("-Daldeia.configuration=" + conf);
        }
        child = host == null ? ChildJvm.start(options, PeerMain.class)
                : ChildJvm.start(options, PeerMain.class, host.getHostAddress());
        int port = Integer.parseInt(child.awaitLine("PORT "));
        scenarios = host == null ? new StreamScenarios(port) : new StreamScenarios(host, port);
        scenarios.availableCountsReceivedBytesAndSkipSkipsExactly(10);
        // A connection starts on TCP and moves to its route once it has lived upgrade_after (2 ms):
        // a short one ends first, and so may a 16 MiB one while the two JVMs' first contact on
        // the route (a DECK tcp handshake) is still under way; connections of 16 MiB go on until
        // one has taken the route, for at most 20 s.
        long deadline = System.nanoTime() + 20_000_000_000L;
        String log = child.stderr();
        while (!log.contains(route) && System.nanoTime() - deadline < 0) {
            scenarios.randomWritesArriveIntactAtThePeer(10, 16 * MIB);
            Thread.sleep(10);
            log = child.stderr();
        }
        assertTrue(log.contains(route), log);
    }

    @AfterAll
    static void stopChild() throws Exception {
        if (child != null) {
            child.close();
        }
    }

    @Test
    void randomWritesFromThisJvmArriveIntactInTheChild() throws Exception {
        scenarios.randomWritesArriveIntactAtThePeer(11, 32 * MIB);
    }

    @Test
    void randomWritesFromTheChildArriveIntactHere() throws Exception {
        scenarios.randomWritesFromThePeerArriveIntact(12, 32 * MIB);
    }

    @Test
    void sixtyFourMebibytesArriveWithTheSameSha256() throws Exception {
        scenarios.bulkSha256MegabytesPerSecond(13, 64 * MIB);
    }

    @Test
    void objectGraphWithCyclesComesBackEqual() throws Exception {
        scenarios.objectGraphWithCyclesComesBackEqual(14);
    }

    @ParameterizedTest(name = "flush before close: {0}")
    @ValueSource(booleans = {true, false})
    void closeDeliversEveryByteThenEndOfStream(boolean flushFirst) throws Exception {
        scenarios.closeDeliversEveryByteThenEndOfStream(flushFirst, 15, 3 * MIB + 7);
    }

    @Test
    void availableCountsReceivedBytesAndSkipSkipsExactly() throws Exception {
        scenarios.availableCountsReceivedBytesAndSkipSkipsExactly(16);
    }
}
