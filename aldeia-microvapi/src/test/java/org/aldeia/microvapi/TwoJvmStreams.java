package org.aldeia.microvapi;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One byte stream between this JVM and a child JVM over Aldeia with no configuration file
 * (MicroVAPI over DECK dynamic/tcp), checked end to end by SHA-256: the {@link StreamScenarios},
 * which {@link StaticDeckSciStreamTest} runs over DECK static/sci. Every test opens its own
 * connection to the same child. Timeouts run the test in its own thread so that a read that
 * never returns fails the test instead of hanging the build.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class TwoJvmStreamTest {

    private static final long MIB = 1 << 20;

    private static ChildJvm child;
    private static StreamScenarios scenarios;

    @BeforeAll
    static void startChild() throws Exception {
        child = ChildJvm.start(List.of(), PeerMain.class);
        scenarios = new StreamScenarios(Integer.parseInt(child.awaitLine("PORT ")));
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
