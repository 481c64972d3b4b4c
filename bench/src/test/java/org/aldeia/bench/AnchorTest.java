package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.aldeia.bench.Measurement.Metric;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The anchor tools' output as captured from real runs on this project's machine (src/test/resources/anchors). */
class AnchorTest {

    @Test
    void ucxPerftestGivesItsPercentileMeanAndBandwidthFromTheFinalLine() throws IOException {
        // A free-placement 1 MiB run long enough for two progress lines between header and result.
        UcxPerftest.Result result = UcxPerftest.parse(captured("ucx_perftest-tag_lat-1048576-R50-free.txt"));
        assertEquals(50.0, result.rank());
        assertEquals(76.386, result.percentileMicros(), 1e-9);
        assertEquals(335.432, result.averageMicros(), 1e-9, "overall_lat: the whole run, not the last second");
        assertEquals(2981.23, result.bandwidthMiBps(), 1e-9);
        UcxPerftest.Result tail = UcxPerftest.parse(captured("ucx_perftest-tag_lat-64-R99.9.txt"));
        assertEquals(99.9, tail.rank());
        assertEquals(0.225, tail.percentileMicros(), 1e-9);
    }

    @Test
    void ucxLatencyCellsKeepTheirPercentilesInOrder() throws IOException {
        UcxPerftest.Result median = new UcxPerftest.Result(50, 0.105, 0.112, 500);
        UcxPerftest.Result p99 = UcxPerftest.parse(captured("ucx_perftest-tag_lat-64-R99.txt"));
        UcxPerftest.Result p999 = new UcxPerftest.Result(99.9, 0.120, 0.119, 500); // a run with a lower tail
        Cell cell = UcxPerftest.latency(64, median, p99, p999);
        assertEquals(Metric.LATENCY, cell.metric());
        assertEquals(0.105, cell.median(), 1e-12);
        assertEquals(0.141, cell.p99(), 1e-12);
        assertEquals(0.141, cell.p999(), 1e-12, "raised to the p99 of the other run");
        assertEquals(0.112, cell.mean(), 1e-12);
    }

    @Test
    void ucxBandwidthRunsParseAndAnOutputWithoutResultIsAnError() throws IOException {
        assertEquals(1459.80, UcxPerftest.parse(captured("ucx_perftest-tag_bw-65536.txt")).bandwidthMiBps(), 1e-9);
        IOException e = assertThrows(IOException.class, () -> UcxPerftest.parse(
                "[1795497314.390935] [vm:6045 :0]        perftest.c:405  UCX  ERROR client failed. connect() failed: "
                        + "Connection refused\n"));
        assertTrue(e.getMessage().contains("connect() failed"), e.getMessage());
    }

    @Test
    void fiPingpongGivesItsMicrosecondsPerTransferAndItsBandwidth() throws IOException {
        String captured = captured("fi_pingpong-shm-1048576.txt");
        assertEquals(499.79, FiPingpong.parseColumn(captured, "usec/xfer"), 1e-9);
        assertEquals(2098.02, FiPingpong.parseColumn(captured, "MB/sec"), 1e-9);
        IOException e = assertThrows(IOException.class, () -> FiPingpong.parseColumn(
                "[error] util/pingpong.c:408 : failed to connect: Connection refused\n", "usec/xfer"));
        assertTrue(e.getMessage().endsWith("failed to connect: Connection refused"), e.getMessage());
    }

    @Test
    void iterationsShrinkWithSizeWithinBounds() {
        assertEquals(20_000, Anchor.iterations(64, false));
        assertEquals(6_103, Anchor.iterations(65536, false));
        assertEquals(2_500, Anchor.iterations(1 << 20, false));
        assertEquals(2_000, Anchor.iterations(64, true));
        assertEquals(250, Anchor.iterations(1 << 20, true));
    }

    @Test
    void onlySelectsTransportsAndAnchorsByName() {
        Selection selection = Selection.parse("ucx-shm, jdk-loopback,aldeia-dynamic-auto,jdk-loopback");
        assertEquals(List.of(Transport.JDK_LOOPBACK, Transport.ALDEIA_DYNAMIC_AUTO), selection.transports());
        assertEquals(List.of(Anchor.UCX_SHM), selection.anchors());
        assertEquals(Selection.ALL, Selection.parse(null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Selection.parse("ucx"));
        assertTrue(e.getMessage().contains("libfabric-shm"), e.getMessage());
        assertTrue(Anchor.UCX_SHM.order() > Transport.AERON_IPC.ordinal());
    }

    @Test
    void aToolPairReturnsTheClientsOutputOrItsLastErrorLine(@TempDir Path dir) throws Exception {
        ToolPair pair = new ToolPair(Map.of("ANCHOR_TEST", "seen"), Duration.ofSeconds(30));
        List<String> server = List.of("sh", "-c", "exit 0");
        assertEquals("result seen\n", pair.run(Placement.FREE, server,
                List.of("sh", "-c", "echo result $ANCHOR_TEST"), dir.resolve("ok")));
        IOException e = assertThrows(IOException.class, () -> pair.run(Placement.FREE, server,
                List.of("sh", "-c", "echo first; echo boom >&2; exit 3"), dir.resolve("fails")));
        assertTrue(e.getMessage().contains("status 3: boom"), e.getMessage());
        assertTrue(Anchor.onPath("sh"));
        assertFalse(Anchor.onPath("no-such-tool-for-aldeia"));
    }

    private static String captured(String name) throws IOException {
        try (InputStream in = AnchorTest.class.getResourceAsStream("/anchors/" + name)) {
            if (in == null) {
                throw new IOException("no captured output " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
