package org.aldeia.bench;

import java.util.Locale;
import java.util.Optional;

import org.HdrHistogram.Histogram;

/**
 * One cell of one run: {@code count} units (round trips, chunks, connections) of
 * {@code sizeBytes} in {@code elapsedNanos}, and for the metrics that time each unit its
 * median, p99 and p99.9 in nanoseconds (0 when not timed per unit). The client JVM prints it as
 * one stdout line ({@link #toLine()}), the orchestrating JVM reads it back ({@link #parse}).
 */
record Measurement(Metric metric, int sizeBytes, long count, long elapsedNanos, long p50Nanos, long p99Nanos,
        long p999Nanos) {

    static final String LINE_PREFIX = "BENCH-RESULT";

    enum Metric {
        /** One-way time of a ping-pong: half of each round trip; percentiles of those halves. */
        LATENCY("us"),
        /** Payload bytes streamed per second, in MB/s (10^6 bytes), with writes of sizeBytes. */
        BANDWIDTH("MB/s"),
        /** One connect + 1-byte echo + close; percentiles per connection, while the JIT is still compiling. */
        SETUP("us"),
        /**
         * As SETUP, once the connect path is compiled: a method called once per connection
         * reaches C2 after some 10 000 calls, so a program that opens a connection per request
         * runs this after a few seconds.
         */
        SETUP_STEADY("us"),
        /**
         * One call of the application phase (object request and response of 1..8 KiB over
         * several connections, a busy JVM beside): percentiles per call, round trip.
         */
        APPLICATION("us"),
        /** One call of the RMI phase (int[1024] each way, calls one after the other): percentiles per call. */
        RMI("us"),
        /** User + sys CPU time of both JVMs over the 64 B ping-pong, per round trip (elapsedNanos is CPU time). */
        CPU("us"),
        /**
         * The asynchronous write (thesis Fig. 5.8): how long one write() of a sizeBytes message
         * takes to return, percentiles per message (elapsedNanos is the sum).
         */
        WRITE_RETURN("us"),
        /**
         * The same messages, from the call of write() until the server's 1-byte acknowledgement of
         * all of it is back (the peer has the data, plus one small message's way back).
         */
        WRITE_DELIVERED("us");

        private final String unit;

        Metric(String unit) {
            this.unit = unit;
        }

        String unit() {
            return unit;
        }

        /** Whether the metric has a distribution (median, p99, p99.9) besides its mean. */
        boolean hasPercentiles() {
            return this != BANDWIDTH && this != CPU;
        }

        String optionName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    Measurement {
        if (sizeBytes < 0 || count < 1 || elapsedNanos < 0 || p50Nanos < 0 || p99Nanos < p50Nanos || p999Nanos < p99Nanos) {
            throw new IllegalArgumentException("not a measurement: " + metric + " size " + sizeBytes + ", count "
                    + count + ", " + elapsedNanos + " ns, percentiles " + p50Nanos + "/" + p99Nanos + "/" + p999Nanos);
        }
    }

    /** A cell with no per-unit distribution (streaming, CPU). */
    static Measurement total(Metric metric, int sizeBytes, long count, long elapsedNanos) {
        return new Measurement(metric, sizeBytes, count, elapsedNanos, 0, 0, 0);
    }

    /**
     * A cell whose units were recorded in {@code units} (nanoseconds each); {@code halved} for a
     * ping-pong, whose histogram holds round trips and whose table shows one-way times.
     */
    static Measurement distribution(Metric metric, int sizeBytes, long elapsedNanos, Histogram units, boolean halved) {
        int divisor = halved ? 2 : 1;
        return new Measurement(metric, sizeBytes, units.getTotalCount(), elapsedNanos,
                units.getValueAtPercentile(50) / divisor, units.getValueAtPercentile(99) / divisor,
                units.getValueAtPercentile(99.9) / divisor);
    }

    /**
     * The cell's figure in its unit: MB/s for BANDWIDTH, µs per round trip for CPU, the median
     * in µs for LATENCY (one way) and SETUP and SETUP_STEADY (per connection).
     */
    double value() {
        return metric.hasPercentiles() ? p50Nanos / 1e3 : mean();
    }

    /** The mean: µs one way (LATENCY), per connection (SETUP, SETUP_STEADY), per call (APPLICATION, RMI), CPU µs per round trip, or MB/s. */
    double mean() {
        switch (metric) {
            case LATENCY:
                return elapsedNanos / (2.0 * count) / 1e3;
            case BANDWIDTH:
                return (double) sizeBytes * count / (elapsedNanos / 1e9) / 1e6;
            default:
                return elapsedNanos / (double) count / 1e3;
        }
    }

    double p99() {
        return p99Nanos / 1e3;
    }

    double p999() {
        return p999Nanos / 1e3;
    }

    String toLine() {
        return String.format(Locale.ROOT, "%s %s %d %d %d %d %d %d", LINE_PREFIX, metric.optionName(), sizeBytes,
                count, elapsedNanos, p50Nanos, p99Nanos, p999Nanos);
    }

    /** The measurement on a line printed by {@link #toLine()}; empty for any other line (e.g. a log line). */
    static Optional<Measurement> parse(String line) {
        String[] words = line.trim().split("\\s+");
        if (words.length == 0 || !words[0].equals(LINE_PREFIX)) {
            return Optional.empty();
        }
        try {
            if (words.length != 8) {
                throw new IllegalArgumentException("8 words expected");
            }
            return Optional.of(new Measurement(Metric.valueOf(words[1].toUpperCase(Locale.ROOT)),
                    Integer.parseInt(words[2]), Long.parseLong(words[3]), Long.parseLong(words[4]),
                    Long.parseLong(words[5]), Long.parseLong(words[6]), Long.parseLong(words[7])));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("malformed result line '" + line + "': " + e.getMessage(), e);
        }
    }
}
