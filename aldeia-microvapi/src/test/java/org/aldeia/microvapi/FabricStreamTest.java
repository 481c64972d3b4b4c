package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.aldeia.core.AldeiaEnvironment;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stream scenarios of {@link TwoJvmStreams} on the fabric route: this JVM and a child both
 * on {@code socket_type = SOCKET_VAPI}, VAPI over libfabric (libaldeiafabric.so). The Aldeia
 * configuration is read once per JVM, so this JVM cannot switch to the fabric route beside the
 * other tests; rather than running both ends in children (which would leave this JVM a mere
 * relay), the fabric-tcp and fabric-shm surefire executions (aldeia-microvapi/pom.xml) run this
 * class in a test JVM of their own, each given one of src/test/resources/fabric/*.conf, and the
 * child is given the same file. The default execution, whose JVM runs DECK, skips it, and so
 * does a build without libfabric's headers, which has no libaldeiafabric.so. Both ends must log
 * the fabric route: a JVM that fell back to DECK would pass every scenario and test nothing.
 */
class FabricStreamTest extends TwoJvmStreams {

    @BeforeAll
    static void start(@TempDir Path dir) throws Exception {
        String conf = System.getProperty("aldeia.configuration", "");
        assumeTrue(conf.contains("/fabric/"), "runs in the fabric-* surefire executions, with their configuration");
        FabricLibrary.assumeBuilt();
        String route = "VAPI over libfabric " + Path.of(conf).getFileName().toString().replace(".conf", "") + " (";
        startChild(dir, Files.readString(Path.of(conf)), "Aldeia: using " + route);
        String here = AldeiaEnvironment.global().transport().description();
        assertTrue(here.startsWith(route), "this JVM runs " + here);
    }
}
