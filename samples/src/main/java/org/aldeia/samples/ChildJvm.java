package org.aldeia.samples;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sample main run in its own JVM, as the thesis ran each side on its own node. It gets this
 * JVM's classpath and {@code aldeia.*} / {@code logback.*} system properties; its stderr (the
 * log) goes straight to ours, its stdout is read line by line for the caller.
 */
final class ChildJvm implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ChildJvm.class);

    /** Stands in the line queue for the end of the child's stdout. */
    private static final Optional<String> END_OF_OUTPUT = Optional.empty();

    private final String name;
    private final Process process;
    private final BlockingQueue<Optional<String>> lines = new LinkedBlockingQueue<>();
    private final Thread reader;

    private ChildJvm(String name, Process process) {
        this.name = name;
        this.process = process;
        this.reader = new Thread(this::readStdout, name + "-stdout");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    static ChildJvm start(String name, Class<?> main, List<String> args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        System.getProperties().stringPropertyNames().stream()
                .filter(key -> key.startsWith("aldeia.") || key.startsWith("logback."))
                .sorted()
                .forEach(key -> command.add("-D" + key + "=" + System.getProperty(key)));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(args);
        Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .redirectInput(ProcessBuilder.Redirect.PIPE)
                .start();
        process.getOutputStream().close();
        return new ChildJvm(name, process);
    }

    /** Waits for a stdout line containing {@code text}; fails if the child ends or the time runs out first. */
    String awaitLineContaining(String text, Duration limit) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            Optional<String> line = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new IOException(name + " printed no '" + text + "' line within " + limit.toSeconds() + " s");
            }
            if (line.isEmpty()) {
                throw new IOException(name + " ended (status " + process.waitFor() + ") before printing '" + text + "'");
            }
            if (line.get().contains(text)) {
                return line.get();
            }
        }
    }

    /** Waits for the child to end successfully and returns the stdout lines not consumed yet. */
    List<String> awaitSuccess(Duration limit) throws IOException, InterruptedException {
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IOException(name + " did not finish within " + limit.toSeconds() + " s");
        }
        reader.join();
        if (process.exitValue() != 0) {
            throw new IOException(name + " failed with exit status " + process.exitValue() + " (its log is above)");
        }
        // The reader has ended, so the queue holds the remaining lines and then END_OF_OUTPUT.
        List<String> rest = new ArrayList<>();
        for (Optional<String> line = lines.poll(); line != null && line.isPresent(); line = lines.poll()) {
            rest.add(line.get());
        }
        return rest;
    }

    /** Ends the child if it still runs (a failed step must not leave a JVM behind). */
    @Override
    public void close() {
        try {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor();
                }
            }
            reader.join();
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private void readStdout() {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                lines.add(Optional.of(line));
            }
        } catch (IOException e) {
            log.warn("{}: reading its output failed: {}", name, e.toString());
        } finally {
            lines.add(END_OF_OUTPUT);
        }
    }
}
