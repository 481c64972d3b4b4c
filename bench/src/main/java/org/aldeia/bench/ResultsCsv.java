package org.aldeia.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The results as CSV: one line per cell (each statistic the median across runs; empty when the
 * source gives none), one line per row that failed or stopped early.
 */
final class ResultsCsv {

    static final String HEADER =
            "transport,placement,metric,size_bytes,runs,mean,median,p99,p99_9,unit,ratio_vs_jdk_loopback,note";

    private ResultsCsv() {
    }

    static String render(List<Row> rows) {
        StringBuilder csv = new StringBuilder(HEADER).append('\n');
        for (Row row : rows) {
            Optional<Row> baseline = rows.stream().filter(r -> r.isBaselineFor(row)).findFirst();
            for (Cell cell : row.cells()) {
                Optional<Cell> base = baseline.flatMap(b -> b.cell(cell.metric(), cell.sizeBytes()));
                csv.append(String.join(",", field(row.label()), row.placement().label(), cell.metric().optionName(),
                        Integer.toString(cell.sizeBytes()), Integer.toString(cell.runs()), decimal(cell.mean()),
                        decimal(cell.median()), decimal(cell.p99()), decimal(cell.p999()), cell.metric().unit(),
                        base.map(b -> decimal(cell.value() / b.value())).orElse(""), "")).append('\n');
            }
            if (row.failure() != null) {
                csv.append(field(row.label())).append(',').append(row.placement().label()).append(",,,,,,,,,,")
                        .append(field("n/a: " + row.failure())).append('\n');
            }
        }
        return csv.toString();
    }

    static void write(List<Row> rows, Path file) throws IOException {
        Files.writeString(file, render(rows), StandardCharsets.UTF_8);
    }

    /** Four decimals; empty for a statistic the source does not give (NaN). */
    static String decimal(double value) {
        return Double.isNaN(value) ? "" : String.format(Locale.ROOT, "%.4f", value);
    }

    /** RFC 4180: quoted when it holds a comma, a quote or a line break; quotes doubled. */
    static String field(String text) {
        if (text.indexOf(',') < 0 && text.indexOf('"') < 0 && text.indexOf('\n') < 0 && text.indexOf('\r') < 0) {
            return text;
        }
        return '"' + text.replace("\"", "\"\"") + '"';
    }
}
