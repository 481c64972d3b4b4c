package org.aldeia.samples;

import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thesis's serialization benchmark (section 5.2.3, Table 5.1) as two programs, one per JVM:
 * <pre>
 *   Serialization receiver --port P --impl aldeia|jdk
 *   Serialization sender --host H --port P --impl aldeia|jdk [--max-exponent 6] [--runs 100]
 *                        [--big-runs 10] [--warmup 3] [--jit-warmup-ms 3000] [--csv]
 * </pre>
 * The sender times {@code int[]} arrays of 10^1 .. 10^max-exponent elements.
 */
public final class Serialization {

    private static final Logger log = LoggerFactory.getLogger(Serialization.class);

    /** Arrays of 10^BIG_EXPONENT elements and more use --big-runs. */
    static final int BIG_EXPONENT = 6;
    static final int LARGEST_EXPONENT = 7;

    static final String USAGE = String.join("\n",
            "usage: Serialization receiver --port P --impl aldeia|jdk",
            "       Serialization sender --host H --port P --impl aldeia|jdk [--max-exponent 6]",
            "                            [--runs 100] [--big-runs 10] [--warmup 3] [--jit-warmup-ms 3000] [--csv]",
            "  arrays of 10^1 .. 10^max-exponent ints (max-exponent 1..7); --runs timed transfers each,",
            "  --big-runs for 10^6 and 10^7; --jit-warmup-ms: untimed transfers of the arrays up to 10^5",
            "  in turn first, so that both JVMs run compiled code (0: none); --csv prints",
            "  elements,runs,total_ms lines.");

    private Serialization() {
    }

    public static void main(String[] args) {
        System.exit(MainRunner.run("Serialization", USAGE, () -> run(args, System.out)));
    }

    static void run(String[] args, PrintStream out) throws Exception {
        Arguments arguments = Arguments.parse(args,
                Set.of("host", "port", "impl", "max-exponent", "runs", "big-runs", "warmup", "jit-warmup-ms"),
                Set.of("csv"));
        String role = arguments.role();
        if ("receiver".equals(role)) {
            receive(arguments.kind(), arguments.requiredInteger("port", 0), out);
        } else if ("sender".equals(role)) {
            SocketKind kind = arguments.kind();
            String host = arguments.string("host", "127.0.0.1");
            int port = arguments.requiredInteger("port", 1);
            int maxExponent = arguments.integer("max-exponent", BIG_EXPONENT, 1);
            if (maxExponent > LARGEST_EXPONENT) {
                throw new IllegalArgumentException("--max-exponent must be at most " + LARGEST_EXPONENT);
            }
            List<SerializationSender.Case> cases = cases(maxExponent,
                    arguments.integer("runs", 100, 1), arguments.integer("big-runs", 10, 1));
            int warmup = arguments.integer("warmup", 3, 0);
            int jitWarmupMillis = arguments.integer("jit-warmup-ms", PingPong.DEFAULT_JIT_WARMUP_MILLIS, 0);
            List<SerializationResult> results;
            try (Socket socket = kind.connect(host, port)) {
                results = new SerializationSender(socket).run(cases, warmup, jitWarmupMillis);
            }
            if (arguments.flag("csv")) {
                out.println(SerializationResult.CSV_HEADER);
                results.forEach(result -> out.println(result.toCsv()));
            } else {
                printTable(kind, results, out);
            }
        } else {
            throw new IllegalArgumentException("say 'receiver' or 'sender' first");
        }
    }

    static List<SerializationSender.Case> cases(int maxExponent, int runs, int bigRuns) {
        List<SerializationSender.Case> cases = new ArrayList<>();
        int elements = 1;
        for (int exponent = 1; exponent <= maxExponent; exponent++) {
            elements *= 10;
            cases.add(new SerializationSender.Case(elements, exponent >= BIG_EXPONENT ? bigRuns : runs));
        }
        return cases;
    }

    private static void receive(SocketKind kind, int port, PrintStream out) throws Exception {
        try (ServerSocket server = kind.serverSocket(port)) {
            MainRunner.announceListening(out, "Serialization receiver", kind, server, port);
            try (Socket socket = kind.accept(server)) {
                long received = SerializationReceiver.serve(socket);
                log.info("Serialization receiver checked {} arrays", received);
            }
        }
    }

    private static void printTable(SocketKind kind, List<SerializationResult> results, PrintStream out) {
        out.printf("int[] through ObjectOutputStream over %s (flush + acknowledgement per run)%n", kind.optionValue());
        out.printf("%10s %6s %12s %10s%n", "elements", "runs", "ms per run", "Mb/s");
        for (SerializationResult result : results) {
            out.printf("%10d %6d %12.3f %10.2f%n", result.elements(), result.runs(), result.millisPerRun(),
                    result.megabitsPerSecond());
        }
    }
}
