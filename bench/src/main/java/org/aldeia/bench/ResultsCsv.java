package org.aldeia.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** The results as CSV: one line per measurement, one line per failed transport. */
final class ResultsCsv {

    static final String HEADER = "transport,metric,size_bytes,count,elapsed_ns,value,unit,ratio_vs_jdk_loopback,note";

    private ResultsCsv() {
    }

    static String render(List<TransportResult> results) {
        Optional<TransportResult> baseline = results.stream()
                .filter(r -> r.transport() == Transport.BASELINE).findFirst();
        StringBuilder csv = new StringBuilder(HEADER).append('\n');
        for (TransportResult result : results) {
            for (Measurement m : result.measurements()) {
                Optional<Measurement> base = baseline.flatMap(b -> m.metric() == Measurement.Metric.BANDWIDTH
                        ? b.bandwidth() : b.latency(m.sizeBytes()));
                csv.append(String.join(",", field(result.transport().label()),
                        m.metric().name().toLowerCase(Locale.ROOT), Integer.toString(m.sizeBytes()),
                        Long.toString(m.count()), Long.toString(m.elapsedNanos()),
                        String.format(Locale.ROOT, "%.4f", m.value()), m.metric().unit(),
                        base.map(b -> String.format(Locale.ROOT, "%.4f", m.value() / b.value())).orElse(""),
                        "")).append('\n');
            }
            if (result.failure() != null) {
                csv.append(field(result.transport().label())).append(",,,,,,,,")
                        .append(field("n/a: " + result.failure())).append('\n');
            }
        }
        return csv.toString();
    }

    static void write(List<TransportResult> results, Path file) throws IOException {
        Files.writeString(file, render(results), StandardCharsets.UTF_8);
    }

    /** RFC 4180: quoted when it holds a comma, a quote or a line break; quotes doubled. */
    static String field(String text) {
        if (text.indexOf(',') < 0 && text.indexOf('"') < 0 && text.indexOf('\n') < 0 && text.indexOf('\r') < 0) {
            return text;
        }
        return '"' + text.replace("\"", "\"\"") + '"';
    }
}
