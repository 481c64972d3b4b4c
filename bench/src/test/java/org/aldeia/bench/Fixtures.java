package org.aldeia.bench;

import java.util.ArrayList;
import java.util.List;

import org.aldeia.bench.Measurement.Metric;

/** Rows with known figures for the formatting tests. */
final class Fixtures {

    private Fixtures() {
    }

    /**
     * A row whose one-way latency at every size has median {@code micros}, p99 twice and p99.9
     * three times that, whose streams run at {@code megabytes} MB/s, whose connections take
     * 10x {@code micros} (p99 20x), whose 64 B round trip costs {@code micros} of CPU and whose
     * application calls take 5x {@code micros} (p99 40x, p99.9 80x), its RMI calls 7x (9x, 11x),
     * whose writes of the asynchronous-write phase return in 2x {@code micros} and are
     * acknowledged after 30x.
     */
    static Row row(Transport transport, Placement placement, double micros, double megabytes) {
        List<Cell> cells = new ArrayList<>();
        for (int size : BenchClient.SIZES) {
            cells.add(new Cell(Metric.LATENCY, size, 3, micros, micros, 2 * micros, 3 * micros));
        }
        for (int chunk : BenchClient.STREAM_CHUNKS) {
            cells.add(new Cell(Metric.BANDWIDTH, chunk, 3, megabytes, Double.NaN, Double.NaN, Double.NaN));
        }
        cells.add(new Cell(Metric.SETUP, 1, 3, 10 * micros, 10 * micros, 20 * micros, 30 * micros));
        cells.add(new Cell(Metric.SETUP_STEADY, 1, 3, 4 * micros, 4 * micros, 7 * micros, 9 * micros));
        cells.add(new Cell(Metric.CPU, BenchClient.CPU_SIZE, 3, micros, Double.NaN, Double.NaN, Double.NaN));
        cells.add(new Cell(Metric.APPLICATION, ApplicationPhase.MAX_PAYLOAD, 3, 6 * micros, 5 * micros, 40 * micros,
                80 * micros));
        cells.add(new Cell(Metric.RMI, RmiPhase.INTS * Integer.BYTES, 3, 8 * micros, 7 * micros, 9 * micros, 11 * micros));
        for (int size : BenchClient.ASYNC_SIZES) {
            cells.add(new Cell(Metric.WRITE_RETURN, size, 3, 2 * micros, 2 * micros, 4 * micros, 6 * micros));
            cells.add(new Cell(Metric.WRITE_DELIVERED, size, 3, 30 * micros, 30 * micros, 40 * micros, 50 * micros));
        }
        return new Row(transport.optionName(), transport.label(), transport.ordinal(), placement, cells, null);
    }

    static Row failed(Transport transport, String reason) {
        return new Row(transport.optionName(), transport.label(), transport.ordinal(), Placement.FREE, List.of(), reason);
    }
}
