package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.aldeia.bench.Measurement.Metric;
import org.junit.jupiter.api.Test;

class ResultTableTest {

    private static final List<Row> ROWS = List.of(
            Fixtures.row(Transport.JDK_LOOPBACK, Placement.FREE, 20.0, 2000.0),
            Fixtures.row(Transport.JDK_LOOPBACK, Placement.PINNED, 10.0, 1000.0),
            Fixtures.row(Transport.AERON_IPC, Placement.FREE, 5.0, 3000.0),
            Fixtures.row(Transport.AERON_IPC, Placement.PINNED, 5.0, 3000.0),
            Fixtures.failed(Transport.ALDEIA_STATIC_SCI, "deck_transport 'sci' is not implemented"));

    @Test
    void medianCellsAreRatiosToJdkLoopbackInTheSamePlacement() {
        String latency = block(ResultTable.render(ROWS, BenchClient.SIZES), 0);
        String free = line(latency, Transport.AERON_IPC.label(), "free");
        assertEquals(BenchClient.SIZES.size(), count(free, "5.00 (0.25x)"), free);
        String pinned = line(latency, Transport.AERON_IPC.label(), "pinned");
        assertEquals(BenchClient.SIZES.size(), count(pinned, "5.00 (0.50x)"), pinned);
        String jdk = line(latency, Transport.JDK_LOOPBACK.label(), "free");
        assertEquals(BenchClient.SIZES.size(), count(jdk, "20.0 (1.00x)"), jdk);
        assertTrue(latency.startsWith("One-way latency, median µs") && latency.contains("median of 3 runs"), latency);
    }

    @Test
    void theTailBlockShowsP99AndP999() {
        String tail = block(ResultTable.render(ROWS, BenchClient.SIZES), 1);
        String aeron = line(tail, Transport.AERON_IPC.label(), "free");
        assertEquals(BenchClient.SIZES.size(), count(aeron, "10.0 / 15.0"), aeron);
    }

    @Test
    void theStreamBlockShowsBothWriteSizesSetUpAndCpu() {
        String stream = block(ResultTable.render(ROWS, BenchClient.SIZES), 2);
        String header = line(stream, "transport", "placement");
        for (String column : List.of("stream 64 KiB", "stream 1 MiB", "set-up warming", "set-up steady", "CPU µs / 64 B RT")) {
            assertTrue(header.contains(column), header);
        }
        String aeron = line(stream, Transport.AERON_IPC.label(), "pinned");
        assertEquals(2, count(aeron, "3000 (3.00x)"), aeron);
        assertTrue(aeron.contains("50.0 / 100 (0.50x) | 20.0 / 35.0 (0.50x)"), aeron);
        assertTrue(aeron.endsWith("5.00 (0.50x)"), aeron);
    }

    @Test
    void theAsynchronousWriteBlockShowsWhenWriteReturnedAndWhenThePeerHadItPerSize() {
        String async = block(ResultTable.render(ROWS, BenchClient.SIZES), 3);
        assertTrue(async.startsWith("Asynchronous write (thesis Fig. 5.8)"), async);
        String header = line(async, "transport", "placement");
        for (String column : List.of("10 kB write returns", "10 kB peer has it", "1 MB write returns", "1 MB peer has it")) {
            assertTrue(header.contains(column), header);
        }
        String aeron = line(async, Transport.AERON_IPC.label(), "free");
        List<String> cells = List.of(aeron.split("\\|")).stream().map(String::trim).toList();
        assertEquals(List.of("10.0 (0.25x)", "150 (0.25x)", "10.0 (0.25x)", "150 (0.25x)"), cells.subList(2, 6), aeron);
    }

    @Test
    void theApplicationsBlockShowsAppAndRmiCallMediansAndMeansWithRatiosAndTails() {
        String application = block(ResultTable.render(ROWS, BenchClient.SIZES), 4);
        assertTrue(application.startsWith("Applications, per call"), application);
        String aeron = line(application, Transport.AERON_IPC.label(), "free");
        List<String> cells = List.of(aeron.split("\\|")).stream().map(String::trim).toList();
        assertEquals(List.of("25.0 (0.25x)", "30.0 (0.25x)", "200 / 400", "35.0 (0.25x)", "40.0 (0.25x)", "45.0 / 55.0"),
                cells.subList(2, 8), aeron);
        assertTrue(line(application, Transport.ALDEIA_STATIC_SCI.label(), "free").endsWith("| n/a"));
    }

