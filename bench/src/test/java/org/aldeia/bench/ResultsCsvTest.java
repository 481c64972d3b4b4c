package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultsCsvTest {

    @Test
    void oneLinePerCellWithItsStatisticsAndRatioAndOnePerFailure(@TempDir Path dir) throws Exception {
        List<Row> rows = List.of(
                Fixtures.row(Transport.JDK_LOOPBACK, Placement.FREE, 20.0, 2000.0),
                Fixtures.row(Transport.JDK_UNIX, Placement.FREE, 10.0, 4000.0),
                Fixtures.failed(Transport.ALDEIA_STATIC_SCI, "server: key 'x', \"quoted\""));
        Path file = dir.resolve("results.csv");
        ResultsCsv.write(rows, file);
        List<String> lines = Files.readAllLines(file);
        assertEquals(ResultsCsv.HEADER, lines.get(0));
        int perRow = rows.get(0).cells().size();
        assertEquals(1 + 2 * perRow + 1, lines.size(), String.join("\n", lines));
        // A label with a comma is quoted.
        assertEquals("\"JDK Socket, loopback TCP\",free,latency,1,3,20.0000,20.0000,40.0000,60.0000,us,1.0000,",
                lines.get(1));
        assertEquals("JDK Unix-domain SocketChannel,free,latency,1024,3,10.0000,10.0000,20.0000,30.0000,us,0.5000,",
                lines.get(1 + perRow + 2));
        // Streaming has no percentiles: empty fields.
        assertEquals("JDK Unix-domain SocketChannel,free,bandwidth,65536,3,4000.0000,,,,MB/s,2.0000,",
                lines.get(1 + perRow + BenchClient.SIZES.size()));
        assertEquals("\"Aldeia, DECK static/sci\",free,,,,,,,,,,\"n/a: server: key 'x', \"\"quoted\"\"\"",
                lines.get(lines.size() - 1));
    }

    @Test
    void plainFieldsAreNotQuoted() {
        assertEquals("Aeron IPC (backoff idle)", ResultsCsv.field("Aeron IPC (backoff idle)"));
        assertEquals("\"a\nb\"", ResultsCsv.field("a\nb"));
        assertTrue(ResultsCsv.field("1,2").startsWith("\""));
        assertEquals("", ResultsCsv.decimal(Double.NaN));
    }
}
