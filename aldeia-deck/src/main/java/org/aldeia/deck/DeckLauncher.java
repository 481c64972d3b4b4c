package org.aldeia.deck;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Java counterpart of deckrun, for tests and samples: starts a static DECK run of N JVMs on
 * this host, each running {@code mainClass} with the current classpath and DECK_ID / DECK_NODES /
 * DECK_FILE in its environment, the nodes file listing free loopback ports, and DECK_SECRET_FILE:
 * the run secret, 32 random bytes (hex) in a file of mode 0600 in the work directory, removed
 * when the run ends (an environment() entry for it wins). It waits for all of
 * them with a timeout; on the first failure (a non-zero exit) or when time runs out it kills the
 * others, so a broken run never hangs the caller.
 *
 * <pre>{@code
 * DeckLauncher.Result r = new DeckLauncher(2, PingPong.class).timeout(Duration.ofSeconds(30)).launch();
 * assertTrue(r.succeeded(), r::toString);
 * }</pre>
 */
public final class DeckLauncher {

    private static final Logger LOG = LoggerFactory.getLogger(DeckLauncher.class);

    /** The keys {@link #launchAldeia()} writes itself: one value per node, never the caller's. */
    private static final Set<String> LAUNCHER_KEYS = Set.of("socket_type", "deck_id", "deck_nodes", "deck_file");
    /** The shape of Aldeia's configuration keys; which keys exist is the JVMs' parser's business. */
    private static final String KEY_PATTERN = "[a-z][a-z0-9_]*";

    private final int nodes;
    private final Class<?> mainClass;
    private final List<String> args;
    private final List<String> jvmOptions = new ArrayList<>();
    private final Map<String, String> environment = new LinkedHashMap<>();
    private final Map<String, String> aldeiaSettings = new LinkedHashMap<>();
    private Duration timeout = Duration.ofSeconds(60);
    private boolean inheritOutput;
    private Path workDir;
    /** CPU of node i (taskset -c), or empty: the scheduler places every process. */
    private int[] cpus = new int[0];
    /** Words before node i's command (see {@link #nodePrefix}). */
    private final Map<Integer, List<String>> prefixes = new HashMap<>();
    /** Node i's address in the nodes file when not loopback (see {@link #nodeAddress}). */
    private final Map<Integer, InetAddress> addresses = new HashMap<>();

    public DeckLauncher(int nodes, Class<?> mainClass, String... args) {
        if (nodes < 1) {
            throw new IllegalArgumentException("a DECK run needs at least one node, got " + nodes);
        }
        this.nodes = nodes;
        this.mainClass = mainClass;
        this.args = List.of(args);
    }

    /** Options for every JVM, before the main class (e.g. "-Xmx64m", "-Dkey=value"). */
    public DeckLauncher jvmOptions(String... options) {
        jvmOptions.addAll(Arrays.asList(options));
        return this;
    }

    /** An extra environment variable for every process (e.g. DECK_CLONE_TIMEOUT_MS). */
    public DeckLauncher environment(String name, String value) {
        environment.put(name, value);
        return this;
    }

    /**
     * One more {@code key = value} line in every node's {@code aldeia-<i>.conf} (e.g.
     * {@code deck_transport = sci}, {@code mtu = 16384}); only {@link #launchAldeia()} writes those
     * files. Rejected at once: a key the launcher writes itself (socket_type, deck_id, deck_nodes,
     * deck_file), a key given twice (Aldeia's parser would refuse the file in every JVM), and a
     * key or value that would not read back as this one line.
     */
    public DeckLauncher aldeiaSetting(String key, String value) {
        if (key == null || !key.matches(KEY_PATTERN)) {
            throw new IllegalArgumentException("Aldeia configuration key '" + key + "' is not lower case letters, digits and '_'");
        }
        if (LAUNCHER_KEYS.contains(key)) {
            throw new IllegalArgumentException("Aldeia configuration key '" + key
                    + "' is written by DeckLauncher for each node and cannot be set (launcher keys: " + LAUNCHER_KEYS + ")");
        }
        if (value == null || value.isBlank() || value.strip().length() != value.length() || value.matches("(?s).*[#\\r\\n].*")) {
            throw new IllegalArgumentException("value '" + value + "' of Aldeia configuration key '" + key
                    + "' must be non-blank, without surrounding spaces, '#' or line breaks");
        }
        String first = aldeiaSettings.putIfAbsent(key, value);
        if (first != null) {
            throw new IllegalArgumentException("Aldeia configuration key '" + key + "' given twice ('" + first
                    + "', then '" + value + "')");
        }
        return this;
    }