    @Test
    void theColumnsOfEveryBlockLineUp() {
        String table = ResultTable.render(ROWS, BenchClient.SIZES);
        for (int i = 0; i < 5; i++) {
            String block = block(table, i);
            String header = line(block, "transport", "placement");
            String aeron = line(block, Transport.AERON_IPC.label(), "pinned");
            assertEquals(separators(header), separators(aeron), "columns line up:\n" + header + "\n" + aeron);
            assertEquals(header.length(), aeron.length());
        }
        String header = line(block(table, 0), "transport", "placement");
        for (String size : List.of("1 B", "64 B", "1 KiB", "10 KiB", "64 KiB", "1 MiB")) {
            assertTrue(header.contains(size), header);
        }
    }

    @Test
    void aRowThatCouldNotRunIsOneNotAvailableCellWithItsReason() {
        String table = ResultTable.render(ROWS, BenchClient.SIZES);
        String sci = line(block(table, 0), Transport.ALDEIA_STATIC_SCI.label(), "free");
        assertTrue(sci.endsWith("| n/a (deck_transport 'sci' is not implemented)"), sci);
        assertTrue(line(block(table, 2), Transport.ALDEIA_STATIC_SCI.label(), "free").endsWith("| n/a"));
        assertTrue(table.contains("BackoffIdleStrategy"), "the table says how Aeron idles");
    }

    @Test
    void aPartialRunShowsItsCellsAndSaysWhyTheRestIsMissing() {
        Measurement one = new Measurement(Metric.LATENCY, 1, 10, 400_000, 20_000, 20_000, 20_000); // 20 µs one way
        Row partial = Row.of(Transport.JDK_UNIX, Placement.FREE,
                List.of(new TransportResult(Transport.JDK_UNIX, List.of(one), "client: peer closed")));
        String table = ResultTable.render(List.of(Fixtures.row(Transport.JDK_LOOPBACK, Placement.FREE, 10.0, 1000.0),
                partial), BenchClient.SIZES);
        String unix = line(block(table, 0), Transport.JDK_UNIX.label(), "free");
        assertTrue(unix.contains("20.0 (2.00x)"), unix);
        assertEquals(BenchClient.SIZES.size() - 1, count(unix, "n/a"), unix);
        assertTrue(table.contains(Transport.JDK_UNIX.label() + " (free): stopped early (cells from 1 run): client: peer closed"), table);
    }

    @Test
    void aMeanWithoutMedianIsMarkedAndExplained() {
        Cell mean = new Cell(Metric.LATENCY, 64, 1, 0.9, Double.NaN, Double.NaN, Double.NaN);
        assertEquals("0.90*", ResultTable.withRatio(Optional.of(mean), Optional.empty()));
        Row anchor = new Row("libfabric-shm", "libfabric shm", 99, Placement.FREE, List.of(mean), null);
        String table = ResultTable.render(List.of(anchor), BenchClient.SIZES);
        assertTrue(table.contains("* a mean: fi_pingpong prints no median"), table);
    }

    @Test
    void withoutABaselineCellsShowTheValueAlone() {
        Cell cell = new Cell(Metric.LATENCY, 1, 1, 2.0, 1.5, 3.0, 4.0);
        assertEquals("1.50", ResultTable.withRatio(Optional.of(cell), Optional.empty()));
        assertEquals("n/a", ResultTable.withRatio(Optional.empty(), Optional.of(cell)));
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

    /** The i-th block of the table (they are separated by an empty line). */
    private static String block(String table, int index) {
        return table.split("\n\n")[index];
    }

    private static String line(String block, String start, String placement) {
        return block.lines().filter(l -> l.startsWith(start) && l.split("\\|")[1].trim().equals(placement)).findFirst()
                .orElseThrow(() -> new AssertionError("no line of '" + start + "' " + placement + " in\n" + block));
    }

    private static List<Integer> separators(String line) {
        List<Integer> at = new ArrayList<>();
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
