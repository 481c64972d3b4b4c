package org.aldeia.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.aldeia.bench.Measurement.Metric;

/**
 * The libfabric anchors: {@code fi_pingpong} over a provider's reliable datagram endpoints
 * ({@code -e rdm}; fi_pingpong's default, dgram, finds no shm provider), the kind of endpoint
 * libaldeiafabric uses: shm, and tcp through ofi_rxm on loopback. It prints the mean time per
 * transfer ({@code usec/xfer}: half a round trip) and no percentiles, so its latency cells have
 * means only. It has no streaming test: its bandwidth cells are the ping-pong's {@code MB/sec}
 * at the stream sizes, one message's bytes over the time of one transfer (size / usec/xfer),
 * what fabric.md quotes as its bandwidth; a stream that keeps several messages in flight can
 * exceed it.
 */
final class FiPingpong implements Anchor.Tool {

    private static final String USEC_PER_TRANSFER = "usec/xfer";
    private static final String MB_PER_SECOND = "MB/sec";

    private final String provider;

    /** @param provider fi_pingpong's {@code -p}, e.g. {@code shm} or {@code tcp;ofi_rxm} */
    FiPingpong(String provider) {
        this.provider = provider;
    }

    @Override
    public List<Cell> measureOnce(Placement placement, boolean quick, Path logs) throws IOException, InterruptedException {
        ToolPair pair = new ToolPair(Map.of(), Anchor.PROCESS_LIMIT);
        List<Cell> cells = new ArrayList<>();
        for (int size : BenchClient.SIZES) {
            String output = run(pair, placement, size, quick, logs.resolve("pingpong-" + size));
            cells.add(new Cell(Metric.LATENCY, size, 1, parseColumn(output, USEC_PER_TRANSFER), Double.NaN, Double.NaN,
                    Double.NaN));
        }
        for (int chunk : BenchClient.STREAM_CHUNKS) {
            String output = run(pair, placement, chunk, quick, logs.resolve("bandwidth-" + chunk));
            cells.add(new Cell(Metric.BANDWIDTH, chunk, 1, parseColumn(output, MB_PER_SECOND), Double.NaN, Double.NaN,
                    Double.NaN));
        }
        return cells;
    }

    private String run(ToolPair pair, Placement placement, int size, boolean quick, Path log)
            throws IOException, InterruptedException {
        String port = Integer.toString(ToolPair.freePort());
        List<String> common = List.of("fi_pingpong", "-p", provider, "-e", "rdm", "-S", Integer.toString(size),
                "-I", Integer.toString(Anchor.iterations(size, quick)));
        List<String> server = new ArrayList<>(common);
        server.addAll(List.of("-B", port));
        List<String> client = new ArrayList<>(common);
        client.addAll(List.of("-P", port, "127.0.0.1"));
        return pair.run(placement, server, client, log);
    }

    /** Column {@code name} of the result line under fi_pingpong's header. */
    static double parseColumn(String output, String name) throws IOException {
        List<String> lines = output.lines().map(String::strip).toList();
        for (int i = 0; i + 1 < lines.size(); i++) {
            String[] header = lines.get(i).split("\\s+");
            int column = List.of(header).indexOf(name);
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
