package org.aldeia.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

class DemoTablesTest {

    private static List<String> print(Consumer<PrintStream> table) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        table.accept(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void pingPongRowsPutBothKindsSideBySideWithTheTimeRatio() {
        // 100 round trips of 1000 B: 20 ms -> 100 us one way; 10 ms -> 50 us.
        Map<SocketKind, List<PingPongResult>> results = Map.of(
                SocketKind.ALDEIA, List.of(new PingPongResult(1000, 100, 20.0)),
                SocketKind.JDK, List.of(new PingPongResult(1000, 100, 10.0)));
        List<String> lines = print(out -> DemoTables.printPingPong(out, "t", List.of(1000), results));
        String row = lines.get(2);
        assertTrue(row.matches("\\s*1000 B \\|\\s+100\\.00\\s+76\\.29 \\|\\s+50\\.00\\s+152\\.59 \\|\\s+2\\.00"), row);
    }

    @Test
    void aKindThatFailedShowsFailedAndNoRatio() {
        Map<SocketKind, List<SerializationResult>> results = Map.of(
                SocketKind.JDK, List.of(new SerializationResult(10, 4, 2.0), new SerializationResult(100, 4, 4.0)));
        List<String> lines = print(out -> DemoTables.printSerialization(out, results));
        assertEquals(5, lines.size(), String.join("\n", lines));
        assertTrue(lines.get(2).matches("\\s*10 \\|\\s+failed\\s+failed \\|\\s+0\\.50\\s+\\S+ \\|\\s+-"), lines.get(2));
        assertTrue(lines.get(3).contains(" 1.00 "), lines.get(3));
    }
}
