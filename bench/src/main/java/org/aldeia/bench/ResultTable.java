package org.aldeia.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

import org.aldeia.bench.Measurement.Metric;

/**
 * The benchmark's tables, a row per transport and placement: median one-way latency per
 * ping-pong size; its tail (p99 / p99.9); streaming bandwidth, connection set-up and CPU per
 * round trip; the asynchronous write; the application and RMI phases' calls. Ratios are to the JDK loopback row of the same placement.
 */
final class ResultTable {

    private static final int MAX_REASON = 160;
    /** Marks a figure that is a mean because its tool prints no median (fi_pingpong). */
    static final String MEAN_ONLY = "*";

    private ResultTable() {
    }

    static String render(List<Row> rows, List<Integer> sizes) {
        int runs = rows.stream().flatMap(r -> r.cells().stream()).mapToInt(Cell::runs).max().orElse(1);
        StringBuilder text = new StringBuilder();
        text.append("One-way latency, median µs (ping-pong, half of each round trip), median of ").append(runs)
                .append(runs == 1 ? " run" : " runs").append(". Each cell: value (ratio to ")
                .append(Transport.BASELINE.label()).append(" in the same placement; < 1x is better).\n");
        appendBlock(text, rows, headerOf(sizes.stream().map(Sizes::label).toList()), row -> {
            List<String> cells = new ArrayList<>();
            for (int size : sizes) {
                cells.add(withRatio(row.cell(Metric.LATENCY, size), baseline(rows, row, Metric.LATENCY, size)));
            }
            return cells;
        }, true);
        text.append("\nOne-way latency tail: p99 / p99.9 µs.\n");
        appendBlock(text, rows, headerOf(sizes.stream().map(Sizes::label).toList()), row -> {
            List<String> cells = new ArrayList<>();
            for (int size : sizes) {
                cells.add(row.cell(Metric.LATENCY, size).filter(Cell::hasMedian)
                        .map(c -> number(c.p99()) + " / " + number(c.p999())).orElse("n/a"));
            }
            return cells;
        }, false);
        text.append("\nStreaming MB/s (10^6 B/s) with 64 KiB and with 1 MiB writes (> 1x is better); connection set-up\n")
                .append("(connect + 1-byte echo + close, sequential) median / p99 µs, JIT warming (the default run:\n")
                .append("connections 2001-3000) and steady (20 001-21 000, the connect path compiled); CPU µs per\n")
                .append("64 B round trip (user + sys of both JVMs over the 64 B ping-pong). Ratios to ")
                .append(Transport.BASELINE.label()).append(", same placement.\n");
        List<String> streamHeader = new ArrayList<>();
        BenchClient.STREAM_CHUNKS.forEach(chunk -> streamHeader.add("stream " + Sizes.label(chunk)));
        streamHeader.add("set-up warming");
        streamHeader.add("set-up steady");
        streamHeader.add("CPU µs / 64 B RT");
        appendBlock(text, rows, headerOf(streamHeader), row -> {
            List<String> cells = new ArrayList<>();
            for (int chunk : BenchClient.STREAM_CHUNKS) {
                cells.add(withRatio(row.cell(Metric.BANDWIDTH, chunk), baseline(rows, row, Metric.BANDWIDTH, chunk)));
            }
            for (Metric setup : List.of(Metric.SETUP, Metric.SETUP_STEADY)) {
                Optional<Cell> base = baseline(rows, row, setup, 1);
                cells.add(row.cell(setup).map(c -> number(c.median()) + " / " + number(c.p99())
                        + base.map(b -> " (" + ratio(c.median() / b.median()) + ")").orElse("")).orElse("n/a"));
            }
            cells.add(withRatio(row.cell(Metric.CPU), baseline(rows, row, Metric.CPU, BenchClient.CPU_SIZE)));
            return cells;
        }, false);
        text.append("\nAsynchronous write (thesis Fig. 5.8), one message at a time: median µs from the call of write()\n")
                .append("until it returns, and until the server's 1-byte acknowledgement of the whole message is back\n")
                .append("(the peer has it). Ratios to ").append(Transport.BASELINE.label()).append(", same placement.\n");
        List<String> asyncHeader = new ArrayList<>();
        for (int size : BenchClient.ASYNC_SIZES) {
            asyncHeader.add(Sizes.label(size) + " write returns");
            asyncHeader.add(Sizes.label(size) + " peer has it");
        }
        appendBlock(text, rows, headerOf(asyncHeader), row -> {
            List<String> cells = new ArrayList<>();
            for (int size : BenchClient.ASYNC_SIZES) {
                for (Metric metric : List.of(Metric.WRITE_RETURN, Metric.WRITE_DELIVERED)) {
                    cells.add(withRatio(row.cell(metric, size), baseline(rows, row, metric, size)));
                }
            }
            return cells;
        }, false);
        text.append("\nApplications, per call (round trip): median (ratio to ").append(Transport.BASELINE.label())
                .append(", same placement), mean (ratio) and p99 / p99.9 µs.\n")
                .append("The calls overlap: with a call always under way on each connection, the mean call is the\n")
                .append("connections over the calls per second (the phase's throughput), which a median does not\n")
                .append("show when some connections go fast while others wait.\n")
                .append("app: ").append(ApplicationPhase.CONNECTIONS).append(" connections, each with a calling thread")
                .append(" and a reader thread, requests and responses\nobjects (ObjectOutputStream) of 1 to 8 KiB,")
                .append(" a third JVM computing meanwhile.\nRMI: the RMI sample's remote object, int[")
                .append(RmiPhase.INTS).append("] each way, one call after the other.\n");
        appendBlock(text, rows, headerOf(List.of("app median", "app mean", "app p99 / p99.9", "RMI median", "RMI mean",
                "RMI p99 / p99.9")), row -> {
            List<String> cells = new ArrayList<>();
            for (Metric metric : List.of(Metric.APPLICATION, Metric.RMI)) {
                Optional<Cell> call = row.cell(metric);
                Optional<Cell> base = call.flatMap(c -> baseline(rows, row, metric, c.sizeBytes()));
                cells.add(withRatio(call, base));
                cells.add(call.map(c -> number(c.mean()) + base.map(b -> " (" + ratio(c.mean() / b.mean()) + ")").orElse(""))
                        .orElse("n/a"));
                cells.add(call.map(c -> number(c.p99()) + " / " + number(c.p999())).orElse("n/a"));
            }
            return cells;
        }, false);
        if (rows.stream().flatMap(r -> r.cells().stream()).anyMatch(c -> !c.hasMedian() && c.metric() == Metric.LATENCY)) {
            text.append(MEAN_ONLY).append(" a mean: fi_pingpong prints no median or percentiles.\n");
        }
        text.append("Aeron IPC: embedded media driver in the server JVM, ThreadingMode.SHARED, BackoffIdleStrategy\n")
                .append("(spin, yield, then park 1..100 µs) in the driver and both clients: no busy-spinning on 2 cores.\n")
                .append("UCX and libfabric rows are their own C tools, which busy-poll: anchors, not Java transports;\n")
                .append("ucx_perftest takes its percentiles over its last 2048 iterations.\n");
        for (Row row : rows) {
            if (!row.cells().isEmpty() && row.failure() != null) {
                int done = row.cells().stream().mapToInt(Cell::runs).max().orElse(0);
                text.append(row.label()).append(" (").append(row.placement().label()).append("): stopped early (cells from ")
                        .append(done).append(done == 1 ? " run" : " runs").append("): ").append(row.failure()).append('\n');
            }
        }
        return text.toString();
    }

