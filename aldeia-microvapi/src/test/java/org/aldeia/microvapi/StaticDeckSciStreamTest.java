package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.aldeia.deck.DeckLauncher;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link StreamScenarios} of {@link TwoJvmStreams} between the two JVMs of a static DECK
 * run over the sci transport (shared memory), once per range of DECK/SCI protocols the
 * MicroVAPI messages ([int length][at most mtu bytes]) fall in, and then no shared memory
 * segment of the run may be left in /dev/shm.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class StaticDeckSciStreamTest {

    private static final Logger LOG = LoggerFactory.getLogger(StaticDeckSciStreamTest.class);
    private static final long MIB = 1 << 20;
    /** What the log of this test shows of node 1's output: each scenario's time and the bulk rate. */
    private static final Pattern TIMINGS = Pattern.compile("(OK|THROUGHPUT) .*");
    private static final Pattern SEGMENTS = Pattern.compile("SEGMENTS (\\d+)");

    /** As TwoJvmStreams': a run takes a few seconds over sci, so every run moves them all. */
    private static final long RANDOM_BYTES = 32 * MIB;
    private static final long BULK_BYTES = 64 * MIB;

    /** The configurations, named by the DECK/SCI protocols their MicroVAPI messages use. */
    enum Protocols {
        /**
         * The defaults: every MicroVAPI message (up to 64 KiB of blocks) within deck_msg_buf_limit:
         * protocols 1 (at most 62 B) and 2.
         */
        ONE_AND_TWO(Map.of()),
        /** DECK/SCI's own 8192-byte limit under 16 KiB blocks: protocol 3's zero-copy rendezvous. */
        THREE_ABOVE_THE_LIMIT(Map.of("mtu", "16384", "deck_msg_buf_limit", "8192", "deck_medbuf_size", "24768")),
        /** A 512-byte limit under mtu 1024: protocols 1, 2 and 3 interleave on one stream. */
        ALL_THREE_INTERLEAVED(Map.of("mtu", "1024", "deck_msg_buf_limit", "512"));

        final Map<String, String> settings;

        Protocols(Map<String, String> settings) {
            this.settings = settings;
        }
    }

    @ParameterizedTest
    @EnumSource(Protocols.class)
    void streamScenariosPassOverSciAndLeaveNoSegmentBehind(Protocols protocols, @TempDir Path runDir) throws Exception {
        // Known here, so that the run's segments can be told from those of other runs on this host.
        String runKey = "ald" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        DeckLauncher launcher = new DeckLauncher(2, StaticStreamMain.class,
                Long.toString(RANDOM_BYTES), Long.toString(BULK_BYTES))
                .workDir(runDir)
                .timeout(Duration.ofSeconds(90))
                .environment(StaticStreamMain.ENV_RUN_KEY, runKey)
                .aldeiaSetting("deck_transport", "sci");
        protocols.settings.forEach(launcher::aldeiaSetting);

        DeckLauncher.Result run = launcher.launchAldeia();

        assertTrue(run.succeeded(), run::toString);
        for (int node = 0; node < 2; node++) {
            String output = run.output(node);
            assertTrue(output.contains("MicroVAPI over DECK static/sci (node " + node + " of 2"), output);
        }
        String client = run.output(1);
        for (String scenario : StreamScenarios.NAMES) {
            assertTrue(client.contains("OK " + scenario + " in "), "scenario '" + scenario + "' did not pass:\n" + client);
        }
        assertTrue(client.contains("STREAMS OK"), client);
        Matcher timings = TIMINGS.matcher(client);
        while (timings.find()) {
            LOG.info("{}: {}", protocols, timings.group());
        }

        Matcher segments = SEGMENTS.matcher(client);
        assertTrue(segments.find() && Integer.parseInt(segments.group(1)) > 0,
                "node 1 saw no /dev/shm segment named with run key " + runKey + " while the run was up:\n" + client);
        assertEquals(List.of(), StaticStreamMain.segmentsOfRun(runKey),
                "/dev/shm segments of run " + runKey + " left after both JVMs exited");
    }
}
