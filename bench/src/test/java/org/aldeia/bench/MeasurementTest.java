package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.HdrHistogram.Histogram;
import org.aldeia.bench.Measurement.Metric;
import org.junit.jupiter.api.Test;

class MeasurementTest {

    @Test
    void aPingPongSummaryIsHalfOfEachRoundTripAtTheMedianP99AndP999() {
        // 10 000 round trips: 9 880 of 2 µs (98.8 %), 100 of 20 µs (to 99.8 %), 20 of 400 µs.
        Histogram roundTrips = new Histogram(3);
        roundTrips.recordValueWithCount(2_000, 9_880);
        roundTrips.recordValueWithCount(20_000, 100);
        roundTrips.recordValueWithCount(400_000, 20);
        long elapsed = 9_880L * 2_000 + 100L * 20_000 + 20L * 400_000;
        Measurement m = Measurement.distribution(Metric.LATENCY, 64, elapsed, roundTrips, true);
        assertEquals(10_000, m.count());
        assertEquals(1.0, m.value(), 1e-3, "median one way: half of 2 µs");
        assertEquals(10.0, m.p99(), 10.0 * 1e-3, "p99 one way: half of 20 µs (3 significant digits)");
        assertEquals(200.0, m.p999(), 200.0 * 1e-3, "p99.9 one way: half of 400 µs");
        assertEquals(elapsed / 2.0 / 10_000 / 1e3, m.mean(), 1e-9);
    }

    @Test
    void aConnectionSummaryIsNotHalved() {
        Histogram connections = new Histogram(3);
        connections.recordValueWithCount(100_000, 1000);
        Measurement m = Measurement.distribution(Metric.SETUP, 1, 100_000_000, connections, false);
        assertEquals(100.0, m.value(), 0.1);
        assertEquals(100.0, m.mean(), 1e-9);
    }

    @Test
    void bandwidthIsPayloadBytesPerSecondInMegabytesAndCpuIsPerRoundTrip() {
        // 1000 chunks of 65536 bytes in 0.5 s.
        Measurement stream = Measurement.total(Metric.BANDWIDTH, 65536, 1000, 500_000_000);
        assertEquals(65536.0 * 1000 / 0.5 / 1e6, stream.value(), 1e-9);
        // 3 ms of CPU (both JVMs) over 1000 round trips.
        Measurement cpu = Measurement.total(Metric.CPU, 64, 1000, 3_000_000);
        assertEquals(3.0, cpu.value(), 1e-9);
    }

    @Test
    void aResultLineRoundTrips() {
        Measurement m = new Measurement(Metric.LATENCY, 65536, 123, 456789, 1000, 2000, 3000);
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
        assertThrows(IllegalArgumentException.class, () -> Measurement.parse("BENCH-RESULT latency x 1 2 0 0 0"));
        assertThrows(IllegalArgumentException.class, () -> Measurement.parse("BENCH-RESULT speed 1 1 2 0 0 0"));
        assertThrows(IllegalArgumentException.class, () -> Measurement.parse("BENCH-RESULT latency 1 0 2 0 0 0"));
        assertThrows(IllegalArgumentException.class, () -> Measurement.parse("BENCH-RESULT latency 1 1 2"));
        assertThrows(IllegalArgumentException.class, () -> Measurement.parse("BENCH-RESULT latency 1 1 2 9 5 5"),
                "a p99 below the median");
    }

    @Test
    void pacingFillsTheTargetWithinItsBounds() {
        Pacing pacing = new Pacing(0, 0.1, 1.0, 10, 1000, 2.0, 1, 10, 11, 1, 10, 1, 10, 100);
        assertEquals(100, pacing.count(1.0, 10_000_000));   // 10 ms per round trip
        assertEquals(10, pacing.count(1.0, 900_000_000));   // slower than the target: the minimum
        assertEquals(1000, pacing.count(1.0, 10));          // faster: the maximum
    }

    @Test
    void theSteadySetUpBlockCannotOverlapTheFirst() {
        assertThrows(IllegalArgumentException.class, () -> new Pacing(0, 0.1, 1.0, 10, 1000, 2.0, 5, 10, 14, 1, 10, 1, 10, 100));
        assertEquals(15, new Pacing(0, 0.1, 1.0, 10, 1000, 2.0, 5, 10, 15, 1, 10, 1, 10, 100).setupSteadyAfter());
    }
}
