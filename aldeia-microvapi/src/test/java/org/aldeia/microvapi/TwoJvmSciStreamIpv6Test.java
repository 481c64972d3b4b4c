package org.aldeia.microvapi;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TwoJvmSciStreamTest} over IPv6: the child, with no configuration, bound to ::1 and this
 * JVM connecting there; the same host is shared memory whatever the address family.
 */
class TwoJvmSciStreamIpv6Test extends TwoJvmStreams {

    @BeforeAll
    static void start(@TempDir Path dir) throws Exception {
        startChild(dir, null, "): sci (same host: shared memory", TestLoopback.ipv6());
    }
}
