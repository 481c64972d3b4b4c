package org.aldeia.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The ping-pong over JDK sockets in one JVM: a server thread and a client. */
@Timeout(60)
class PingPongTest {

    private final ExecutorService serverThread = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopServer() throws InterruptedException {
        serverThread.shutdownNow();
        assertTrue(serverThread.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** A server thread that accepts one connection and runs {@code session} on it. */
    private interface Session<T> {
        T run(Socket socket) throws IOException;
    }

    private <T> Future<T> serveOnce(ServerSocket server, Session<T> session) {
        return serverThread.submit(() -> {
            try (Socket socket = SocketKind.JDK.accept(server)) {
                return session.run(socket);
            }
        });
    }

    @Test
    void everySizeIsEchoedAndMeasured() throws Exception {
        List<Integer> sizes = List.of(0, 1, 1500, 70000);
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            Future<Long> echoed = serveOnce(server, PingPongServer::serve);
            List<PingPongResult> results;
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                results = new PingPongClient(socket).run(sizes, 5, 2, 0);
            }
            assertEquals(sizes, results.stream().map(PingPongResult::size).toList());
            for (PingPongResult result : results) {
                assertEquals(5, result.iterations());
                assertTrue(result.totalMillis() > 0, "time of " + result);
            }
            assertEquals(sizes.size() * (5 + 2), echoed.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void theJitWarmUpRunsUntimedRoundTripsForItsTimeBeforeTheSizes() throws Exception {
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            Future<Long> echoed = serveOnce(server, PingPongServer::serve);
            List<PingPongResult> results;
            long start = System.nanoTime();
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                results = new PingPongClient(socket).run(List.of(100), 5, 2, 200);
            }
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) >= 200);
            assertEquals(5, results.get(0).iterations(), "the warm-up is not timed");
            assertTrue(echoed.get(10, TimeUnit.SECONDS) > 5 + 2, "warm-up round trips were echoed too");
        }
    }

    @Test
    void theJitWarmUpSendsEverySizeInTurn() throws Exception {
        List<Integer> sizes = List.of(100, 3000, 70000);
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            Future<List<Integer>> lengths = serveOnce(server, socket -> {
                DataInputStream in = new DataInputStream(socket.getInputStream());
                OutputStream out = socket.getOutputStream();
                List<Integer> seen = new java.util.ArrayList<>();
                while (true) {
                    byte[] header = new byte[PingPongProtocol.HEADER_BYTES];
                    in.readFully(header);
                    int length = PingPongProtocol.readHeader(header);
                    if (length == PingPongProtocol.END) {
                        return seen;
                    }
                    byte[] body = new byte[length];
                    in.readFully(body);
                    out.write(header);
                    out.write(body);
                    out.flush();
                    seen.add(length);
                }
            });
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                new PingPongClient(socket).run(sizes, 1, 0, 100);
            }
            List<Integer> seen = lengths.get(10, TimeUnit.SECONDS);
            int warm = seen.size() - sizes.size();
            int round = PingPongClient.JIT_WARMUP_ROUND;
            assertTrue(warm >= 2 * sizes.size() * round, "several warm-up rounds in 100 ms: " + warm);
            assertEquals(0, warm % round, "whole turns of " + round + " round trips: " + warm);
            for (int k = 0; k < warm; k++) {
                assertEquals(sizes.get(k / round % sizes.size()), seen.get(k), "warm-up message " + k);
            }
            assertEquals(sizes, seen.subList(warm, seen.size()), "then each size timed once");
        }
    }

    @Test
    void aCorruptedEchoIsReportedWithItsPosition() throws Exception {
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            serveOnce(server, socket -> {
                byte[] frame = new byte[PingPongProtocol.HEADER_BYTES + 100];
                new DataInputStream(socket.getInputStream()).readFully(frame);
                frame[frame.length - 1] ^= 1;
                socket.getOutputStream().write(frame);
                return null;
            });
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                IOException e = assertThrows(IOException.class, () -> new PingPongClient(socket).run(List.of(100), 3, 0, 0));
                assertTrue(e.getMessage().contains("differs") && e.getMessage().contains("frame byte 103"), e.getMessage());
            }
        }
    }

    @Test
    void aRepeatedOldEchoIsNotTakenForANewOne() throws Exception {
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            serveOnce(server, socket -> {
                DataInputStream in = new DataInputStream(socket.getInputStream());
                OutputStream out = socket.getOutputStream();
                byte[] first = new byte[PingPongProtocol.HEADER_BYTES + 10];
                byte[] next = first.clone();
                in.readFully(first);
                out.write(first);
                in.readFully(next);
                out.write(first); // the previous message again instead of the new one
                return null;
            });
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                IOException e = assertThrows(IOException.class, () -> new PingPongClient(socket).run(List.of(10), 3, 0, 0));
                assertTrue(e.getMessage().contains("round trip 1"), e.getMessage());
            }
        }
    }

    @Test
    void theServerReportsAClientThatLeavesInTheMiddleOfAMessage() throws Exception {
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            Future<Long> echoed = serveOnce(server, PingPongServer::serve);
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                byte[] partial = new byte[PingPongProtocol.HEADER_BYTES + 10];
                PingPongProtocol.writeHeader(partial, 100);
                socket.getOutputStream().write(partial);
            }
            Exception e = assertThrows(Exception.class, () -> echoed.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof EOFException, e.toString());
            assertTrue(e.getCause().getMessage().contains("middle of a 100-byte message"), e.getCause().getMessage());
        }
    }

    @Test
    void theProgramsPrintOneCsvRowPerSize() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        PipedInputStream serverStdout = new PipedInputStream();
        PrintStream serverOut = new PrintStream(new PipedOutputStream(serverStdout), true, StandardCharsets.UTF_8);
        Future<Void> server = serverThread.submit(() -> {
            PingPong.run(new String[] {"server", "--port", String.valueOf(port), "--impl", "jdk"}, serverOut);
            return null;
        });
        BufferedReader ready = new BufferedReader(new InputStreamReader(serverStdout, StandardCharsets.UTF_8));
        assertTrue(ready.readLine().contains(MainRunner.READY + " " + port));

        ByteArrayOutputStream clientStdout = new ByteArrayOutputStream();
        PingPong.run(new String[] {"client", "--port", String.valueOf(port), "--impl", "jdk", "--sizes", "0:1000:1000",
                "--large", "65536", "--iterations", "4", "--warmup", "1", "--csv"},
                new PrintStream(clientStdout, true, StandardCharsets.UTF_8));
        server.get(10, TimeUnit.SECONDS);

        List<String> lines = clientStdout.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(PingPongResult.CSV_HEADER, lines.get(0));
        List<PingPongResult> rows = lines.subList(1, lines.size()).stream().map(PingPongResult::fromCsv).toList();
        assertEquals(List.of(0, 1000, 65536), rows.stream().map(PingPongResult::size).toList());
        assertTrue(rows.stream().allMatch(row -> row.iterations() == 4 && row.totalMillis() > 0));
    }
}
