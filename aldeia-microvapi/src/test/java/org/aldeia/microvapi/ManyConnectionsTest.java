package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.aldeia.core.AldeiaSocket;
import org.aldeia.microvapi.PeerMain.Command;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * Several Aldeia sockets between the same two JVMs: at the same time, each carrying its own
 * content both ways, and one after another, each a new connection with a new socket id.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class ManyConnectionsTest {

    private static ChildJvm child;
    private static int port;

    @BeforeAll
    static void startChild() throws Exception {
        child = ChildJvm.start(List.of(), PeerMain.class);
        port = Integer.parseInt(child.awaitLine("PORT "));
    }

    @AfterAll
    static void stopChild() throws Exception {
        if (child != null) {
            child.close();
        }
    }

    @Test
    void fourSocketsAtOnceEachCarryTheirOwnStreamBothWays() throws Exception {
        int sockets = 4;
        long total = 6 << 20;
        ExecutorService pool = Executors.newFixedThreadPool(sockets);
        try {
            List<Future<Void>> exchanges = new ArrayList<>();
            for (int i = 0; i < sockets; i++) {
                long seed = 100L * (i + 1); // the child answers with seed + 1: no two streams alike
                exchanges.add(pool.submit(() -> {
                    try (AldeiaSocket socket = PeerMain.request(port, Command.EXCHANGE, seed, total)) {
                        StreamCheck.exchange(socket, seed, total);
                    }
                    return null;
                }));
            }
            for (Future<Void> exchange : exchanges) {
                exchange.get(); // rethrows the first mismatch or I/O error
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void sequentialConnectionsEachGetANewSocketId() throws Exception {
        int previousId = -1;
        for (int i = 0; i < 10; i++) {
            try (AldeiaSocket socket = PeerMain.request(port, Command.SINK, 200 + i, 100_000 + i)) {
                assertTrue(socket.id() > previousId, "socket id " + socket.id() + " after " + previousId);
                previousId = socket.id();
                PeerMain.sendToSink(socket, 200 + i, 100_000 + i);
            }
        }
    }
}
