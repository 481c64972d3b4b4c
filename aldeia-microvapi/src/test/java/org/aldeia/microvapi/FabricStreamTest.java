package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stream scenarios of {@link TwoJvmStreams} on the fabric route: this JVM and a child both
 * on {@code socket_type = SOCKET_VAPI}, VAPI over libfabric (libaldeiafabric.so). The fabric-tcp
 * and fabric-shm surefire executions (aldeia-microvapi/pom.xml) run it, each giving this JVM one
 * of src/test/resources/fabric/*.conf (the Aldeia configuration is fixed once per JVM, so the
 * default execution, whose JVM runs DECK, skips it); the child is given the same file. Skipped
 * too when the build had no libfabric headers and so no libaldeiafabric.so.
 */
class FabricStreamTest extends TwoJvmStreams {

    @BeforeAll
    static void start(@TempDir Path dir) throws Exception {
        String conf = System.getProperty("aldeia.configuration", "");
        assumeTrue(conf.contains("/fabric/"), "runs in the fabric-* surefire executions, with their configuration");
        assumeTrue(FabricStreamTest.class.getResource("/linux-x86-64/libaldeiafabric.so") != null,
                "libaldeiafabric.so was not built: libfabric's headers were missing (apt-get install libfabric-dev)");
        String provider = Path.of(conf).getFileName().toString().replace(".conf", "");
        startChild(dir, Files.readString(Path.of(conf)), "Aldeia: using VAPI over libfabric " + provider);
    }
}
