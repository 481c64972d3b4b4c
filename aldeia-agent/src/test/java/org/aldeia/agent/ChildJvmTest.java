package org.aldeia.agent;

import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The frame of every end-to-end test of the agent: child JVMs logging into a temporary
 * directory, all ended after each test, and no DECK segment of theirs left in /dev/shm.
 */
abstract class ChildJvmTest {

    @TempDir
    Path work;
    ChildJvms jvms;

    @BeforeEach
    void logsInTheTempDirectory() {
        jvms = new ChildJvms(work);
    }

    @AfterEach
    void endChildren() throws Exception {
        jvms.endAll();
        jvms.assertNoSegmentsLeft();
    }
}
