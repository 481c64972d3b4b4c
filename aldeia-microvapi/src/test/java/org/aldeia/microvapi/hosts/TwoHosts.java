package org.aldeia.microvapi.hosts;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.File;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.aldeia.microvapi.ChildJvm;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two emulated hosts, A and B, on this machine: each a network namespace with its own
 * loopback, /dev/shm and kernel boot id, joined by a veth pair (A is 198.18.0.1, B is
 * 198.18.0.2). Between them Aldeia's auto transport sees two hosts and picks tcp, as between
 * real ones. The work is done by {@code scripts/twohosts.sh} (which says how), shared with
 * {@code ./aldeia hosts}; this class starts JVMs in the hosts, cuts and restores the link, and
 * removes everything on {@link #close}, also from a shutdown hook if the test never gets there.
 * A run whose test JVM was killed is removed by the next {@link #up} on this machine.
 *
 * <p>Needs root: a test calls {@link #unavailable()} first and skips with its reason.
 */
public final class TwoHosts implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TwoHosts.class);
    private static final String SCRIPT_PROPERTY = "aldeia.twohosts.script";
    private static final Path SCRIPT_IN_REPOSITORY = Path.of("scripts", "twohosts.sh");
    private static final long SCRIPT_SECONDS = 60;

    /** The two hosts and their addresses on the link between them. */
    public enum Host {
        A("198.18.0.1"), B("198.18.0.2");

        private final String address;

        Host(String address) {
            this.address = address;
        }

        /** Its address on the link, as a literal. */
        public String address() {
            return address;
        }

        public InetAddress inetAddress() {
            try {
                return InetAddress.getByName(address);
            } catch (UnknownHostException e) {
                throw new IllegalStateException("a literal never needs resolving", e);
            }
        }
    }

    private final String id;
    private final List<ChildJvm> jvms = new ArrayList<>();
    private final Thread shutdownHook;
    private boolean closed;

    private TwoHosts(String id) {
        this.id = id;
        this.shutdownHook = new Thread(this::removeQuietly, "two-hosts-" + id + "-down");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Why two hosts cannot be made here, one sentence for a skipped test's message (not root,
     * no {@code ip netns}, no namespaces allowed, no script), or empty when they can.
     */
    public static Optional<String> unavailable() {
        Path script;
        try {
            script = script();
        } catch (IOException e) {
            return Optional.of(e.getMessage());
        }
        try {
            Result check = run(List.of(script.toString(), "check"));
            return check.status == 0 ? Optional.empty() : Optional.of(check.output.strip());
        } catch (IOException e) {
            return Optional.of(script + " check failed: " + e.getMessage());
        }
    }

    /** {@link #unavailable()}, asked once per JVM. */
    private static Optional<String> whyUnavailable;

    /**
     * Skips the calling test when two hosts cannot be made here, with the reason; call it from
     * each test (or @BeforeEach, not @BeforeAll: Surefire then reports the test skipped with it).
     */
    public static synchronized void assumeAvailable() {
        if (whyUnavailable == null) {
            whyUnavailable = unavailable();
        }
        assumeTrue(whyUnavailable.isEmpty(), () -> "two emulated hosts cannot be made here, so this test is skipped "
                + "(it needs root and `ip netns`; CI runs it as root): " + whyUnavailable.orElseThrow());
    }

    /** Makes a new pair of hosts, owned by this JVM (stale once it has gone). */
    public static TwoHosts up() throws IOException {
        String id = script("up", "--owner", Long.toString(ProcessHandle.current().pid())).strip();
        LOG.info("two emulated hosts up: run {} (A {}, B {})", id, Host.A.address(), Host.B.address());
        return new TwoHosts(id);
    }

    /** The name of {@code host}'s end of the link (scripts/twohosts.sh: "ah", the id, a or b). */
    public String link(Host host) {
        return "ah" + id + host.name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The run's id: every namespace, interface and mount of the run has it in its name. */
    public String id() {
        return id;
    }

    /**
     * Starts {@code mainClass} in {@code host} with this JVM's classpath (see
     * {@link ChildJvm}); {@link #close} stops it if the caller has not.
     */
    public synchronized ChildJvm start(Host host, List<String> jvmOptions, Class<?> mainClass, String... args)
            throws IOException {
        ChildJvm jvm = ChildJvm.start(inHost(host), jvmOptions, mainClass, args);
        jvms.add(jvm);
        return jvm;
    }

    /**
     * Runs {@code command} in {@code host} and returns its stdout.
     *
     * @throws IOException if it exits with a status other than 0, with the status and output
     */
    public String run(Host host, String... command) throws IOException {
        List<String> line = new ArrayList<>(inHost(host));
        line.addAll(Arrays.asList(command));
        Result result = run(line);
        if (result.status != 0) {
            throw new IOException("in host " + host + ", " + String.join(" ", command) + " exited with status "
                    + result.status + ": " + result.output.strip());
        }
        return result.stdout;
    }

    /** Cuts the link between the hosts (both ends down): each host's packets to the other fail. */
    public void partition() throws IOException {
        script("link", id, "down");
        LOG.info("run {}: link between A and B cut", id);
    }

    /** Restores the link; returns once both ends carry traffic again. */
    public void heal() throws IOException {
        script("link", id, "up");
        LOG.info("run {}: link between A and B restored", id);
    }

    /** Stops every JVM started here (SIGTERM, then SIGKILL), then removes the hosts. Idempotent. */
    @Override
    public synchronized void close() throws IOException, InterruptedException {
        if (closed) {
            return;
        }
        try {
            for (ChildJvm jvm : jvms) {
                jvm.close();
            }
        } finally {
            // The script kills whatever else still runs in the hosts.
            script("down", id);
            closed = true;
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        }
    }

    private synchronized void removeQuietly() {
        if (closed) {
            return;
        }
        try {
            script("down", id);
        } catch (IOException | RuntimeException e) {
            System.err.println("two emulated hosts, run " + id + ": " + e.getMessage()
                    + "; the next TwoHosts.up() or `scripts/twohosts.sh clean` removes it");
        }
    }

    /**
     * What of run {@code id} this machine still has, one line each (empty: nothing): network
     * namespaces, network interfaces in this machine's namespace and mounts whose names carry
     * the id, the run in the script's list, and which of {@code pids} still run. Independent of
     * the script's own removal, so that a test can check that removal.
     */
    public static List<String> leftovers(String id, Collection<Long> pids) throws IOException {
        List<String> left = new ArrayList<>();
        lines(run(List.of("ip", "netns", "list")).stdout, id, "network namespace ", left);
        lines(run(List.of("ip", "-o", "link", "show")).stdout, id, "interface ", left);
        for (String mount : Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8)) {
            if (mount.contains(id)) {
                left.add("mount " + mount);
            }
        }
        lines(script("list"), id, "run ", left);
        for (long pid : pids) {
            ProcessHandle.of(pid).filter(ProcessHandle::isAlive).ifPresent(p -> left.add("process " + pid));
        }
        return left;
    }

    private static void lines(String output, String id, String what, List<String> into) {
        output.lines().filter(l -> l.contains(id)).forEach(l -> into.add(what + l.strip()));
    }

    /** The command prefix that runs the rest of a command line in {@code host}. */
    private List<String> inHost(Host host) throws IOException {
        return List.of(script().toString(), "exec", id, host.name(), "--");
    }

    /** Runs the script with {@code args}; its stdout. Package-private for the tests of stale runs. */
    static String script(String... args) throws IOException {
        List<String> line = new ArrayList<>();
        line.add(script().toString());
        line.addAll(Arrays.asList(args));
        Result result = run(line);
        if (result.status != 0) {
            throw new IOException(String.join(" ", line) + " exited with status " + result.status + ": "
                    + result.output.strip());
        }
        return result.stdout;
    }

    /**
     * The script: system property aldeia.twohosts.script, else scripts/twohosts.sh in the
     * working directory or the nearest directory above it (Maven runs a module's tests in the
     * module's directory, one below the repository's root).
     */
    static Path script() throws IOException {
        String configured = System.getProperty(SCRIPT_PROPERTY);
        if (configured != null) {
            return Path.of(configured).toAbsolutePath();
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve(SCRIPT_IN_REPOSITORY);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IOException("no executable " + SCRIPT_IN_REPOSITORY + " in " + Path.of("").toAbsolutePath()
                + " or above it; set -D" + SCRIPT_PROPERTY + "=/path/to/twohosts.sh");
    }

    /** How a command ended: its status, its stdout, and stderr after it (for messages). */
    private record Result(int status, String stdout, String output) {
    }

    /** Runs {@code line} to its end, bounded in time. */
    private static Result run(List<String> line) throws IOException {
        Path stdout = Files.createTempFile("twohosts-", ".out");
        Path stderr = Files.createTempFile("twohosts-", ".err");
        try {
            Process process = new ProcessBuilder(line).redirectOutput(stdout.toFile()).redirectError(stderr.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            boolean ended = process.waitFor(SCRIPT_SECONDS, TimeUnit.SECONDS);
            if (!ended) {
                process.destroyForcibly().waitFor();
            }
            String out = Files.readString(stdout, StandardCharsets.UTF_8);
            String all = out + Files.readString(stderr, StandardCharsets.UTF_8);
            if (!ended) {
                throw new IOException(String.join(" ", line) + " did not end within " + SCRIPT_SECONDS + " s: " + all.strip());
            }
            return new Result(process.exitValue(), out, all);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(String.join(" ", line) + " was interrupted", e);
        } finally {
            Files.deleteIfExists(stdout);
            Files.deleteIfExists(stderr);
        }
    }
}
