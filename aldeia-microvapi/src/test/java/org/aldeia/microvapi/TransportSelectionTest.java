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
 * started once per JVM: the log line naming the automatic choice and why not VAPI, the error for
 * the fabric route configured on a machine without fabric hardware (this one: libfabric offers
 * only its tcp, udp, sockets and shm providers here), and the automatic choice of the fabric
 * route when fabric_provider names a provider that opens.
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
    void withoutConfigurationOrFabricHardwareTheLogNamesDeckDynamicAutoAndWhy() throws Exception {
        child = ChildJvm.start(List.of(), PeerMain.class);
        child.awaitLine("PORT "); // the server socket started the environment before listening
        String log = child.stderr();
        assertTrue(log.contains("INFO") && log.contains("MicroVAPI over DECK dynamic/auto (shared memory with peers "
                + "on this host, tcp with others)")
                && log.contains("no configuration file") && log.contains("SOCKET_VAPI cannot run here: ")
                && (log.contains("libaldeiafabric.so") || log.contains("are not hardware")), log);
    }

    /**
     * A fabric provider without socket_type: the fabric route for peers on other hosts and DECK
     * for this host's, both libraries in one JVM; a client on this host is served over DECK.
     */
    @Test
    void aFabricProviderWithoutSocketTypeServesOtherHostsAndDeckThisHost(@TempDir Path dir) throws Exception {
        FabricLibrary.assumeBuilt();
        Path conf = Files.writeString(dir.resolve("aldeia.conf"), "# no socket_type: a route per peer\n"
                + "fabric_provider = tcp\nfabric_domain = lo\n");
        List<String> options = List.of("-Daldeia.configuration=" + conf);
        child = ChildJvm.start(options, PeerMain.class);
        String port = child.awaitLine("PORT ");
        String log = child.stderr();
        assertTrue(log.contains("Aldeia: using VAPI over libfabric tcp (domain lo), lid ")
                && log.contains("to peers on other hosts that have that route; MicroVAPI over DECK dynamic/auto")
                && log.contains("chosen automatically per peer: SOCKET_VAPI can run here"), log);

        ChildJvm client = ChildJvm.start(options, RemoteStreamsMain.class, "127.0.0.1", port, "65536", "1048576");
        try {
            assertEquals("OK", client.awaitLine("STREAMS "), client::describe);
            assertEquals(0, client.waitFor(30), client::describe);
            assertTrue(client.stderr().contains("Aldeia: peer 127.0.0.1 over MicroVAPI over DECK dynamic/auto")
                    && client.stderr().contains("(a peer on this host)"), client.stderr());
        } finally {
            client.close();
        }
    }

    @Test
    void socketVapiWithoutFabricHardwareFailsSayingWhatLibfabricOffers(@TempDir Path dir) throws Exception {
        FabricLibrary.assumeBuilt();
        Path conf = Files.writeString(dir.resolve("aldeia.conf"), "# VAPI on a host without fabric hardware\n"
                + "socket_type = SOCKET_VAPI\n");
        child = ChildJvm.start(List.of("-Daldeia.configuration=" + conf), PeerMain.class);
        String failure = child.awaitLine("FAILED ");
        assertTrue(failure.contains("EVAPI_get_hca_hndl") && failure.contains("no libfabric provider for fabric hardware")
                && failure.contains("providers that qualify here: ") && failure.contains("tcp")
                && failure.contains("are not hardware"), failure);
        assertEquals(3, child.waitFor(30), child::describe);
    }
}
