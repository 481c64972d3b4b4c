package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user sees about the transport, each in a fresh JVM because the Aldeia environment is
 * started once per JVM: the log line naming the automatic choice, and the error for a
 * configured transport whose library is not installed.
 */
@Timeout(value = 60, threadMode = ThreadMode.SEPARATE_THREAD)
class TransportSelectionTest {

    private ChildJvm child;

    @AfterEach
    void stopChild() throws Exception {
        if (child != null) {
            child.close();
        }
    }

    @Test
    void withoutConfigurationOrInfinibandTheLogNamesDeckDynamicAuto() throws Exception {
        child = ChildJvm.start(List.of(), PeerMain.class);
        child.awaitLine("PORT "); // the server socket started the environment before listening
        String log = child.stderr();
        assertTrue(log.contains("INFO") && log.contains("MicroVAPI over DECK dynamic/auto (shared memory with peers "
                + "on this host, tcp with others)")
                && log.contains("no configuration file") && log.contains("no InfiniBand library"), log);
    }

    @Test
    void socketVapiWithoutItsLibraryFailsNamingTheLibraryAndWhereItLooked(@TempDir Path dir) throws Exception {
        Path conf = Files.writeString(dir.resolve("aldeia.conf"), "# VAPI on a host without InfiniBand\n"
                + "socket_type = SOCKET_VAPI\n");
        child = ChildJvm.start(List.of("-Daldeia.configuration=" + conf), PeerMain.class);
        String failure = child.awaitLine("FAILED ");
        assertTrue(failure.startsWith("org.aldeia.core.spi.NativeLibraryMissing: "), failure);
        assertTrue(failure.contains("libaldeiaverbs.so") && failure.contains("SOCKET_VAPI"), failure);
        assertTrue(failure.contains("looked in") && failure.contains("jna.library.path")
                && failure.contains("linux-x86-64/libaldeiaverbs.so") && failure.contains("jna.platform.library.path"), failure);
        assertEquals(3, child.waitFor(30), child::describe);
    }
}
