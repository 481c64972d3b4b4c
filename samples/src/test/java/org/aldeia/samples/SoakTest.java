package org.aldeia.samples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The soak of issue 10 in CI: 64 connections at a time for {@value #DEFAULT_MINUTES} minutes
 * (the system property {@code aldeia.soak.minutes} changes it) with random sizes, every echo and
 * SHA-256 checked, connections closed and reopened, over shared memory (auto) and over DECK tcp;
 * it passes with no error in either JVM and both JVMs' threads and descriptors back to their
 * baseline. {@link Soak} runs in a JVM of its own because a JVM's transport is fixed once.
 */
@Timeout(600)
class SoakTest {

    static final String DEFAULT_MINUTES = "2";

    @ParameterizedTest
    @ValueSource(strings = {"auto", "tcp"})
    void sixtyFourPairsWithoutAnErrorAndBackToBaseline(String transport) throws Exception {
        String minutes = System.getProperty("aldeia.soak.minutes", DEFAULT_MINUTES);
        try (ChildJvm soak = ChildJvm.start("soak " + transport, Soak.class,
                List.of("--minutes", minutes, "--pairs", "64", "--transport", transport))) {
            String done = soak.awaitLineContaining("done:", Duration.ofSeconds((long) (Double.parseDouble(minutes) * 60) + 300));
            System.out.println(done);
            assertTrue(done.contains(" 0 errors;") && done.contains(" errors=0 "), done);
            soak.awaitSuccess(Duration.ofSeconds(60));
        }
    }
}
