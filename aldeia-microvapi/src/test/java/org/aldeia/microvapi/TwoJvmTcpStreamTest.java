package org.aldeia.microvapi;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child whose DECK is tcp only: this JVM (auto) reaches it over tcp, and receives from it
 * through the queue its shared-memory retrieve also scans.
 */
class TwoJvmTcpStreamTest extends TwoJvmStreams {

    @BeforeAll
    static void start(@TempDir Path dir) throws Exception {
        startChild(dir, "deck_transport = tcp\n", "): tcp");
    }
}
