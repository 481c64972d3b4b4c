package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.aldeia.core.AldeiaSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * 10 000 Aldeia sockets open at once in one JVM, each usable, on the transport this JVM's
 * configuration selects (shared memory in the eager-shm execution; tcp in the parity-deck-tcp
 * one), set up on it at connect (upgrade_after = 0; skipped where connections start on TCP,
 * where each holds its TCP connection's descriptor until it moves, as java.net's would): the
 * threads of both JVMs do not grow with the sockets (no thread per socket or queue pair: the
 * engine's two and DECK's per peer process), nor do their descriptors (none per socket once
 * connected); the footprint per idle socket is logged for the README.
 */
@Timeout(value = 300, threadMode = ThreadMode.SEPARATE_THREAD)
class ManySocketsTest {

    private static final Logger LOG = LoggerFactory.getLogger(ManySocketsTest.class);
    static final int SOCKETS = 10_000;
    /** Threads and descriptors that may come and go in a JVM regardless of the sockets. */
    private static final int JITTER = 8;

    @BeforeAll
    static void connectionsAreSetUpOnTheRouteAtConnect() throws IOException {
        assumeFalse(MovedOffTcp.connectionsStartOnTcp(),
                "connections start on TCP here (upgrade_after > 0), a descriptor each until they move");
    }

    @Test
    void tenThousandSocketsAtOnceEachUsableWithoutAThreadOrDescriptorEach() throws Exception {
        List<String> options = ChildJvm.thisJvmsConfiguration();
        options.add("-Xss256k");
        try (ChildJvm child = ChildJvm.start(options, ManySocketsMain.class, Integer.toString(SOCKETS))) {
            int port = Integer.parseInt(child.awaitLine("PORT "));
            List<AldeiaSocket> sockets = new ArrayList<>(SOCKETS);
            sockets.add(new AldeiaSocket(InetAddress.getLoopbackAddress(), port));   // the peer is known
            ProcessResources before = ProcessResources.of(ProcessHandle.current().pid());
            ProcessResources childBefore = ProcessResources.of(child.pid());
            long rssBefore = rssKib(ProcessHandle.current().pid());
            long start = System.nanoTime();
            while (sockets.size() < SOCKETS) {
                sockets.add(new AldeiaSocket(InetAddress.getLoopbackAddress(), port));
            }
            long connectMillis = (System.nanoTime() - start) / 1_000_000;
            child.awaitLine("ACCEPTED");
            ProcessResources open = ProcessResources.of(ProcessHandle.current().pid());
            ProcessResources childOpen = ProcessResources.of(child.pid());
            long rssOpen = rssKib(ProcessHandle.current().pid());
            for (int i = 0; i < SOCKETS; i++) {
                sockets.get(i).getOutputStream().write(i);
                sockets.get(i).getOutputStream().flush();
            }
            for (int i = 0; i < SOCKETS; i++) {
                assertEquals((i + 1) & 0xff, sockets.get(i).getInputStream().read(), "socket " + i);
            }
            child.awaitLine("ECHOED");
            LOG.info("{} sockets: connected in {} ms ({} us each); this JVM {} -> {} threads, {} -> {} descriptors, "
                    + "RSS {} -> {} KiB ({} bytes per socket); the peer {} -> {} threads, {} -> {} descriptors",
                    SOCKETS, connectMillis, connectMillis * 1000 / SOCKETS, before.threads(), open.threads(),
                    before.descriptors(), open.descriptors(), rssBefore, rssOpen,
                    (rssOpen - rssBefore) * 1024 / SOCKETS, childBefore.threads(), childOpen.threads(),
                    childBefore.descriptors(), childOpen.descriptors());
            assertTrue(open.threads() <= before.threads() + JITTER, before + " -> " + open);
            assertTrue(open.descriptors() <= before.descriptors() + JITTER, before + " -> " + open);
            assertTrue(childOpen.threads() <= childBefore.threads() + JITTER, childBefore + " -> " + childOpen);
            assertTrue(childOpen.descriptors() <= childBefore.descriptors() + JITTER, childBefore + " -> " + childOpen);
            for (AldeiaSocket socket : sockets) {
                socket.close();
            }
            child.awaitLine("CLOSED");
            assertEquals(0, child.waitFor(60));
        }
    }

    private static long rssKib(long pid) throws IOException {
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IOException("no VmRSS for process " + pid);
    }
}