    /** How long the whole run may take before every process is killed; default 60 s. */
    public DeckLauncher timeout(Duration runTimeout) {
        this.timeout = runTimeout;
        return this;
    }

    /**
     * Lets the processes write to this JVM's stdout/stderr instead of capturing each one's output
     * (stdout and stderr merged) in {@code node-<i>.out} of the work directory. Do not use it under
     * Maven Surefire, whose forked JVM talks to Maven over its stdout.
     */
    public DeckLauncher inheritOutput() {
        this.inheritOutput = true;
        return this;
    }

    /**
     * Pins node i to CPU {@code cpus[i]} (taskset -c) for runs that measure, such as the bench's
     * pinned placement (server on core 0, client on core 1): on a small virtual machine where
     * the processes run decides how long a cross-core wake-up takes. Needs taskset (util-linux).
     */
    public DeckLauncher pinned(int... nodeCpus) {
        if (nodeCpus.length != nodes) {
            throw new IllegalArgumentException(nodeCpus.length + " CPUs given for " + nodes + " nodes");
        }
        this.cpus = nodeCpus.clone();
        return this;
    }

    /**
     * Words before node {@code node}'s command, e.g. {@code twohosts.sh exec ID A --} to start it
     * in an emulated host (the bench's two-host placement); taskset, when {@link #pinned}, comes
     * after them. The prefix must run the command as its own process or exec it, so that killing
     * the process it starts kills the node.
     */
    public DeckLauncher nodePrefix(int node, List<String> prefix) {
        prefixes.put(checkedNode(node), List.copyOf(prefix));
        return this;
    }

    /**
     * Node {@code node}'s address in the nodes file instead of loopback: the address it has in
     * the emulated host its {@link #nodePrefix} starts it in, where DECK tcp listens and the
     * other nodes connect. Its port is below the ephemeral range ({@link #belowEphemeral}).
     */
    public DeckLauncher nodeAddress(int node, InetAddress address) {
        addresses.put(checkedNode(node), address);
        return this;
    }

    private int checkedNode(int node) {
        if (node < 0 || node >= nodes) {
            throw new IllegalArgumentException("node " + node + " is not one of the " + nodes + " nodes");
        }
        return node;
    }

    /** Where the nodes file, configuration files and outputs go; default a new temporary directory. */
    public DeckLauncher workDir(Path dir) {
        this.workDir = dir;
        return this;
    }

    /** Runs the processes as a static DECK run configured by the environment. */
    public Result launch() throws IOException, InterruptedException {
        if (!aldeiaSettings.isEmpty()) {
            throw new IllegalStateException("Aldeia settings " + aldeiaSettings.keySet()
                    + " only reach the JVMs through launchAldeia(), not launch()");
        }
        return run(false);
    }

    /**
     * As {@link #launch()}, and also gives each JVM its own Aldeia configuration file
     * ({@code aldeia-<i>.conf}: socket_type = SOCKET_DECK, deck_id, deck_nodes, deck_file) through
     * {@code -Daldeia.configuration}, so that Aldeia sockets in the processes run over DECK.
     */
    public Result launchAldeia() throws IOException, InterruptedException {
        return run(true);
    }

    /**
     * Writes a nodes file for {@code count} processes on this host: one "127.0.0.1:port" line per
     * node (the JVM's loopback address: "[::1]:port" when it prefers IPv6), each port free when probed. The probe sockets are all open at once so the ports differ.
     */
    public static Path writeNodesFile(Path file, int count) throws IOException {
        return writeNodesFile(file, count, Map.of());
    }

