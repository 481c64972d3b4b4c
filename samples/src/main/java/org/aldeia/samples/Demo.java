package org.aldeia.samples;

import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The main job of {@code ./aldeia demo}: with no configuration file, runs the ping-pong and the
 * serialization benchmarks over Aldeia and then over JDK sockets, each with its server and
 * client in two JVMs, and prints the results side by side.
 */
public final class Demo {

    private static final Logger log = LoggerFactory.getLogger(Demo.class);

    /** The sizes a reader looks at first: 1 B, 1 KiB, 10 KiB, 1 MiB. */
    static final List<Integer> HEADLINE_SIZES = List.of(1, 1024, 10 * 1024, 1024 * 1024);
    /** The thesis's sweep (Fig. 5.3 to 5.7). */
    static final String SWEEP = "0:10000:500";

    private static final String LOOPBACK = "127.0.0.1";
    private static final Duration SERVER_START = Duration.ofSeconds(60);
    private static final Duration CLIENT_RUN = Duration.ofMinutes(10);
    private static final Duration SERVER_STOP = Duration.ofSeconds(30);
    private static final List<SocketKind> KINDS = List.of(SocketKind.ALDEIA, SocketKind.JDK);

    static final String USAGE = String.join("\n",
            "usage: Demo [--iterations 1000] [--warmup 100] [--jit-warmup-ms 3000] [--max-exponent 6] [--runs 1000]",
            "            [--big-runs 10]",
            "  ping-pong: --iterations timed round trips per size after --warmup untimed ones;",
            "  serialization: int[] of 10^1 .. 10^max-exponent (7 at most), --runs each (--big-runs from 10^6)",
            "  after --warmup untimed ones; both first run untimed for --jit-warmup-ms (every size in turn).");

    private Demo() {
    }

    public static void main(String[] args) {
        System.exit(MainRunner.run("Demo", USAGE, () -> run(args, System.out)));
    }

    static void run(String[] args, PrintStream out) throws Exception {
        Arguments arguments = Arguments.parse(args,
                Set.of("iterations", "warmup", "jit-warmup-ms", "max-exponent", "runs", "big-runs"), Set.of());
        if (arguments.role() != null) {
            throw new IllegalArgumentException("unexpected argument '" + arguments.role() + "'");
        }
        // Means over 1000 timed repetitions after 100 untimed ones: with 100 and 10, one size in
        // a sweep could show 5-10x its neighbours from a few slow round trips (a wake-up missed,
        // the JIT compiling on the other core), and the first serialization sizes ran interpreted.
        String warmup = String.valueOf(arguments.integer("warmup", 100, 0));
        String jitWarmup = String.valueOf(arguments.integer("jit-warmup-ms", PingPong.DEFAULT_JIT_WARMUP_MILLIS, 0));
        List<String> pingPongOptions = List.of(
                "--sizes", SWEEP, "--large", join(HEADLINE_SIZES),
                "--iterations", String.valueOf(arguments.integer("iterations", 1000, 1)),
                "--warmup", warmup,
                "--jit-warmup-ms", jitWarmup);
        List<String> serializationOptions = List.of(
                "--max-exponent", String.valueOf(arguments.integer("max-exponent", Serialization.BIG_EXPONENT, 1)),
                "--runs", String.valueOf(arguments.integer("runs", 1000, 1)),
                "--big-runs", String.valueOf(arguments.integer("big-runs", 10, 1)),
                "--warmup", warmup,
                "--jit-warmup-ms", jitWarmup);

        String configuration = System.getProperty("aldeia.configuration");
        out.println("Aldeia demo: every benchmark runs its server and its client in two JVMs on this machine,");
        out.println("first over Aldeia sockets, then over the JDK's java.net sockets.");
        out.println(configuration == null
                ? "No configuration file: Aldeia chooses its transport by itself (its INFO log line says which)."
                : "Aldeia configuration: " + configuration);
        out.println();

        List<String> failures = new ArrayList<>();
        Map<SocketKind, List<PingPongResult>> pingPong = measureEach("ping-pong", failures, kind ->
                serverAndClient(PingPong.class, "server", "client", kind, pingPongOptions, PingPongResult.CSV_HEADER)
                        .stream().map(PingPongResult::fromCsv).toList());
        DemoTables.printPingPong(out, "headline sizes", HEADLINE_SIZES, pingPong);
        DemoTables.printPingPong(out, "thesis sweep " + SWEEP, Sizes.parse(SWEEP), pingPong);

        Map<SocketKind, List<SerializationResult>> serialization = measureEach("serialization", failures, kind ->
                serverAndClient(Serialization.class, "receiver", "sender", kind, serializationOptions,
                        SerializationResult.CSV_HEADER).stream().map(SerializationResult::fromCsv).toList());
        DemoTables.printSerialization(out, serialization);

        if (!failures.isEmpty()) {
            throw new IOException("not every measurement ran: " + String.join("; ", failures));
        }
    }

    private interface Measurement<T> {
        T run(SocketKind kind) throws IOException, InterruptedException;
    }

    /** Runs one benchmark for each kind; a kind that fails is reported and left out of the table. */
    private static <T> Map<SocketKind, T> measureEach(String benchmark, List<String> failures, Measurement<T> measurement)
            throws InterruptedException {
        Map<SocketKind, T> results = new EnumMap<>(SocketKind.class);
        for (SocketKind kind : KINDS) {
            log.info("running {} over {}", benchmark, kind.optionValue());
            try {
                results.put(kind, measurement.run(kind));
            } catch (IOException | RuntimeException e) {
                String failure = benchmark + " over " + kind.optionValue() + ": " + e.getMessage();
                log.error(failure);
                failures.add(failure);
            }
        }
        return results;
    }

    /** Starts the server JVM, then the client JVM against it with {@code --csv}; returns the client's rows. */
    private static List<String> serverAndClient(Class<?> main, String serverRole, String clientRole, SocketKind kind,
            List<String> clientOptions, String csvHeader) throws IOException, InterruptedException {
        String label = main.getSimpleName() + " " + kind.optionValue() + " ";
        List<String> endpoint = List.of("--port", String.valueOf(freePort()), "--impl", kind.optionValue());
        try (ChildJvm server = ChildJvm.start(label + serverRole, main, concat(List.of(serverRole), endpoint))) {
            server.awaitLineContaining(MainRunner.READY, SERVER_START);
            List<String> rows;
            List<String> clientArgs = concat(List.of(clientRole, "--host", LOOPBACK), endpoint, clientOptions, List.of("--csv"));
            try (ChildJvm client = ChildJvm.start(label + clientRole, main, clientArgs)) {
                rows = client.awaitSuccess(CLIENT_RUN);
            }
            server.awaitSuccess(SERVER_STOP);
            if (rows.isEmpty() || !rows.get(0).equals(csvHeader)) {
                throw new IOException(label + clientRole + " printed no results");
            }
            return rows.subList(1, rows.size());
        }
    }

    /*
     * The server JVM must listen on a port the client is told in advance; asking the kernel for
     * a free one and releasing it leaves a tiny window for another program to take it, which a
     * demo on one machine can live with.
     */
    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0)) {
            return probe.getLocalPort();
        }
    }

    @SafeVarargs
    private static List<String> concat(List<String>... parts) {
        List<String> all = new ArrayList<>();
        for (List<String> part : parts) {
            all.addAll(part);
        }
        return all;
    }

    private static String join(List<Integer> sizes) {
        return String.join(",", sizes.stream().map(String::valueOf).toList());
    }
}
