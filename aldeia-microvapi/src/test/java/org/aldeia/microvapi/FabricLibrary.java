package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.config.AldeiaConfigurationException;

/**
 * Whether this build has the fabric route's library: native-c builds libaldeiafabric.so only
 * when libfabric's headers are installed, so the tests that run the route skip themselves
 * without it, saying why, instead of failing on a machine that never built it.
 */
public final class FabricLibrary {

    private FabricLibrary() {
    }

    /** Skips the test when libaldeiafabric.so is not in the native jar. */
    public static void assumeBuilt() {
        assumeTrue(FabricLibrary.class.getResource("/linux-x86-64/libaldeiafabric.so") != null,
                "libaldeiafabric.so was not built: libfabric's headers were missing (apt-get install libfabric-dev)");
    }

    /** As {@link #assumeBuilt()}, when this JVM's configuration puts it on the fabric route. */
    public static void assumeBuiltIfConfigured() throws AldeiaConfigurationException {
        if (AldeiaConfiguration.load().socketType().filter(AldeiaConfiguration.SOCKET_VAPI::equals).isPresent()) {
            assumeBuilt();
        }
    }
}
