package org.aldeia.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

/**
 * How the client JVM learns where the server listens: the server writes its address (a port,
 * a socket path, a directory) to a file once it accepts connections, and the client waits for
 * that file. The write is atomic (a rename), so the client never reads half an address.
 */
final class Rendezvous {

    private static final long POLL_MILLIS = 10;

    private final Path file;

    Rendezvous(Path file) {
        this.file = file;
    }

    void publish(String address) throws IOException {
        Path partial = file.resolveSibling(file.getFileName() + ".partial");
        Files.writeString(partial, address, StandardCharsets.UTF_8);
        Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Waits (sleeping, not spinning) for the server's address. */
    String await(Duration limit) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!Files.exists(file)) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the server published no address in " + file + " within "
                        + limit.toSeconds() + " s (did it fail? see its log)");
            }
            Thread.sleep(POLL_MILLIS);
        }
        return Files.readString(file, StandardCharsets.UTF_8).trim();
    }
}
