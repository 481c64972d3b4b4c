package org.aldeia.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.aldeia.bench.Measurement.Metric;

/**
 * The libfabric anchor: {@code fi_pingpong} over the shm provider. shm offers reliable datagram
 * endpoints only, so {@code -e rdm} (fi_pingpong's default, dgram, finds no shm provider). It
 * prints the mean time per transfer ({@code usec/xfer}: half a round trip) and no percentiles,
 * and has no streaming test: the row has mean latencies only.
 */
final class FiPingpong implements Anchor.Tool {

    private static final String USEC_PER_TRANSFER = "usec/xfer";

    @Override
    public List<Cell> measureOnce(Placement placement, boolean quick, Path logs) throws IOException, InterruptedException {
        ToolPair pair = new ToolPair(Map.of(), Anchor.PROCESS_LIMIT);
        List<Cell> cells = new ArrayList<>();
        for (int size : BenchClient.SIZES) {
            String port = Integer.toString(ToolPair.freePort());
            List<String> common = List.of("fi_pingpong", "-p", "shm", "-e", "rdm", "-S", Integer.toString(size),
                    "-I", Integer.toString(Anchor.iterations(size, quick)));
            List<String> server = new ArrayList<>(common);
            server.addAll(List.of("-B", port));
            List<String> client = new ArrayList<>(common);
            client.addAll(List.of("-P", port, "127.0.0.1"));
            double micros = parseMicrosPerTransfer(pair.run(placement, server, client, logs.resolve("pingpong-" + size)));
            cells.add(new Cell(Metric.LATENCY, size, 1, micros, Double.NaN, Double.NaN, Double.NaN));
        }
        return cells;
    }

    /** The {@code usec/xfer} column of the result line under fi_pingpong's header. */
    static double parseMicrosPerTransfer(String output) throws IOException {
        List<String> lines = output.lines().map(String::strip).toList();
        for (int i = 0; i + 1 < lines.size(); i++) {
            String[] header = lines.get(i).split("\\s+");
            int column = List.of(header).indexOf(USEC_PER_TRANSFER);
            if (header[0].equals("bytes") && column >= 0) {
                String[] values = lines.get(i + 1).split("\\s+");
                try {
                    return Double.parseDouble(values[column]);
                } catch (RuntimeException e) {
                    throw new IOException("fi_pingpong: unreadable result line '" + lines.get(i + 1) + "': " + e, e);
                }
            }
        }
        throw new IOException("fi_pingpong printed no result: " + ToolPair.tail(output));
    }
}
