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
    void oneLinePerMeasurementWithItsRatioAndOnePerFailure(@TempDir Path dir) throws Exception {
        List<TransportResult> results = List.of(
                Fixtures.result(Transport.JDK_LOOPBACK, 20.0, 2000.0),
                Fixtures.result(Transport.JDK_UNIX, 10.0, 4000.0),
                Fixtures.failed(Transport.ALDEIA_STATIC_SCI, "server: key 'x', \"quoted\""));
        Path file = dir.resolve("results.csv");
        ResultsCsv.write(results, file);
        List<String> lines = Files.readAllLines(file);
        assertEquals(ResultsCsv.HEADER, lines.get(0));
        int perTransport = BenchClient.SIZES.size() + 1;
        assertEquals(1 + 2 * perTransport + 1, lines.size(), String.join("\n", lines));
        // A label with a comma is quoted.
        assertEquals("\"JDK Socket, loopback TCP\",latency,1,1000,40000000,20.0000,us,1.0000,", lines.get(1));
        assertEquals("JDK Unix-domain SocketChannel,latency,1024,1000,20000000,10.0000,us,0.5000,",
                lines.get(1 + perTransport + 2));
        assertEquals("JDK Unix-domain SocketChannel,bandwidth,65536,1000,16384000,4000.0000,MB/s,2.0000,",
                lines.get(2 * perTransport));
        assertEquals("\"Aldeia, DECK static/sci\",,,,,,,,\"n/a: server: key 'x', \"\"quoted\"\"\"",
                lines.get(lines.size() - 1));
    }

    @Test
    void plainFieldsAreNotQuoted() {
        assertEquals("Aeron IPC (backoff idle)", ResultsCsv.field("Aeron IPC (backoff idle)"));
        assertEquals("\"a\nb\"", ResultsCsv.field("a\nb"));
        assertTrue(ResultsCsv.field("1,2").startsWith("\""));
    }
}
