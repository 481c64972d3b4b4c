package org.aldeia.bench;

import java.util.List;

/**
 * What one run of a transport produced: its measurements (possibly only some, when it failed
 * half-way) and, when it failed or could not run, the reason in one line.
 */
record TransportResult(Transport transport, List<Measurement> measurements, String failure) {

    TransportResult {
        measurements = List.copyOf(measurements);
    }
}