    private static List<String> headerOf(List<String> columns) {
        List<String> header = new ArrayList<>(List.of("transport", "placement"));
        header.addAll(columns);
        return header;
    }

    /**
     * One aligned block: a line per row, its cells from {@code cells}; a row without any cell
     * is one "n/a" cell, with the reason when {@code reasons}.
     */
    private static void appendBlock(StringBuilder text, List<Row> rows, List<String> header,
            Function<Row, List<String>> cells, boolean reasons) {
        List<List<String>> lines = new ArrayList<>();
        for (Row row : rows) {
            List<String> line = new ArrayList<>(List.of(row.label(), row.placement().label()));
            if (row.cells().isEmpty()) {
                line.add(reasons ? "n/a (" + shortened(row.failure()) + ")" : "n/a");
            } else {
                line.addAll(cells.apply(row));
            }
            lines.add(line);
        }
        appendAligned(text, header, lines);
    }

    /** The cell of the baseline row in {@code row}'s placement. */
    private static Optional<Cell> baseline(List<Row> rows, Row row, Metric metric, int size) {
        return rows.stream().filter(r -> r.isBaselineFor(row)).findFirst().flatMap(b -> b.cell(metric, size));
    }

    /**
     * A failure reason cut to one readable line, keeping its start (who failed) and its end
     * (native errors put the cause last); the CSV keeps it whole.
     */
    static String shortened(String reason) {
        String text = reason == null ? "no result" : reason;
        if (text.length() <= MAX_REASON) {
            return text;
        }
        int head = MAX_REASON / 3;
        return text.substring(0, head) + " ... " + text.substring(text.length() - (MAX_REASON - head - 5));
    }

    /** "12.3 (0.45x)"; "n/a" without a figure; the value alone without a baseline figure. */
    static String withRatio(Optional<Cell> cell, Optional<Cell> baseline) {
        if (cell.isEmpty()) {
            return "n/a";
        }
        double value = cell.get().value();
        String shown = number(value) + (cell.get().hasMedian() || !cell.get().metric().hasPercentiles() ? "" : MEAN_ONLY);
        return baseline.map(b -> shown + " (" + ratio(value / b.value()) + ")").orElse(shown);
    }

    /** Three significant digits for the usual magnitudes: 1.23, 12.3, 123, 12345. */
    static String number(double value) {
        String format = value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f";
        return String.format(Locale.ROOT, format, value);
    }

    static String ratio(double ratio) {
        return String.format(Locale.ROOT, ratio >= 10 ? "%.1fx" : "%.2fx", ratio);
    }

    private static void appendAligned(StringBuilder text, List<String> header, List<List<String>> rows) {
        int[] widths = new int[header.size()];
        List<List<String>> all = new ArrayList<>();
        all.add(header);
        all.addAll(rows);
        for (List<String> row : all) {
            // A failed row's single reason cell spans the rest of the line: it sets no width.
            for (int i = 0; i < row.size() && row.size() == header.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        for (List<String> row : all) {
            boolean spanning = row.size() < header.size();
            StringBuilder line = new StringBuilder(pad(row.get(0), widths[0], false));
            for (int i = 1; i < row.size(); i++) {
                boolean span = spanning && i == row.size() - 1;
                line.append(" | ").append(span ? row.get(i) : pad(row.get(i), widths[i], i > 1));
            }
            text.append(line.toString().stripTrailing()).append('\n');
        }
    }

    private static String pad(String cell, int width, boolean right) {
        String spaces = " ".repeat(Math.max(0, width - cell.length()));
        return right ? spaces + cell : cell + spaces;
    }
}
