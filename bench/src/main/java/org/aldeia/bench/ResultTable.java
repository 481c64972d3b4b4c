package org.aldeia.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The benchmark's one table: a row per transport, a column per ping-pong size (one-way latency)
 * and one for streaming bandwidth; each cell is "value (ratio to the JDK loopback row)".
 */
final class ResultTable {

    private static final int MAX_REASON = 160;

    private ResultTable() {
    }

    static String render(List<TransportResult> results, List<Integer> sizes) {
        Optional<TransportResult> baseline = results.stream()
                .filter(r -> r.transport() == Transport.BASELINE).findFirst();
        List<String> header = new ArrayList<>();
        header.add("transport");
        sizes.forEach(size -> header.add(Sizes.label(size)));
        header.add("stream MB/s");
        List<List<String>> rows = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (TransportResult result : results) {
            List<String> row = new ArrayList<>();
            row.add(result.transport().label());
            if (result.measurements().isEmpty()) {
                row.add("n/a (" + shortened(result.failure()) + ")");
            } else {
                for (int size : sizes) {
                    row.add(cell(result.latency(size), baseline.flatMap(b -> b.latency(size))));
                }
                row.add(cell(result.bandwidth(), baseline.flatMap(TransportResult::bandwidth)));
                if (result.failure() != null) {
                    notes.add(result.transport().label() + ": stopped early: " + result.failure());
                }
            }
            rows.add(row);
        }
        StringBuilder text = new StringBuilder()
                .append("One-way latency in µs (ping-pong, half a round trip) per message size; streaming bandwidth in MB/s\n")
                .append("(10^6 B/s, 64 KiB writes). Each cell: value (ratio to ").append(Transport.BASELINE.label())
                .append("; latency < 1x and bandwidth > 1x are better).\n");
        appendAligned(text, header, rows);
        text.append("Aeron IPC: embedded media driver in the server JVM, ThreadingMode.SHARED, BackoffIdleStrategy\n")
                .append("(spin, yield, then park 1..100 µs) in the driver and both clients: no busy-spinning on 2 cores.\n");
        notes.forEach(note -> text.append(note).append('\n'));
        return text.toString();
    }

    /**
     * A failure reason cut to one readable line, keeping its start (who failed) and its end
     * (native errors put the cause last); the CSV keeps it whole.
     */
    static String shortened(String reason) {
        if (reason.length() <= MAX_REASON) {
            return reason;
        }
        int head = MAX_REASON / 3;
        return reason.substring(0, head) + " ... " + reason.substring(reason.length() - (MAX_REASON - head - 5));
    }

    /** "12.3 (0.45x)"; "n/a" without a measurement; the value alone without a baseline figure. */
    static String cell(Optional<Measurement> measurement, Optional<Measurement> baseline) {
        if (measurement.isEmpty()) {
            return "n/a";
        }
        double value = measurement.get().value();
        return baseline.map(b -> number(value) + " (" + ratio(value / b.value()) + ")").orElse(number(value));
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
                line.append(" | ").append(spanning ? row.get(i) : pad(row.get(i), widths[i], true));
            }
            text.append(line.toString().stripTrailing()).append('\n');
        }
    }

    private static String pad(String cell, int width, boolean right) {
        String spaces = " ".repeat(Math.max(0, width - cell.length()));
        return right ? spaces + cell : cell + spaces;
    }
}
