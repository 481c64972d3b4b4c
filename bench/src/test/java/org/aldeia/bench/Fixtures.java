package org.aldeia.bench;

import java.util.ArrayList;
import java.util.List;

/** Results with known figures for the formatting tests. */
final class Fixtures {

    private Fixtures() {
    }

    /** A transport whose one-way latency at every size is {@code micros} and whose stream runs at {@code megabytes} MB/s. */
    static TransportResult result(Transport transport, double micros, double megabytes) {
        List<Measurement> measurements = new ArrayList<>();
        for (int size : BenchClient.SIZES) {
            // 1000 round trips of 2 * micros each.
            measurements.add(new Measurement(Measurement.Metric.LATENCY, size, 1000, Math.round(2 * micros * 1000 * 1000)));
        }
        // 1000 chunks of 64 KiB in the time that rate gives.
        long bytes = 1000L * BenchClient.STREAM_CHUNK;
        measurements.add(new Measurement(Measurement.Metric.BANDWIDTH, BenchClient.STREAM_CHUNK, 1000,
                Math.round(bytes / (megabytes * 1e6) * 1e9)));
        return new TransportResult(transport, measurements, null);
    }

    static TransportResult failed(Transport transport, String reason) {
        return new TransportResult(transport, List.of(), reason);
    }
}
