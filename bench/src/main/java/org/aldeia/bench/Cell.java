package org.aldeia.bench;

import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * One figure of the table after all runs: for each statistic the median across the runs (so one
 * bad run moves nothing). Units as {@link Measurement}: µs, or MB/s for BANDWIDTH. A statistic
 * the source does not give is NaN (no percentiles for streaming and CPU; fi_pingpong prints
 * only a mean).
 */
record Cell(Measurement.Metric metric, int sizeBytes, int runs, double mean, double median, double p99, double p999) {

    /** One run's measurement as a cell; statistics the metric has no distribution for are NaN. */
    static Cell of(Measurement m) {
        boolean percentiles = m.metric().hasPercentiles();
        return new Cell(m.metric(), m.sizeBytes(), 1, m.mean(), percentiles ? m.p50Nanos() / 1e3 : Double.NaN,
                percentiles ? m.p99() : Double.NaN, percentiles ? m.p999() : Double.NaN);
    }

    /** The median of each statistic over cells of one metric and size (one per run). */
    static Cell medianOf(List<Cell> runs) {
        Cell first = runs.get(0);
        return new Cell(first.metric(), first.sizeBytes(), runs.stream().mapToInt(Cell::runs).sum(),
                median(runs, Cell::mean), median(runs, Cell::median), median(runs, Cell::p99), median(runs, Cell::p999));
    }

    /** The figure the table leads with: the median when there is one, else the mean. */
    double value() {
        return hasMedian() ? median : mean;
    }

    boolean hasMedian() {
        return !Double.isNaN(median);
    }

    /** The median of the values (the mean of the middle two for an even count); NaN when they are. */
    static <T> double median(List<T> items, ToDoubleFunction<T> statistic) {
        double[] values = items.stream().mapToDouble(statistic).sorted().toArray();
        int middle = values.length / 2;
        return values.length % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
    }
}