    /** As {@link #writeNodesFile(Path, int)}, with node i at {@code addresses.get(i)} where there is one. */
    private static Path writeNodesFile(Path file, int count, Map<Integer, InetAddress> addresses) throws IOException {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        List<ServerSocket> probes = new ArrayList<>();
        StringBuilder lines = new StringBuilder("# DECK nodes file written by DeckLauncher: node i on line i\n");
        try {
            for (int i = 0; i < count; i++) {
                ServerSocket probe = addresses.containsKey(i) ? belowEphemeral(loopback) : new ServerSocket(0, 1, loopback);
                probes.add(probe);
                lines.append(nodesFileEntry(addresses.getOrDefault(i, loopback), probe.getLocalPort())).append('\n');
            }
        } finally {
            for (ServerSocket probe : probes) {
                probe.close();
            }
        }
        return Files.writeString(file, lines, StandardCharsets.UTF_8);
    }

    /** Where {@link #belowEphemeral} looks: under Linux's ephemeral ports (32768 and up by default). */
    static final int FIXED_PORT_FIRST = 20000;
    static final int FIXED_PORT_LAST = 32767;

    /**
     * A socket bound on a free port below the ephemeral range, from a random start: the port of
     * a node in another network namespace (an emulated host). A port probed free here says
     * nothing about that host, where the connections of an earlier run (the bench keeps its
     * hosts from row to row) hold ephemeral ports; one below their range is free there unless
     * something listens on it.
     */
    private static ServerSocket belowEphemeral(InetAddress loopback) throws IOException {
        int span = FIXED_PORT_LAST - FIXED_PORT_FIRST + 1;
        int start = new SecureRandom().nextInt(span);
        for (int k = 0; k < span; k++) {
            ServerSocket probe = new ServerSocket();
            try {
                probe.bind(new InetSocketAddress(loopback, FIXED_PORT_FIRST + (start + k) % span), 1);
                return probe;
            } catch (IOException inUse) {
                probe.close();
            }
        }
        throw new IOException("no free port in " + FIXED_PORT_FIRST + ".." + FIXED_PORT_LAST + " on " + loopback);
    }

    /**
     * host:port as a nodes file takes it: "127.0.0.1:5000", "[0:0:0:0:0:0:0:1]:5000" (an IPv6
     * address in brackets, since its own colons would read as a port).
     */
    static String nodesFileEntry(InetAddress host, int port) {
        String address = host.getHostAddress();
        return (host instanceof Inet6Address ? "[" + address + "]" : address) + ":" + port;
    }

    /** The command that runs {@code mainClass} in a new JVM with this JVM's java and classpath. */
    public static List<String> javaCommand(List<String> jvmOptions, Class<?> mainClass, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.addAll(jvmOptions);
        command.add(mainClass.getName());
        command.addAll(args);
        return command;
    }

    /** Writes a run secret as deckrun does: 32 random bytes as hex, mode 0600 from the start. */
    public static Path writeRunSecret(Path file) throws IOException {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        return Files.writeString(file, HexFormat.of().formatHex(key), StandardCharsets.US_ASCII);
    }

    private Result run(boolean aldeia) throws IOException, InterruptedException {
        Path dir = workDir != null ? Files.createDirectories(workDir) : Files.createTempDirectory("deck-run-");
        Path nodesFile = writeNodesFile(dir.resolve("nodes"), nodes, addresses).toAbsolutePath();
        Path secret = environment.containsKey(Deck.ENV_SECRET_FILE) ? null
                : writeRunSecret(dir.resolve("run.secret")).toAbsolutePath();
        List<Process> processes = new ArrayList<>();
        BlockingQueue<Integer> exited = new LinkedBlockingQueue<>();
        try {
            for (int id = 0; id < nodes; id++) {
                Process process = start(id, dir, nodesFile, secret, aldeia);
                processes.add(process);
                int node = id;
                // The JDK's process reaper reports each exit: no polling of exit values here.
                process.onExit().thenRun(() -> exited.add(node));
            }
            boolean timedOut = awaitAll(processes, exited);
            return new Result(dir, inheritOutput, timedOut, exitCodes(processes));
        } finally {
            // Only reached with live processes on an exception (e.g. the caller was interrupted).
            killAll(processes);
            if (secret != null) {
                Files.deleteIfExists(secret);
            }
        }
    }

