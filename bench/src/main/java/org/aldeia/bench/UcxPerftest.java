package org.aldeia.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.aldeia.bench.Measurement.Metric;

/**
 * The UCX anchor: {@code ucx_perftest} over UCX's shared-memory transports only
 * ({@code UCX_TLS=sm,self}), tag_lat per ping-pong size and tag_bw per streaming write size.
 * tag_lat prints one-way latency (half the round trip): the mean over the whole run
 * ({@code overall_lat}) and one percentile per run ({@code -R}), so each size runs three times:
 * median, p99 and p99.9. ucx_perftest takes its percentiles over its last 2048 iterations
 * (TIMING_QUEUE_SIZE in its libperf), so its p99.9 rests on two samples: a rough tail.
 * Its bandwidth is in MiB/s (2^20 B/s); the table's is in 10^6 B/s.
 */
final class UcxPerftest implements Anchor.Tool {

    static final Map<String, String> ENVIRONMENT = Map.of("UCX_TLS", "sm,self");
    private static final double MIB_TO_MB = 1024 * 1024 / 1e6;
    private static final double[] RANKS = {50, 99, 99.9};

    /** What one client run printed: its percentile (of rank {@code rank}), mean latency, bandwidth, whole run. */
    record Result(double rank, double percentileMicros, double averageMicros, double bandwidthMiBps) {
    }

    @Override
    public List<Cell> measureOnce(Placement placement, boolean quick, Path logs) throws IOException, InterruptedException {
        ToolPair pair = new ToolPair(ENVIRONMENT, Anchor.PROCESS_LIMIT);
        List<Cell> cells = new ArrayList<>();
        for (int size : BenchClient.SIZES) {
            Result[] byRank = new Result[RANKS.length];
            for (int i = 0; i < RANKS.length; i++) {
                byRank[i] = run(pair, placement, "tag_lat", size, quick, RANKS[i], logs);
            }
            cells.add(latency(size, byRank[0], byRank[1], byRank[2]));
        }
        for (int chunk : BenchClient.STREAM_CHUNKS) {
            Result bandwidth = run(pair, placement, "tag_bw", chunk, quick, RANKS[0], logs);
            cells.add(new Cell(Metric.BANDWIDTH, chunk, 1, bandwidth.bandwidthMiBps() * MIB_TO_MB,
                    Double.NaN, Double.NaN, Double.NaN));
        }
        return cells;
    }

    /**
     * The latency cell of three runs (ranks 50, 99, 99.9). The percentiles come from separate
     * runs, so a tail can come out below the median of another run: each is raised to at least
     * the one below it rather than reported out of order.
     */
    static Cell latency(int size, Result median, Result p99, Result p999) {
        double high = Math.max(median.percentileMicros(), p99.percentileMicros());
        return new Cell(Metric.LATENCY, size, 1, median.averageMicros(), median.percentileMicros(), high,
                Math.max(high, p999.percentileMicros()));
    }

    private static Result run(ToolPair pair, Placement placement, String test, int size, boolean quick, double rank,
            Path logs) throws IOException, InterruptedException {
        int port = ToolPair.freePort();
        int iterations = Anchor.iterations(size, quick);
        List<String> server = List.of("ucx_perftest", "-p", Integer.toString(port));
        List<String> client = List.of("ucx_perftest", "127.0.0.1", "-p", Integer.toString(port), "-t", test,
                "-s", Integer.toString(size), "-n", Integer.toString(iterations),
                "-w", Integer.toString(Math.max(1, iterations / 10)), "-R", Double.toString(rank), "-v");
        String name = String.format(Locale.ROOT, "%s-%d-R%s", test, size, rank);
        return parse(pair.run(placement, server, client, logs.resolve(name)));
    }

    /**
     * The result in the CSV of {@code ucx_perftest -v}: a header line starting with
     * {@code iterations,} (its second column names the percentile, e.g. {@code 99.0_percentile_lat}),
     * then a progress line a second ({@code [thread 0]...}) and last the final line of figures.
     */
    static Result parse(String output) throws IOException {
        List<String> header = null;
        String last = null;
        for (String line : output.lines().map(String::strip).toList()) {
            if (line.startsWith("iterations,")) {
                header = Arrays.asList(line.split(","));
            } else if (header != null && !line.startsWith("[") && line.split(",").length == header.size()) {
                last = line;
            }
        }
        int percentile = header == null ? -1 : indexEndingWith(header, "_percentile_lat");
        if (last == null || percentile < 0) {
            throw new IOException("ucx_perftest printed no result: " + ToolPair.tail(output));
        }
        String[] values = last.split(",");
        try {
            String rank = header.get(percentile).substring(0, header.get(percentile).indexOf('_'));
            return new Result(Double.parseDouble(rank), Double.parseDouble(values[percentile]),
                    Double.parseDouble(values[header.indexOf("overall_lat")]),
                    Double.parseDouble(values[header.indexOf("overall_bw")]));
        } catch (RuntimeException e) {
            throw new IOException("ucx_perftest: unreadable result line '" + last + "': " + e, e);
        }
    }

    private static int indexEndingWith(List<String> header, String suffix) {
        for (int i = 0; i < header.size(); i++) {
            if (header.get(i).endsWith(suffix)) {
                return i;
            }
        }
        return -1;
    }
}
