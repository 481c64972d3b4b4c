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

    /** The median of each statistic over the runs' measurements of one metric and size. */
    static Cell medianOf(List<Measurement> runs) {
        Measurement first = runs.get(0);
        boolean percentiles = first.metric().hasPercentiles();
        return new Cell(first.metric(), first.sizeBytes(), runs.size(), median(runs, Measurement::mean),
                percentiles ? median(runs, m -> m.p50Nanos() / 1e3) : Double.NaN,
                percentiles ? median(runs, Measurement::p99) : Double.NaN,
                percentiles ? median(runs, Measurement::p999) : Double.NaN);
    }

    /** The figure the table leads with: the median when there is one, else the mean. */
    double value() {
        return hasMedian() ? median : mean;
    }

    boolean hasMedian() {
        return !Double.isNaN(median);
    }

    /** The median of the values (the mean of the middle two for an even count). */
    static <T> double median(List<T> items, ToDoubleFunction<T> statistic) {
        double[] values = items.stream().mapToDouble(statistic).sorted().toArray();
        int middle = values.length / 2;
        return values.length % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
    }
}
