package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MeasurementTest {

    @Test
    void latencyIsHalfTheMeanRoundTripInMicroseconds() {
        // 100 round trips in 5 ms: 50 µs each, 25 µs one way.
        Measurement m = new Measurement(Measurement.Metric.LATENCY, 1000, 100, 5_000_000);
        assertEquals(25.0, m.value(), 1e-9);
        assertEquals(1000 / 25.0, m.megabytesPerSecond(), 1e-9);
    }

    @Test
    void bandwidthIsPayloadBytesPerSecondInMegabytes() {
        // 1000 chunks of 65536 bytes in 0.5 s.
        Measurement m = new Measurement(Measurement.Metric.BANDWIDTH, 65536, 1000, 500_000_000);
        assertEquals(65536.0 * 1000 / 0.5 / 1e6, m.value(), 1e-9);
        assertEquals(m.value(), m.megabytesPerSecond(), 1e-12);
    }

    @Test
    void aResultLineRoundTrips() {
        Measurement m = new Measurement(Measurement.Metric.BANDWIDTH, 65536, 123, 456789);
        assertEquals(m, Measurement.parse(m.toLine()).orElseThrow());
        assertEquals(m, Measurement.parse("  " + m.toLine() + "  ").orElseThrow());
    }

    @Test
    void logLinesAreNotResults() {
        assertTrue(Measurement.parse("04:45:53.372 INFO  [main] Bench - bench: JDK ...").isEmpty());
        assertTrue(Measurement.parse("").isEmpty());
    }

    @Test
    void aMalformedResultLineIsAnError() {
        assertThrows(IllegalArgumentException.class, () -> Measurement.parse("BENCH-RESULT latency x 1 2"));
        assertThrows(IllegalArgumentException.class, () -> Measurement.parse("BENCH-RESULT speed 1 1 2"));
        assertThrows(IllegalArgumentException.class, () -> Measurement.parse("BENCH-RESULT latency 1 0 2"));
    }

    @Test
    void pacingFillsTheTargetWithinItsBounds() {
        Pacing pacing = new Pacing(0.1, 1.0, 10, 1000, 2.0);
        assertEquals(100, pacing.count(1.0, 10_000_000));   // 10 ms per round trip
        assertEquals(10, pacing.count(1.0, 900_000_000));   // slower than the target: the minimum
        assertEquals(1000, pacing.count(1.0, 10));          // faster: the maximum
    }
}
