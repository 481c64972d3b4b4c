package org.aldeia.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs one server/client pair of a native benchmark tool (ucx_perftest, fi_pingpong) in a
 * placement: the server first, then the client against 127.0.0.1, and returns the client's
 * output. The tools have no "ready" signal and their servers take a moment to listen, so a
 * client refused a connection is started again for a few seconds.
 */
final class ToolPair {

    private static final Duration SERVER_START_LIMIT = Duration.ofSeconds(10);
    private static final long RETRY_MILLIS = 100;
    private static final String REFUSED = "Connection refused";

    private final Map<String, String> environment;
    private final Duration limit;

    /** {@code environment} is added to both processes'; {@code limit} bounds each process. */
    ToolPair(Map<String, String> environment, Duration limit) {
        this.environment = Map.copyOf(environment);
        this.limit = limit;
    }

    /** A TCP port free on loopback now, for a tool's control connection. */
    static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return probe.getLocalPort();
        }
    }

    /**
     * Runs {@code server} (node 0 of the placement) and {@code client} (node 1); their outputs
     * go to {@code log}-server.out and -client.out. Returns the client's output; fails with its
     * last lines when either process fails or outlives the limit.
     */
    String run(Placement placement, List<String> server, List<String> client, Path log)
            throws IOException, InterruptedException {
        Path serverOut = log.resolveSibling(log.getFileName() + "-server.out");
        Path clientOut = log.resolveSibling(log.getFileName() + "-client.out");
        Process serverProcess = start(placement.taskset(0), server, serverOut);
        try {
            long deadline = System.nanoTime() + SERVER_START_LIMIT.toNanos();
            while (true) {
                Process clientProcess = start(placement.taskset(1), client, clientOut);
                int status = awaitExit(clientProcess, "client");
                String output = Files.readString(clientOut, StandardCharsets.UTF_8);
                if (status == 0) {
                    if (awaitExit(serverProcess, "server") != 0) {
                        throw new IOException("server exited with status " + serverProcess.exitValue() + ": "
                                + tail(Files.readString(serverOut, StandardCharsets.UTF_8)));
                    }
                    return output;
                }
                if (!output.contains(REFUSED) || !serverProcess.isAlive() || System.nanoTime() > deadline) {
                    throw new IOException("client exited with status " + status + ": " + tail(output)
                            + (serverProcess.isAlive() ? "" : "; server: " + tail(Files.readString(serverOut,
                                    StandardCharsets.UTF_8))));
                }
                Thread.sleep(RETRY_MILLIS); // the server is not listening yet
            }
        } finally {
            if (serverProcess.isAlive()) {
                serverProcess.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    private Process start(List<String> taskset, List<String> command, Path output) throws IOException {
        List<String> full = new ArrayList<>(taskset);
        full.addAll(command);
        ProcessBuilder builder = new ProcessBuilder(full).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().putAll(environment);
        return builder.start();
    }

    private int awaitExit(Process process, String role) throws IOException, InterruptedException {
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            throw new IOException(role + " still running after " + limit.toSeconds() + " s");
        }
        return process.exitValue();
    }

    /** The last non-empty line of a tool's output: where they print their error. */
    static String tail(String output) {
        List<String> lines = output.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
        return lines.isEmpty() ? "(no output)" : lines.get(lines.size() - 1);
    }
}
