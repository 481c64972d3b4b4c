package org.aldeia.bench;

import java.util.List;
import java.util.Optional;

/**
 * What one transport's run produced: its measurements (possibly only some, when it failed
 * half-way) and, when it failed or could not run, the reason in one line.
 */
record TransportResult(Transport transport, List<Measurement> measurements, String failure) {

    TransportResult {
        measurements = List.copyOf(measurements);
    }

    Optional<Measurement> latency(int size) {
        return find(Measurement.Metric.LATENCY, size);
    }

    Optional<Measurement> bandwidth() {
        return measurements.stream().filter(m -> m.metric() == Measurement.Metric.BANDWIDTH).findFirst();
    }

    private Optional<Measurement> find(Measurement.Metric metric, int size) {
        return measurements.stream().filter(m -> m.metric() == metric && m.sizeBytes() == size).findFirst();
    }
}
