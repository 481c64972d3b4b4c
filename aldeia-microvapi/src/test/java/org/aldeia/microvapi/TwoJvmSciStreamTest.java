package org.aldeia.microvapi;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child with no configuration on this host: DECK auto reaches it through shared memory.
 */
class TwoJvmSciStreamTest extends TwoJvmStreams {

    @BeforeAll
    static void start(@TempDir Path dir) throws Exception {
        startChild(dir, null, "): sci (same host: shared memory");
    }
}