    private Process start(int id, Path dir, Path nodesFile, Path secret, boolean aldeia) throws IOException {
        List<String> options = new ArrayList<>(jvmOptions);
        if (aldeia) {
            Path conf = dir.resolve("aldeia-" + id + ".conf");
            StringBuilder lines = new StringBuilder("# Aldeia configuration of DECK node " + id + ", written by DeckLauncher\n"
                    + "socket_type = SOCKET_DECK\n"
                    + "deck_id = " + id + "\n"
                    + "deck_nodes = " + nodes + "\n"
                    + "deck_file = " + nodesFile + "\n");
            aldeiaSettings.forEach((key, value) -> lines.append(key).append(" = ").append(value).append('\n'));
            Files.writeString(conf, lines, StandardCharsets.UTF_8);
            options.add("-Daldeia.configuration=" + conf.toAbsolutePath());
        }
        List<String> command = new ArrayList<>(prefixes.getOrDefault(id, List.of()));
        if (cpus.length > 0) {
            command.addAll(List.of("taskset", "-c", Integer.toString(cpus[id])));
        }
        command.addAll(javaCommand(options, mainClass, args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(environment);
        builder.environment().put(Deck.ENV_ID, Integer.toString(id));
        builder.environment().put(Deck.ENV_NODES, Integer.toString(nodes));
        builder.environment().put(Deck.ENV_FILE, nodesFile.toString());
        if (secret != null) {
            builder.environment().put(Deck.ENV_SECRET_FILE, secret.toString());
        }
        if (inheritOutput) {
            builder.inheritIO();
        } else {
            builder.redirectErrorStream(true).redirectOutput(Result.outputFile(dir, id).toFile());
        }
        LOG.debug("starting DECK node {} of {}: {}", id, nodes, builder.command());
        return builder.start();
    }

    /** Waits for every process; kills the rest on the first failure or at the deadline. */
    private boolean awaitAll(List<Process> processes, BlockingQueue<Integer> exited) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int done = 0; done < processes.size(); done++) {
            Integer node = exited.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (node == null) {
                LOG.warn("DECK run of {} timed out after {}; killing every process", mainClass.getName(), timeout);
                killAll(processes);
                return true;
            }
            int code = processes.get(node).exitValue();
            if (code != 0) {
                LOG.warn("DECK node {} of {} exited with {}; killing the others", node, mainClass.getName(), code);
                killAll(processes);
                return false;
            }
        }
        return false;
    }

    private static void killAll(List<Process> processes) throws InterruptedException {
        for (Process process : processes) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        for (Process process : processes) {
            process.waitFor();
        }
    }

    private static int[] exitCodes(List<Process> processes) {
        return processes.stream().mapToInt(Process::exitValue).toArray();
    }

    /** How a run ended. */
    public static final class Result {

        private final Path workDir;
        private final boolean outputInherited;
        private final boolean timedOut;
        private final int[] exitCodes;

        Result(Path workDir, boolean outputInherited, boolean timedOut, int[] exitCodes) {
            this.workDir = workDir;
            this.outputInherited = outputInherited;
            this.timedOut = timedOut;
            this.exitCodes = exitCodes;
        }

        static Path outputFile(Path dir, int node) {
            return dir.resolve("node-" + node + ".out");
        }

        /** True when every process exited with 0 in time. */
        public boolean succeeded() {
            return !timedOut && Arrays.stream(exitCodes).allMatch(code -> code == 0);
        }

        /** True when the run was killed at its deadline. */
        public boolean timedOut() {
            return timedOut;
        }

        /** Exit status of node {@code node}'s process (137 when killed). */
        public int exitCode(int node) {
            return exitCodes[node];
        }

        public int[] exitCodes() {
            return exitCodes.clone();
        }

        /** Node {@code node}'s stdout and stderr; empty when output was inherited. */
        public String output(int node) throws IOException {
            return outputInherited ? "" : Files.readString(outputFile(workDir, node), StandardCharsets.UTF_8);
        }

        /** The directory holding the nodes file, configuration files and outputs. */
        public Path workDir() {
            return workDir;
        }

        /** Exit codes and every captured output: what an assertion message needs. */
        @Override
        public String toString() {
            StringBuilder text = new StringBuilder("DECK run in ").append(workDir)
                    .append(timedOut ? " timed out" : "").append(", exit codes ").append(Arrays.toString(exitCodes));
            for (int node = 0; node < exitCodes.length && !outputInherited; node++) {
                try {
                    text.append("\n--- node ").append(node).append(" ---\n").append(output(node));
                } catch (IOException e) {
                    text.append("\n--- node ").append(node).append(": output unreadable: ").append(e.getMessage());
                }
            }
            return text.toString();
        }
    }
}
