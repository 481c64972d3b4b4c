package org.aldeia.microvapi;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TwoJvmTcpStreamTest} over IPv6: the child, DECK tcp only, bound to ::1 and this JVM
 * connecting there, so that DECK tcp itself runs between ::1 and ::1 (issue 12: deck_add_peer
 * could not resolve '0:0:0:0:0:0:0:1').
 */
class TwoJvmTcpStreamIpv6Test extends TwoJvmStreams {

    @BeforeAll
    static void start(@TempDir Path dir) throws Exception {
        startChild(dir, "deck_transport = tcp\n", "): tcp", TestLoopback.ipv6());
    }
}
