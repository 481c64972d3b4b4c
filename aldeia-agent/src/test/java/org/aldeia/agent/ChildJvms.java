package org.aldeia.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URISyntaxException;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.aldeia.deck.DeckSegments;

/**
 * The child JVMs of one end-to-end test: started with or without {@code -javaagent:} on the
 * packaged agent jar, each one's stderr in a log file of its own (shown when an assertion
 * fails), all ended by {@link #endAll()}, and a check that none of them left a DECK segment in
 * /dev/shm behind.
 */
final class ChildJvms {

    /** The system property failsafe sets to the packaged agent jar (see the module's pom). */
    private static final String AGENT_JAR_PROPERTY = "aldeia.agent.jar";
    /** Long enough for a JVM to run its shutdown hooks and DECK's at-exit unlink under load. */
    private static final long TERMINATE_GRACE_SECONDS = 10;

    /**
     * The aldeia.conf rules of the tests: server sockets accept Aldeia (and plain TCP) clients,
     * clients reach loopback servers through Aldeia. The bind rule is spelled out because the
     * default bind applies only to a file with no rule at all.
     */
    static final String ALDEIA_ON_LOOPBACK = "bind * *\nconnect 127.0.0.1 *\n";

    private final Path logDirectory;
    private final List<Process> children = new ArrayList<>();
    private final List<String> names = new ArrayList<>();

    ChildJvms(Path logDirectory) {
        this.logDirectory = logDirectory;
    }

    /** The agent jar under test; fails the test, not with a hang, when it was not packaged. */
    static Path agentJar() {
        String jar = System.getProperty(AGENT_JAR_PROPERTY);
        assertTrue(jar != null && Files.isRegularFile(Path.of(jar)),
                "-D" + AGENT_JAR_PROPERTY + " must name the packaged agent jar (run `mvn verify`), it is " + jar);
        return Path.of(jar);
    }

    /** {@code -javaagent:<jar>=<configuration>}: the agent with that aldeia.conf. */
    static String agent(Path configuration) {
        return "-javaagent:" + agentJar() + "=" + configuration;
    }

    /** The logback file that turns on the connect/accept DEBUG lines of the installed sockets. */
    static String debugLogging() {
        return "-Dlogback.configurationFile=" + codeSource(ChildJvms.class).resolve("agent-it-logback.xml");
    }

    /** The class path entry (directory or jar) {@code type} was loaded from. */
    static Path codeSource(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("no file location for " + type.getName(), e);
        }
    }

    /** A class path made of the entries the given classes were loaded from, and nothing else. */
    static String classPath(Class<?>... types) {
        return Stream.of(types).map(ChildJvms::codeSource).map(Path::toString).distinct()
                .collect(Collectors.joining(System.getProperty("path.separator")));
    }

    /**
     * Starts {@code java <options...>}, its stderr going to {@code <name>.log}. Its stdin stays
     * open (some programs, NanoHTTPD's among them, stop when it closes).
     */
    Process start(String name, List<String> options) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(options);
        Process process = new ProcessBuilder(command).redirectError(logFile(name).toFile()).start();
        children.add(process);
        names.add(name);
        return process;
    }

    Path logFile(String name) {
        return logDirectory.resolve(name + ".log");
    }

    String readLog(String name) throws IOException {
        return Files.readString(logFile(name));
    }

    /**
     * A failure message, read only if an assertion fails: the stderr of the child {@code name},
     * then of the others (the cause of a client's failure is often in its server's log).
     */
    Supplier<String> log(String name) {
        return () -> Stream.concat(Stream.of(name), names.stream().filter(other -> !other.equals(name)).distinct())
                .map(this::stderrOf).collect(Collectors.joining("\n"));
    }

    private String stderrOf(String name) {
        try {
            return "the " + name + " JVM's stderr:\n" + readLog(name);
        } catch (IOException e) {
            return "the " + name + " JVM's stderr could not be read: " + e;
        }
    }

    static BufferedReader stdout(Process process) {
        return new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** The exit status of a child that must end by itself within {@code seconds}. */
    int exitStatus(String name, Process process, long seconds) throws InterruptedException {
        assertTrue(process.waitFor(seconds, TimeUnit.SECONDS), () -> "the " + name + " JVM did not end in "
                + seconds + " s; " + log(name).get());
        return process.exitValue();
    }

    /** Asserts the child ends by itself with status 0. */
    void assertExitsCleanly(String name, Process process, long seconds) throws InterruptedException {
        assertEquals(0, exitStatus(name, process, seconds), log(name));
    }

    /**
     * Ends every child still running: SIGTERM first, so that its shutdown runs and DECK unlinks
     * its /dev/shm segments, and SIGKILL only for one that does not end in time.
     */
    void endAll() throws InterruptedException {
        for (Process child : children) {
            child.destroy();
        }
        for (Process child : children) {
            if (!child.waitFor(TERMINATE_GRACE_SECONDS, TimeUnit.SECONDS)) {
                child.destroyForcibly().waitFor();
            }
        }
    }

    /**
     * Asserts that no DECK shared-memory segment belongs to one of these children (call after
     * {@link #endAll()}). Other JVMs of this user (other test runs) may own segments at the same
     * time, so a segment is attributed by its owner record ({@link DeckSegments}), not its name.
     */
    void assertNoSegmentsLeft() throws IOException {
        Set<Long> pids = children.stream().map(Process::pid).collect(Collectors.toSet());
        List<String> left = DeckSegments.all().stream().filter(s -> pids.contains(s.ownerPid()))
                .map(s -> s.file().getFileName() + " (pid " + s.ownerPid() + ")").toList();
        assertTrue(left.isEmpty(), "DECK segments left in " + DeckSegments.directory() + " by ended child JVMs: " + left);
    }

    /** A TCP port free on the loopback address right now. */
    static int freePort() throws IOException {
        try (ServerSocketChannel probe = ServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            return ((InetSocketAddress) probe.getLocalAddress()).getPort();
        }
    }
}
