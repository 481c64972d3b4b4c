package org.aldeia.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The application phase's client connection against servers that answer right, wrong, or not at all. */
@Timeout(30)
class AppConnectionTest {

    private final ExecutorService serverThread = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopServer() throws InterruptedException {
        serverThread.shutdownNow();
        assertTrue(serverThread.awaitTermination(10, TimeUnit.SECONDS), "the server thread did not end");
    }

    @Test
    void aCorrectAnswerCompletesTheCall() throws Exception {
        try (ServerSocket server = listen(AppMessages::answer, 2); AppConnection connection = connect(server)) {
            connection.call(new AppMessages.Request(0, new byte[] {1, 2, 3}));
            connection.call(new AppMessages.Request(1, new byte[2048]));
        }
    }

    @Test
    void aResponseThatDoesNotMatchItsRequestFailsTheCall() throws Exception {
        UnaryOperator<AppMessages.Response> flipFirstByte = r -> {
            byte[] payload = r.payload().clone();
            payload[0] ^= 1;
            return new AppMessages.Response(r.id(), r.crc(), payload);
        };
        try (ServerSocket server = listen(r -> flipFirstByte.apply(AppMessages.answer(r)), 1)) {
            AppConnection connection = connect(server);
            IOException e = assertThrows(IOException.class, () -> connection.call(new AppMessages.Request(7, new byte[16])));
            assertEquals("the response to request 7 does not match it", e.getMessage());
            connection.close();
        }
    }

    @Test
    void aServerThatHangsUpFailsTheWaitingCallAtOnce() throws Exception {
        try (ServerSocket server = listen(r -> null, 1)) { // reads one request, then closes
            AppConnection connection = connect(server);
            long start = System.nanoTime();
            assertThrows(IOException.class, () -> connection.call(new AppMessages.Request(0, new byte[16])));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "failed on the hang-up, not the limit");
            assertThrows(IOException.class, connection::close, "close reports the reader's failure");
        }
    }

    @Test
    void sharesAddUpToTheTotalAndDifferByAtMostOne() {
        for (int total : new int[] {0, 3, 4, 9, 10_000}) {
            int sum = 0;
            for (int i = 0; i < ApplicationPhase.CONNECTIONS; i++) {
                int share = ApplicationPhase.share(total, i);
                assertTrue(Math.abs(share - total / ApplicationPhase.CONNECTIONS) <= 1, total + ": " + share);
                sum += share;
            }
            assertEquals(total, sum);
        }
        assertFalse(ApplicationPhase.share(3, ApplicationPhase.CONNECTIONS - 1) > 0, "the remainder goes to the first ones");
    }

    /** A server for one connection: answers {@code requests} requests with {@code answer} (null: hang up). */
    private ServerSocket listen(Function<AppMessages.Request, AppMessages.Response> answer, int requests)
            throws IOException {
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        serverThread.submit(() -> {
            try (Socket socket = server.accept();
                    ObjectInputStream in = new ObjectInputStream(socket.getInputStream());
                    ObjectOutputStream out = new ObjectOutputStream(socket.getOutputStream())) {
                for (int i = 0; i < requests; i++) {
                    AppMessages.Response response = answer.apply((AppMessages.Request) in.readObject());
                    if (response == null) {
                        return null;
                    }
                    out.writeObject(response);
                    out.flush();
                }
                in.read(); // until the client closes
            }
            return null;
        });
        return server;
    }

    private static AppConnection connect(ServerSocket server) throws IOException {
        return new AppConnection(new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort()), "test");
    }
}
