package org.aldeia.microvapi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.aldeia.core.config.AldeiaConfiguration;

/**
 * Waits until a connection that started on TCP (upgrade_after, the default) has moved to its
 * route: tests of a route's faults and attacks need the connection on it, and the TCP connection
 * a client made to the server's port closes once both directions have moved.
 */
public final class MovedOffTcp {

    /** Runs a command (here, or in an emulated host) and returns its standard output. */
    @FunctionalInterface
    public interface Shell {
        String run(String... command) throws IOException;
    }

    private MovedOffTcp() {
    }

    /** Whether this JVM's connections start on TCP (upgrade_after > 0, the default), not on their route. */
    public static boolean connectionsStartOnTcp() throws IOException {
        return AldeiaConfiguration.load().upgradeAfter() > 0;
    }

    /** Waits, at most 10 s, until {@code shell}'s host holds no established TCP connection to {@code address:port}. */
    public static void await(Shell shell, String address, int port) throws Exception {
        String open = "";
        for (long deadline = System.nanoTime() + 10_000_000_000L; System.nanoTime() - deadline < 0; Thread.sleep(50)) {
            String host = address.contains(":") ? "[" + address + "]" : address; // ss's form of an IPv6 address
            open = shell.run("ss", "-tnH", "state", "established", "dst", host + ":" + port).strip();
            if (open.isEmpty()) {
                return;
            }
        }
        throw new AssertionError("still on TCP to " + address + ":" + port + " after 10 s:\n" + open);
    }

    /** A command run in this host. */
    public static String here(String... command) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (process.waitFor() != 0) {
                throw new IOException(String.join(" ", command) + " failed: " + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        return output;
    }
}
