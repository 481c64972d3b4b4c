package org.aldeia.microvapi;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.aldeia.deck.DeckLauncher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Another JVM on this host running a test main class with this JVM's classpath (so it has the
 * test classes, logback-test.xml and the native libraries). Its stdout is read line by line
 * for handshakes; its stderr (where its log goes) is kept in a file for assertions and
 * failure messages. Closing it kills it, so a test that fails never leaves a JVM behind.
 * Public for {@link org.aldeia.microvapi.hosts.TwoHosts}, which starts it in an emulated host.
 */
public final class ChildJvm implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ChildJvm.class);

    private final Process process;
    private final BufferedReader stdout;
    private final Path stderr;

    private ChildJvm(Process process, Path stderr) {
        this.process = process;
        this.stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.stderr = stderr;
    }

    /** Starts {@code mainClass}; its stderr goes to target/child-jvms/, kept for a failure's post-mortem. */
    /** JVM options that give a child this JVM's configuration file, if it has one. */
    public static List<String> thisJvmsConfiguration() {
        String configuration = System.getProperty(org.aldeia.core.config.AldeiaConfiguration.PROPERTY);
        return configuration == null ? new ArrayList<>()
                : new ArrayList<>(List.of("-D" + org.aldeia.core.config.AldeiaConfiguration.PROPERTY + "=" + configuration));
    }

    public static ChildJvm start(List<String> jvmOptions, Class<?> mainClass, String... args) throws IOException {
        return start(List.of(), jvmOptions, mainClass, args);
    }

    /**
     * As {@link #start(List, Class, String...)}, through {@code launcher}: a command that runs the
     * rest of its arguments in its own process (exec), e.g. in an emulated host, so that the
     * process started here is the JVM and closing it stops the JVM.
     */
    public static ChildJvm start(List<String> launcher, List<String> jvmOptions, Class<?> mainClass, String... args)
            throws IOException {
        Path logs = Files.createDirectories(Path.of("target", "child-jvms"));
        Path stderr = Files.createTempFile(logs, mainClass.getSimpleName() + "-", ".err");
        List<String> command = new ArrayList<>(launcher);
        command.addAll(DeckLauncher.javaCommand(jvmOptions, mainClass, List.of(args)));
        Process process = new ProcessBuilder(command)
                .redirectError(stderr.toFile())
                .start();
        LOG.info("started {} as pid {}, stderr in {}", mainClass.getSimpleName(), process.pid(), stderr);
        return new ChildJvm(process, stderr);
    }

    /**
     * The first stdout line starting with {@code prefix}, without it; other lines are skipped.
     * Blocks: callers run under a JUnit timeout in a separate thread, and closing the child
     * ends the read.
     */
    public String awaitLine(String prefix) throws IOException {
        for (String line = stdout.readLine(); line != null; line = stdout.readLine()) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length());
            }
        }
        throw new IOException("the child JVM ended its output without a line \"" + prefix + "...\"; " + describe());
    }

    /** Waits for the exit and returns its status; kills the child and fails after {@code seconds}. */
    public int waitFor(long seconds) throws IOException, InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            close();
            throw new IOException("the child JVM did not exit within " + seconds + " s; " + describe());
        }
        return process.exitValue();
    }

    /** Writes {@code line} to the child's stdin. */
    public void send(String line) throws IOException {
        process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().flush();
    }

    public long pid() {
        return process.pid();
    }

    /** Kills the child at once (SIGKILL): no shutdown hook, no close of its sockets. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** Everything the child wrote to stderr so far (its log). */
    public String stderr() throws IOException {
        return Files.readString(stderr, StandardCharsets.UTF_8);
    }

    /** Exit state and stderr: what an assertion message needs. */
    public String describe() {
        String state = process.isAlive() ? "still running" : "exit status " + process.exitValue();
        try {
            return "child " + state + ", stderr:\n" + stderr();
        } catch (IOException e) {
            return "child " + state + ", stderr unreadable: " + e.getMessage();
        }
    }

    /**
     * Stops the child as a user would (SIGTERM: its shutdown hook closes Aldeia, so DECK removes
     * its shared segments), and kills it if it has not gone within a few seconds.
     */
    @Override
    public void close() throws InterruptedException, IOException {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            kill();
        }
        stdout.close();
    }
}
