package org.aldeia.core;

import java.io.IOException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** Tests that run their sockets in a fresh environment over the in-memory transport. */
abstract class InMemoryEnvironmentTest {

    AldeiaEnvironment environment;

    @BeforeEach
    void startEnvironment() {
        environment = TestEnvironments.inMemory();
    }

    @AfterEach
    void closeEnvironment() throws IOException {
        environment.close();
    }
}
