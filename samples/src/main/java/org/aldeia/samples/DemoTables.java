package org.aldeia.samples;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The demo's side-by-side tables; a kind whose run failed shows "failed". */
final class DemoTables {

    private static final String MISSING = "failed";

    private DemoTables() {
    }

    static void printPingPong(PrintStream out, String title, List<Integer> sizes,
            Map<SocketKind, List<PingPongResult>> results) {
        out.println("Ping-pong, " + title + ": one-way time t_um = t_c*10^3/(2i) us, bandwidth v*8/1024^2 Mb/s");
        out.printf("%10s | %12s %12s | %12s %12s | %14s%n",
                "size", "Aldeia us", "Aldeia Mb/s", "JDK us", "JDK Mb/s", "time Aldeia/JDK");
        for (int size : sizes) {
            Optional<PingPongResult> aldeia = find(results.get(SocketKind.ALDEIA), size);
            Optional<PingPongResult> jdk = find(results.get(SocketKind.JDK), size);
            out.printf("%10s | %12s %12s | %12s %12s | %14s%n", Sizes.describe(size),
                    number(aldeia.map(PingPongResult::oneWayMicros)), number(aldeia.map(PingPongResult::megabitsPerSecond)),
                    number(jdk.map(PingPongResult::oneWayMicros)), number(jdk.map(PingPongResult::megabitsPerSecond)),
                    ratio(aldeia.map(PingPongResult::oneWayMicros), jdk.map(PingPongResult::oneWayMicros)));
        }
        out.println();
    }

    static void printSerialization(PrintStream out, Map<SocketKind, List<SerializationResult>> results) {
        out.println("Serialization of int[] through ObjectOutputStream (thesis Table 5.1): ms per run, payload Mb/s");
        out.printf("%10s | %12s %12s | %12s %12s | %14s%n",
                "elements", "Aldeia ms", "Aldeia Mb/s", "JDK ms", "JDK Mb/s", "time Aldeia/JDK");
        List<Integer> elements = results.values().stream().flatMap(List::stream)
                .map(SerializationResult::elements).distinct().sorted().toList();
        for (int n : elements) {
            Optional<SerializationResult> aldeia = findElements(results.get(SocketKind.ALDEIA), n);
            Optional<SerializationResult> jdk = findElements(results.get(SocketKind.JDK), n);
            out.printf("%10d | %12s %12s | %12s %12s | %14s%n", n,
                    number(aldeia.map(SerializationResult::millisPerRun)),
                    number(aldeia.map(SerializationResult::megabitsPerSecond)),
                    number(jdk.map(SerializationResult::millisPerRun)),
                    number(jdk.map(SerializationResult::megabitsPerSecond)),
                    ratio(aldeia.map(SerializationResult::millisPerRun), jdk.map(SerializationResult::millisPerRun)));
        }
        out.println();
    }

    private static Optional<PingPongResult> find(List<PingPongResult> results, int size) {
        return results == null ? Optional.empty()
                : results.stream().filter(result -> result.size() == size).findFirst();
    }

    private static Optional<SerializationResult> findElements(List<SerializationResult> results, int elements) {
        return results == null ? Optional.empty()
                : results.stream().filter(result -> result.elements() == elements).findFirst();
    }

    private static String number(Optional<Double> value) {
        return value.map(v -> String.format("%.2f", v)).orElse(MISSING);
    }

    private static String ratio(Optional<Double> aldeia, Optional<Double> jdk) {
        if (aldeia.isEmpty() || jdk.isEmpty() || jdk.get() == 0) {
            return "-";
        }
        return String.format("%.2f", aldeia.get() / jdk.get());
    }
}
