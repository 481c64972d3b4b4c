package org.aldeia.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** ConnectRate over JDK sockets in one JVM: a server thread and the client. */
class ConnectRateTest {

    private final ExecutorService serverThread = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopServer() throws InterruptedException {
        serverThread.shutdownNow();
        assertTrue(serverThread.awaitTermination(10, TimeUnit.SECONDS));
    }

    @Test
    void timesEachConnectionAndStopsTheServer() throws Exception {
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            Future<?> served = serverThread.submit(() -> {
                ConnectRate.serve(SocketKind.JDK, server);
                return null;
            });
            long[] nanos = ConnectRate.measure(SocketKind.JDK, "127.0.0.1", server.getLocalPort(), 5, 2);
            assertEquals(5, nanos.length);
            for (long n : nanos) {
                assertTrue(n > 0, "a connection took " + n + " ns");
            }
            served.get(10, TimeUnit.SECONDS); // the last connection stopped it
        }
    }

    @Test
    void summaryGivesMedianAndPercentilesInMilliseconds() {
        long[] nanos = new long[100];
        for (int i = 0; i < nanos.length; i++) {
            nanos[i] = (i + 1) * 10_000L; // 0.01 .. 1.00 ms
        }
        String line = ConnectRate.summary(SocketKind.ALDEIA, nanos);
        assertTrue(line.contains("(aldeia): 100 connections"), line);
        assertTrue(line.contains("median 0.500 ms, p90 0.900 ms, p99 0.990 ms, mean 0.505 ms"), line);
    }

    @Test
    void aClientOrServerMustBeNamed() {
        assertThrows(IllegalArgumentException.class, () -> ConnectRate.run(new String[] {"--impl", "jdk"}, System.out));
    }
}
