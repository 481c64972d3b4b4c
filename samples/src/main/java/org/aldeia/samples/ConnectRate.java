package org.aldeia.samples;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;

/**
 * Connection set-up cost, as programs that open a connection per request pay it: sequential
 * connect + 1-byte echo + close, one connection at a time, two JVMs.
 * <pre>
 *   ConnectRate server --port P --impl aldeia|jdk
 *   ConnectRate client --host H --port P --impl aldeia|jdk [--connections 1000] [--warmup 3000]
 * </pre>
 * The client prints the median, the 90th and 99th percentiles and the mean time per connection;
 * its last connection carries {@link #STOP}, after which the server exits.
 */
public final class ConnectRate {

    static final String USAGE = String.join("\n",
            "usage: ConnectRate server --port P --impl aldeia|jdk",
            "       ConnectRate client --host H --port P --impl aldeia|jdk [--connections 1000] [--warmup 3000]",
            "  each connection: connect, write 1 byte, read its echo, close; the warm-up ones are untimed.");

    /**
     * Untimed connections first. With a few hundred, both JVMs' compilers are still at work
     * during the timed ones and, on a machine of two cores, take the CPU the connections wait
     * for: the median then measures the JIT (about twice the warm figure here).
     */
    static final int DEFAULT_WARMUP = 3000;

    /** The byte of an ordinary connection; the server echoes it. */
    static final int PING = 1;
    /** The byte of the last connection: the server echoes it and exits. */
    static final int STOP = 0;

    private ConnectRate() {
    }

    public static void main(String[] args) {
        System.exit(MainRunner.run("ConnectRate", USAGE, () -> run(args, System.out)));
    }

    static void run(String[] args, PrintStream out) throws Exception {
        Arguments arguments = Arguments.parse(args, Set.of("host", "port", "impl", "connections", "warmup"), Set.of());
        SocketKind kind = arguments.kind();
        if ("server".equals(arguments.role())) {
            int port = arguments.requiredInteger("port", 0);
            try (ServerSocket server = kind.serverSocket(port)) {
                MainRunner.announceListening(out, "ConnectRate server", kind, server, port);
                serve(kind, server);
            }
        } else if ("client".equals(arguments.role())) {
            String host = arguments.string("host", "127.0.0.1");
            int port = arguments.requiredInteger("port", 1);
            int connections = arguments.integer("connections", 1000, 1);
            int warmup = arguments.integer("warmup", DEFAULT_WARMUP, 0);
            out.println(summary(kind, measure(kind, host, port, connections, warmup)));
        } else {
            throw new IllegalArgumentException("say 'server' or 'client' first");
        }
    }

    /**
     * {@code warmup} untimed connections, then {@code connections} timed ones, then the one that
     * stops the server; returns the time of each timed connection in nanoseconds.
     */
    static long[] measure(SocketKind kind, String host, int port, int connections, int warmup) throws IOException {
        for (int i = 0; i < warmup; i++) {
            once(kind, host, port, PING);
        }
        long[] nanos = new long[connections];
        for (int i = 0; i < connections; i++) {
            long start = System.nanoTime();
            once(kind, host, port, PING);
            nanos[i] = System.nanoTime() - start;
        }
        once(kind, host, port, STOP);
        return nanos;
    }

    /** Echoes one byte per accepted connection until a connection carries {@link #STOP}. */
    static void serve(SocketKind kind, ServerSocket server) throws IOException {
        while (true) {
            try (Socket socket = kind.accept(server)) {
                InputStream in = socket.getInputStream();
                int b = in.read();
                if (b < 0) {
                    throw new IOException("a client closed its connection before its byte");
                }
                OutputStream out = socket.getOutputStream();
                out.write(b);
                out.flush();
                if (b == STOP) {
                    return;
                }
            }
        }
    }

    private static void once(SocketKind kind, String host, int port, int value) throws IOException {
        try (Socket socket = kind.connect(host, port)) {
            OutputStream out = socket.getOutputStream();
            out.write(value);
            out.flush();
            int echo = socket.getInputStream().read();
            if (echo != value) {
                throw new IOException("echo " + echo + " for " + value);
            }
        }
    }

    /** One line: the median, p90, p99 and mean per connection in milliseconds. */
    static String summary(SocketKind kind, long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        double mean = Arrays.stream(sorted).average().orElse(0);
        return String.format(Locale.ROOT,
                "ConnectRate (%s): %d connections, per connection median %.3f ms, p90 %.3f ms, p99 %.3f ms, mean %.3f ms",
                kind.optionValue(), sorted.length, millis(percentile(sorted, 50)), millis(percentile(sorted, 90)),
                millis(percentile(sorted, 99)), mean / 1e6);
    }

    private static long percentile(long[] sorted, int percent) {
        int index = (int) Math.min(sorted.length - 1L, (long) Math.ceil(sorted.length * percent / 100.0) - 1);
        return sorted[Math.max(0, index)];
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }
}
