package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.aldeia.bench.Measurement.Metric;
import org.junit.jupiter.api.Test;

class CellTest {

    @Test
    void eachStatisticIsItsOwnMedianAcrossRuns() {
        // Three runs; the second has the worst median, the third the worst tail.
        List<Measurement> runs = List.of(
                new Measurement(Metric.LATENCY, 64, 1000, 2_000_000, 1000, 2000, 9000),
                new Measurement(Metric.LATENCY, 64, 1000, 8_000_000, 4000, 5000, 6000),
                new Measurement(Metric.LATENCY, 64, 1000, 4_000_000, 2000, 30000, 40000));
        Cell cell = Cell.medianOf(runs.stream().map(Cell::of).toList());
        assertEquals(3, cell.runs());
        assertEquals(2.0, cell.median(), 1e-9);
        assertEquals(5.0, cell.p99(), 1e-9);
        assertEquals(9.0, cell.p999(), 1e-9);
        assertEquals(2.0, cell.mean(), 1e-9); // the runs' means: 1, 4 and 2 µs
        assertTrue(cell.hasMedian());
    }

    @Test
    void anEvenNumberOfRunsTakesTheMiddleTwo() {
        assertEquals(2.5, Cell.median(List.of(4.0, 1.0, 3.0, 2.0), Double::doubleValue), 1e-12);
        assertEquals(7.0, Cell.median(List.of(7.0), Double::doubleValue), 1e-12);
    }

    @Test
    void aMetricWithoutDistributionHasNoMedianAndLeadsWithItsMean() {
        Cell cell = Cell.of(Measurement.total(Metric.BANDWIDTH, 65536, 1000, 500_000_000));
        assertFalse(cell.hasMedian());
        assertEquals(cell.mean(), cell.value(), 1e-12);
    }

    @Test
    void placementsParseAndPinTheServerToCoreZero() {
        assertEquals(List.of(Placement.FREE, Placement.PINNED), Placement.parse("both"));
        assertEquals(List.of(Placement.HOSTS), Placement.parse("hosts"));
        assertEquals(List.of(Placement.FREE, Placement.PINNED, Placement.HOSTS), Placement.parse("all"));
        assertEquals(List.of("taskset", "-c", "1"), Placement.HOSTS.taskset(1));
        // Between emulated hosts: TCP and Aldeia without a nodes file, nothing that needs one host.
        assertTrue(Transport.JDK_LOOPBACK.crossesHosts() && Transport.ALDEIA_DYNAMIC_TCP.crossesHosts()
                && Transport.ALDEIA_DYNAMIC_AUTO.crossesHosts() && Transport.ALDEIA_STATIC_TCP.crossesHosts()
                && Transport.ALDEIA_STATIC_TCP_TLS.crossesHosts());
        assertFalse(Transport.AERON_IPC.crossesHosts() || Transport.JDK_UNIX.crossesHosts()
                || Transport.ALDEIA_STATIC_SCI.crossesHosts() || Transport.ALDEIA_INSTALLED.crossesHosts());
        assertEquals(List.of("taskset", "-c", "0"), Placement.PINNED.taskset(0));
        assertEquals(List.of("taskset", "-c", "1"), Placement.PINNED.taskset(1));
        assertEquals(List.of(), Placement.FREE.taskset(1));
        assertThrows(IllegalArgumentException.class, () -> Placement.parse("core0"));
        assertEquals(3, Bench.runs("3"));
        assertThrows(IllegalArgumentException.class, () -> Bench.runs("0"));
    }
}
