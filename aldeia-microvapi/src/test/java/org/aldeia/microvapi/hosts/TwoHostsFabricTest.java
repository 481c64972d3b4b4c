package org.aldeia.microvapi.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.aldeia.microvapi.ChildJvm;
import org.aldeia.microvapi.FabricLibrary;
import org.aldeia.microvapi.PeerMain;
import org.aldeia.microvapi.RemoteStreamsMain;
import org.aldeia.microvapi.hosts.TwoHosts.Host;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The route per peer between two emulated hosts ({@link TwoHosts}), with libfabric's tcp
 * provider standing in for fabric hardware: a host whose configuration names a fabric provider
 * (and no socket_type) offers its peers on other hosts VAPI over libfabric, and DECK to the
 * others. Both hosts on the fabric: the stream scenarios (64 MiB among them) run over it. A
 * server without it: the client is told so in the bootstrap and takes DECK tcp on the same
 * connection. Needs root and libaldeiafabric.so; skipped otherwise, with the reason.
 */
@Timeout(value = 240, threadMode = ThreadMode.SEPARATE_THREAD)
class TwoHostsFabricTest {

    private static final long MIB = 1 << 20;
    /** How the routes line of a JVM on the fabric and DECK begins. */
    private static final String BOTH_ROUTES = "Aldeia: using VAPI over libfabric tcp (domain ";

    @BeforeEach
    void hostsAndLibraryAreHere() {
        TwoHosts.assumeAvailable();
        FabricLibrary.assumeBuilt();
    }

    /** What {@link #streams} ran: the server's and the client's stderr. */
    private record Logs(String server, String client) {}

    /**
     * A {@link PeerMain} server in {@code serverHost} and the stream scenarios from a client in
     * the other host, with the JVM options each is given; both must finish, the client with OK.
     */
    private static Logs streams(TwoHosts hosts, List<Long> pids, Host serverHost, List<String> serverOptions,
            List<String> clientOptions, long randomBytes, long bulkBytes) throws Exception {
        Host clientHost = serverHost == Host.A ? Host.B : Host.A;
        ChildJvm server = hosts.start(serverHost, serverOptions, PeerMain.class);
        pids.add(server.pid());
        String port = server.awaitLine("PORT ");
        ChildJvm client = hosts.start(clientHost, clientOptions, RemoteStreamsMain.class, serverHost.address(), port,
                Long.toString(randomBytes), Long.toString(bulkBytes));
        pids.add(client.pid());
        assertEquals("OK", client.awaitLine("STREAMS "), client::describe);
        assertEquals(0, client.waitFor(60), client::describe);
        return new Logs(server.stderr(), client.stderr());
    }

    /** The configuration of a host on the fabric: libfabric tcp on its end of the link. */
    private static List<String> onTheFabric(TwoHosts hosts, Host host, Path dir) throws Exception {
        Path conf = Files.writeString(dir.resolve("host-" + host + ".conf"), "# no socket_type: a route per peer\n"
                + "fabric_provider = tcp\nfabric_domain = " + hosts.link(host) + "\n");
        return List.of("-Daldeia.configuration=" + conf);
    }

    @Test
    void twoHostsOnOneFabricStreamOverItAndTheStreamsArriveIntact(@TempDir Path dir) throws Exception {
        List<Long> pids = new ArrayList<>();
        String id;
        try (TwoHosts hosts = TwoHosts.up()) {
            id = hosts.id();
            Logs logs = streams(hosts, pids, Host.A, onTheFabric(hosts, Host.A, dir), onTheFabric(hosts, Host.B, dir),
                    8 * MIB, 64 * MIB);
            String serverLog = logs.server(), clientLog = logs.client();
            assertTrue(serverLog.contains(BOTH_ROUTES + hosts.link(Host.A)) && serverLog.contains("chosen automatically per peer"),
                    serverLog);
            assertTrue(clientLog.contains("Aldeia: peer " + Host.A.address() + " over VAPI over libfabric tcp (domain "
                    + hosts.link(Host.B) + ")") && clientLog.contains("(a peer on another host)"), clientLog);
            assertTrue(serverLog.contains("Aldeia: peer " + Host.B.address() + " over VAPI over libfabric tcp")
                    && serverLog.contains("(the route the client offered)"), serverLog);
        }
        assertEquals(List.of(), TwoHosts.leftovers(id, pids), "left of run " + id);
    }

    @Test
    void aClientOnAFabricTheServerLacksTakesDeckTcpOnTheSameConnection(@TempDir Path dir) throws Exception {
        List<Long> pids = new ArrayList<>();
        String id;
        try (TwoHosts hosts = TwoHosts.up()) {
            id = hosts.id();
            String clientLog = streams(hosts, pids, Host.B, List.of(), onTheFabric(hosts, Host.A, dir), 2 * MIB, 8 * MIB)
                    .client();
            assertTrue(clientLog.contains("Aldeia: peer " + Host.B.address() + " over MicroVAPI over DECK dynamic/auto")
                    && clientLog.contains("(its server has not route \"fabric tcp;ofi_rxm;198.18.0.0/24\")"), clientLog);
        }
        assertEquals(List.of(), TwoHosts.leftovers(id, pids), "left of run " + id);
    }
}
