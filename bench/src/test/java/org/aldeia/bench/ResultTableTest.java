package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class ResultTableTest {

    private static final List<TransportResult> RESULTS = List.of(
            Fixtures.result(Transport.JDK_LOOPBACK, 20.0, 2000.0),
            Fixtures.result(Transport.AERON_IPC, 5.0, 3000.0),
            Fixtures.failed(Transport.ALDEIA_STATIC_SCI, "deck_transport 'sci' is not implemented"));

    @Test
    void everyCellIsTheValueAndItsRatioToJdkLoopback() {
        String table = ResultTable.render(RESULTS, BenchClient.SIZES);
        String aeron = line(table, Transport.AERON_IPC.label());
        assertEquals(BenchClient.SIZES.size(), count(aeron, "5.00 (0.25x)"), aeron);
        assertTrue(aeron.endsWith("3000 (1.50x)"), aeron);
        String jdk = line(table, Transport.JDK_LOOPBACK.label());
        assertEquals(BenchClient.SIZES.size(), count(jdk, "20.0 (1.00x)"), jdk);
        assertTrue(jdk.endsWith("2000 (1.00x)"), jdk);
    }

    @Test
    void theHeaderNamesEverySizeAndTheColumnsLineUp() {
        String table = ResultTable.render(RESULTS, BenchClient.SIZES);
        String header = line(table, "transport");
        for (String size : List.of("1 B", "64 B", "1 KiB", "10 KiB", "64 KiB", "1 MiB", "stream MB/s")) {
            assertTrue(header.contains(size), header);
        }
        String aeron = line(table, Transport.AERON_IPC.label());
        assertEquals(separators(header), separators(aeron), "columns line up:\n" + header + "\n" + aeron);
        assertEquals(header.length(), aeron.length());
    }

    @Test
    void aTransportThatCouldNotRunIsOneNotAvailableCellWithItsReason() {
        String table = ResultTable.render(RESULTS, BenchClient.SIZES);
        String sci = line(table, Transport.ALDEIA_STATIC_SCI.label());
        assertTrue(sci.endsWith("| n/a (deck_transport 'sci' is not implemented)"), sci);
        assertTrue(table.contains("BackoffIdleStrategy"), "the table says how Aeron idles");
    }

    @Test
    void aPartialRunShowsItsCellsAndSaysWhyTheRestIsMissing() {
        Measurement one = new Measurement(Measurement.Metric.LATENCY, 1, 10, 400_000); // 20 µs one way
        TransportResult partial = new TransportResult(Transport.JDK_UNIX, List.of(one), "client: peer closed");
        String table = ResultTable.render(List.of(Fixtures.result(Transport.JDK_LOOPBACK, 10.0, 1000.0), partial),
                BenchClient.SIZES);
        String unix = line(table, Transport.JDK_UNIX.label());
        assertTrue(unix.contains("20.0 (2.00x)"), unix);
        assertEquals(BenchClient.SIZES.size(), count(unix, "n/a"), unix);
        assertTrue(table.contains(Transport.JDK_UNIX.label() + ": stopped early: client: peer closed"), table);
    }

    @Test
    void withoutABaselineCellsShowTheValueAlone() {
        Measurement m = new Measurement(Measurement.Metric.LATENCY, 1, 1, 3000);
        assertEquals("1.50", ResultTable.cell(Optional.of(m), Optional.empty()));
        assertEquals("n/a", ResultTable.cell(Optional.empty(), Optional.of(m)));
    }

    @Test
    void numbersKeepAboutThreeSignificantDigits() {
        assertEquals("1.23", ResultTable.number(1.234));
        assertEquals("12.3", ResultTable.number(12.34));
        assertEquals("1235", ResultTable.number(1234.6));
        assertEquals("0.25x", ResultTable.ratio(0.2512));
        assertEquals("19.1x", ResultTable.ratio(19.07));
        String longReason = "server: " + "x".repeat(500) + " unknown key 'k'";
        String shortened = ResultTable.shortened(longReason);
        assertEquals(160, shortened.length());
        assertTrue(shortened.startsWith("server: xxx") && shortened.contains(" ... ")
                && shortened.endsWith("xxx unknown key 'k'"), shortened);
        assertEquals("short", ResultTable.shortened("short"));
    }

    private static String line(String table, String start) {
        return table.lines().filter(l -> l.startsWith(start)).findFirst()
                .orElseThrow(() -> new AssertionError("no line starting with '" + start + "' in\n" + table));
    }

    private static List<Integer> separators(String line) {
        List<Integer> at = new java.util.ArrayList<>();
        for (int i = line.indexOf(" | "); i >= 0; i = line.indexOf(" | ", i + 1)) {
            at.add(i);
        }
        return at;
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
            n++;
        }
        return n;
    }
}
