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
 * The thesis's ping-pong benchmark (section 5.2.1) as two programs, one per JVM:
 * <pre>
 *   PingPong server --port P --impl aldeia|jdk
 *   PingPong client --host H --port P --impl aldeia|jdk [--sizes 0:10000:500] [--large 65536,1048576]
 *                   [--iterations 100] [--warmup 10] [--jit-warmup-ms 3000] [--csv]
 * </pre>
 * The server serves one client and exits when it says it is done.
 */
public final class PingPong {

    private static final Logger log = LoggerFactory.getLogger(PingPong.class);

    /**
     * The thesis's 10 untimed round trips per size leave a fresh JVM's send and receive paths
     * interpreted for the first sizes, which times the JIT rather than the network. 3 s, as
     * ./aldeia bench's sweep: after 0.5 s both JVMs still compiled (C2) on this machine's two
     * cores, and a whole sweep ran at 5-11 us one-way where it runs at 1.5-3 us after 2-3 s.
     */
    static final int DEFAULT_JIT_WARMUP_MILLIS = 3000;

    static final String USAGE = String.join("\n",
            "usage: PingPong server --port P --impl aldeia|jdk",
            "       PingPong client --host H --port P --impl aldeia|jdk [--sizes 0:10000:500]",
            "                       [--large 65536,1048576] [--iterations 100] [--warmup 10] [--jit-warmup-ms 3000]",
            "                       [--csv]",
            "  sizes: comma-separated sizes in bytes or start:end:step ranges; --large adds sizes after the sweep;",
            "  --jit-warmup-ms: untimed round trips of every size in turn first, so that both JVMs run compiled code",
            "  (0: none);",
            "  size 0 is a round trip of the 4-byte length header alone; --csv prints size,iterations,total_ms lines.");

    private PingPong() {
    }

    public static void main(String[] args) {
        System.exit(MainRunner.run("PingPong", USAGE, () -> run(args, System.out)));
    }

    static void run(String[] args, PrintStream out) throws Exception {
        Arguments arguments = Arguments.parse(args,
                Set.of("host", "port", "impl", "sizes", "large", "iterations", "warmup", "jit-warmup-ms"),
                Set.of("csv"));
        String role = arguments.role();
        if ("server".equals(role)) {
            serve(arguments.kind(), arguments.requiredInteger("port", 0), out);
        } else if ("client".equals(role)) {
            List<Integer> sizes = new ArrayList<>(arguments.sizes("sizes", "0:10000:500"));
            sizes.addAll(arguments.sizes("large", ""));
            SocketKind kind = arguments.kind();
            String host = arguments.string("host", "127.0.0.1");
            int port = arguments.requiredInteger("port", 1);
            int iterations = arguments.integer("iterations", 100, 1);
            int warmup = arguments.integer("warmup", 10, 0);
            int jitWarmupMillis = arguments.integer("jit-warmup-ms", DEFAULT_JIT_WARMUP_MILLIS, 0);
            List<PingPongResult> results;
            try (Socket socket = kind.connect(host, port)) {
                results = new PingPongClient(socket).run(sizes, iterations, warmup, jitWarmupMillis);
            }
            if (arguments.flag("csv")) {
                printCsv(results, out);
            } else {
                printTable(kind, results, out);
            }
        } else {
            throw new IllegalArgumentException("say 'server' or 'client' first");
        }
    }

    private static void serve(SocketKind kind, int port, PrintStream out) throws Exception {
        try (ServerSocket server = kind.serverSocket(port)) {
            MainRunner.announceListening(out, "PingPong server", kind, server, port);
            try (Socket socket = kind.accept(server)) {
                long echoed = PingPongServer.serve(socket);
                log.info("PingPong server echoed {} messages", echoed);
            }
        }
    }

    private static void printCsv(List<PingPongResult> results, PrintStream out) {
        out.println(PingPongResult.CSV_HEADER);
        results.forEach(result -> out.println(result.toCsv()));
    }

    private static void printTable(SocketKind kind, List<PingPongResult> results, PrintStream out) {
        out.printf("ping-pong over %s: one-way time t_um = t_c*10^3/(2i), bandwidth v*8/1024^2%n", kind.optionValue());
        out.printf("%12s %10s %12s %14s %10s%n", "size", "iterations", "t_c (ms)", "one-way (us)", "Mb/s");
        for (PingPongResult result : results) {
            out.printf("%12s %10d %12.3f %14.2f %10.2f%n", Sizes.describe(result.size()), result.iterations(),
                    result.totalMillis(), result.oneWayMicros(), result.megabitsPerSecond());
        }
    }
}
