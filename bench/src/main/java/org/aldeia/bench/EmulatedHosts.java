package org.aldeia.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The two emulated hosts of {@code scripts/twohosts.sh} for the bench's {@link Placement#HOSTS}:
 * two network namespaces joined by a veth pair, each with a /dev/shm of its own, host A at
 * {@value #SERVER_ADDRESS} (the server) and host B (the client). One run serves every row; it
 * belongs to this JVM, so a bench killed half-way leaves a run the next {@code up} removes.
 */
final class EmulatedHosts implements AutoCloseable {

    /** Host A's address, where the client in host B reaches the server. */
    static final String SERVER_ADDRESS = "198.18.0.1";
    /** Host B's address, the client's (twohosts.sh's ADDRESS_B). */
    static final String CLIENT_ADDRESS = "198.18.0.2";
    /** Where the script is: ./aldeia says; from the project's root the default is right. */
    static final String SCRIPT_PROPERTY = "aldeia.hosts.script";

    private final Path script;
    private final String id;

    private EmulatedHosts(Path script, String id) {
        this.script = script;
        this.id = id;
    }

    /**
     * Makes the hosts.
     *
     * @throws IOException why they cannot be made here (not root, no iproute2, ...), in the script's words
     */
    static EmulatedHosts up() throws IOException, InterruptedException {
        Path script = Path.of(System.getProperty(SCRIPT_PROPERTY, "scripts/twohosts.sh")).toAbsolutePath();
        String check = run(List.of(script.toString(), "check"));
        if (check != null) {
            throw new IOException("no emulated hosts here: " + check);
        }
        Process up = new ProcessBuilder(script.toString(), "up", "--owner", Long.toString(ProcessHandle.current().pid()))
                .redirectErrorStream(true).start();
        String output = new String(up.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!up.waitFor(60, TimeUnit.SECONDS) || up.exitValue() != 0 || !output.matches("[0-9a-f]{8}")) {
            up.destroyForcibly();
            throw new IOException("twohosts.sh up failed: " + output);
        }
        return new EmulatedHosts(script, output);
    }

    /** The words before node {@code node}'s command: the server (0) in host A, the client (1) in B. */
    List<String> prefix(int node) {
        return List.of(script.toString(), "exec", id, node == 0 ? "A" : "B", "--");
    }

    /** Node {@code node}'s address: the server (0) host A's, the client (1) host B's; for static DECK's nodes file. */
    InetAddress address(int node) throws UnknownHostException {
        return InetAddress.getByName(node == 0 ? SERVER_ADDRESS : CLIENT_ADDRESS);
    }

    /** Removes the hosts and every process left in them. */
    @Override
    public void close() throws IOException {
        try {
            String failure = run(List.of(script.toString(), "down", id));
            if (failure != null) {
                throw new IOException("twohosts.sh down " + id + " failed: " + failure);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while removing the emulated hosts " + id, e);
        }
    }

    /** Runs the command; null when it succeeded, else its output (or exit status). */
    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return String.join(" ", command) + " did not end within 60 s";
        }
        return process.exitValue() == 0 ? null : output.isEmpty() ? "exit status " + process.exitValue() : output;
    }
}
