package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.aldeia.core.memory.InMemoryTransportProvider;
import org.aldeia.core.spi.EndpointSizes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the two bootstrap fuzz tests share: a server and a client environment over the in-memory
 * transport, the endpoint sizes they use, and a run of a {@link SeededFuzzer} target after which
 * no endpoint may be left open.
 */
abstract class BootstrapFuzzing {

    final EndpointSizes sizes = new EndpointSizes(TestEnvironments.SEND_REGION, 4);
    AldeiaEnvironment server;
    AldeiaEnvironment client;

    @BeforeEach
    void startEnvironments() {
        server = TestEnvironments.inMemory();
        client = TestEnvironments.inMemory();
    }

    @AfterEach
    void closeEnvironments() throws IOException {
        server.close();
        client.close();
    }

    /** Runs fuzz target {@code name} with {@code target}; every endpoint it made must be closed after. */
    static void fuzz(String name, SeededFuzzer.Target target) throws Exception {
        int endpoints = InMemoryTransportProvider.openEndpoints();
        long runs = new SeededFuzzer(name).run(target);
        assertTrue(runs > 0);
        assertEquals(endpoints, InMemoryTransportProvider.openEndpoints(), "endpoints left after " + runs + " inputs");
    }
}
