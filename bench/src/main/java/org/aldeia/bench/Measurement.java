package org.aldeia.bench;

import java.util.Locale;
import java.util.Optional;

/**
 * One cell of the benchmark: {@code count} round trips (latency) or chunks (bandwidth) of
 * {@code sizeBytes} each, in {@code elapsedNanos}. The client JVM prints it as one stdout line
 * ({@link #toLine()}), the orchestrating JVM reads it back ({@link #parse}).
 */
record Measurement(Metric metric, int sizeBytes, long count, long elapsedNanos) {

    static final String LINE_PREFIX = "BENCH-RESULT";

    enum Metric {
        /** One-way time of a ping-pong: half a round trip. */
        LATENCY("us"),
        /** Payload bytes streamed per second, in MB/s (10^6 bytes). */
        BANDWIDTH("MB/s");

        private final String unit;

        Metric(String unit) {
            this.unit = unit;
        }

        String unit() {
            return unit;
        }
    }

    Measurement {
        if (sizeBytes < 0 || count < 1 || elapsedNanos < 1) {
            throw new IllegalArgumentException("not a measurement: " + metric + " size " + sizeBytes
                    + ", count " + count + ", " + elapsedNanos + " ns");
        }
    }

    /** µs one way for LATENCY, MB/s for BANDWIDTH. */
    double value() {
        return metric == Metric.LATENCY
                ? elapsedNanos / (2.0 * count) / 1e3
                : (double) sizeBytes * count / (elapsedNanos / 1e9) / 1e6;
    }

    /**
     * The ping-pong's payload throughput in MB/s: size over one-way time (what the thesis's
     * bandwidth figure shows); for BANDWIDTH the measured value itself.
     */
    double megabytesPerSecond() {
        return metric == Metric.LATENCY ? sizeBytes / value() : value();
    }

    String toLine() {
        return String.format(Locale.ROOT, "%s %s %d %d %d", LINE_PREFIX, metric.name().toLowerCase(Locale.ROOT),
                sizeBytes, count, elapsedNanos);
    }

    /** The measurement on a line printed by {@link #toLine()}; empty for any other line (e.g. a log line). */
    static Optional<Measurement> parse(String line) {
        String[] words = line.trim().split("\\s+");
        if (words.length != 5 || !words[0].equals(LINE_PREFIX)) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Measurement(Metric.valueOf(words[1].toUpperCase(Locale.ROOT)),
                    Integer.parseInt(words[2]), Long.parseLong(words[3]), Long.parseLong(words[4])));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("malformed result line '" + line + "': " + e.getMessage(), e);
        }
    }
}
