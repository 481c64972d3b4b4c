package org.aldeia.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One row of the table: a transport (or an anchor tool) in one placement, each cell the median
 * across its runs, and the reason it could not run or stopped early (null when it did not).
 * {@code order} is the row kind's fixed position, which keeps its place and colour whatever
 * rows a run selects.
 */
record Row(String name, String label, int order, Placement placement, List<Cell> cells, String failure) {

    Row {
        cells = List.copyOf(cells);
    }

    /** The row of a transport from its runs: a cell for every (metric, size) any run measured. */
    static Row of(Transport transport, Placement placement, List<TransportResult> runs) {
        Map<String, List<Measurement>> byCell = new LinkedHashMap<>();
        String failure = null;
        for (TransportResult run : runs) {
            for (Measurement m : run.measurements()) {
                byCell.computeIfAbsent(m.metric() + "/" + m.sizeBytes(), key -> new ArrayList<>()).add(m);
            }
            failure = failure != null ? failure : run.failure();
        }
        List<Cell> cells = byCell.values().stream().map(Cell::medianOf).toList();
        return new Row(transport.optionName(), transport.label(), transport.ordinal(), placement, cells, failure);
    }

    Optional<Cell> cell(Measurement.Metric metric, int size) {
        return cells.stream().filter(c -> c.metric() == metric && c.sizeBytes() == size).findFirst();
    }

    /** The only cell of a metric measured at one size (connection set-up, CPU). */
    Optional<Cell> cell(Measurement.Metric metric) {
        return cells.stream().filter(c -> c.metric() == metric).findFirst();
    }

    boolean isBaselineFor(Row other) {
        return name.equals(Transport.BASELINE.optionName()) && placement == other.placement;
    }
}
