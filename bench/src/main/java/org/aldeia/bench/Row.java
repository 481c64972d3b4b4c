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

    /** The row of a transport from its runs; the first run's failure, if any, is the row's. */
    static Row of(Transport transport, Placement placement, List<TransportResult> runs) {
        List<Cell> cells = runs.stream().flatMap(run -> run.measurements().stream()).map(Cell::of).toList();
        String failure = runs.stream().map(TransportResult::failure).filter(f -> f != null).findFirst().orElse(null);
        return of(transport.optionName(), transport.label(), transport.ordinal(), placement, cells, failure);
    }

    /** A row from the cells of all its runs: one cell per (metric, size), the median across runs. */
    static Row of(String name, String label, int order, Placement placement, List<Cell> runCells, String failure) {
        Map<String, List<Cell>> byCell = new LinkedHashMap<>();
        for (Cell cell : runCells) {
            byCell.computeIfAbsent(cell.metric() + "/" + cell.sizeBytes(), key -> new ArrayList<>()).add(cell);
        }
        return new Row(name, label, order, placement, byCell.values().stream().map(Cell::medianOf).toList(), failure);
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
