package org.aldeia.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InvalidClassException;
import java.io.ObjectOutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The serialization benchmark over JDK sockets in one JVM: a receiver thread and a sender. */
@Timeout(60)
class SerializationTest {

    private final ExecutorService receiverThread = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopReceiver() throws InterruptedException {
        receiverThread.shutdownNow();
        assertTrue(receiverThread.awaitTermination(10, TimeUnit.SECONDS));
    }

    private Future<Long> receiveOnce(ServerSocket server) {
        return receiverThread.submit(() -> {
            try (Socket socket = SocketKind.JDK.accept(server)) {
                return SerializationReceiver.serve(socket);
            }
        });
    }

    @Test
    void arraysOfTenToAThousandArriveIntactAndAreTimed() throws Exception {
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            Future<Long> received = receiveOnce(server);
            List<SerializationResult> results;
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                results = new SerializationSender(socket).run(Serialization.cases(3, 4, 1), 1, 0);
            }
            assertEquals(List.of(10, 100, 1000), results.stream().map(SerializationResult::elements).toList());
            for (SerializationResult result : results) {
                assertEquals(4, result.runs());
                assertTrue(result.millisPerRun() > 0, "time of " + result);
            }
            assertEquals(3 * (4 + 1), received.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void theJitWarmUpSendsCheckedArraysBeforeAnythingIsTimed() throws Exception {
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            Future<Long> received = receiveOnce(server);
            List<SerializationResult> results;
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                results = new SerializationSender(socket).run(Serialization.cases(2, 3, 1), 0, 200);
            }
            assertEquals(List.of(10, 100), results.stream().map(SerializationResult::elements).toList());
            // The receiver checked every array it got: the timed ones and, before them, the warm-up's.
            assertTrue(received.get(10, TimeUnit.SECONDS) > 2 * 3 + 10, "arrays received: " + received.get());
        }
    }

    @Test
    void aCorruptedArrayFailsTheReceiverAndThenTheSender() throws Exception {
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            Future<Long> received = receiveOnce(server);
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                int[] array = IntArrayPattern.create(50);
                array[7]++;
                ObjectOutputStream objects = new ObjectOutputStream(socket.getOutputStream());
                objects.writeObject(array);
                objects.flush();
                assertEquals(SerializationReceiver.ACK, socket.getInputStream().read());
                ExecutionException e = assertThrows(ExecutionException.class, () -> received.get(10, TimeUnit.SECONDS));
                assertTrue(e.getCause().getMessage().contains("int[50] differs from what was sent at index 7"),
                        e.getCause().getMessage());
                assertEquals(-1, socket.getInputStream().read(), "the receiver closed the connection");
            }
        }
    }

    @Test
    void theReceiverRefusesObjectsOtherThanIntArrays() throws Exception {
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            Future<Long> received = receiveOnce(server);
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                try (ObjectOutputStream objects = new ObjectOutputStream(bytes)) {
                    objects.writeObject(new ArrayList<>(List.of(1, 2)));
                }
                // One write of a few hundred bytes: it lands in the socket buffer before the
                // receiver, which refuses the class half-way through, closes the connection.
                socket.getOutputStream().write(bytes.toByteArray());
                ExecutionException e = assertThrows(ExecutionException.class, () -> received.get(10, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof InvalidClassException, e.getCause().toString());
            }
        }
    }

    @Test
    void aReceiverThatLeavesFailsTheSender() throws Exception {
        try (ServerSocket server = SocketKind.JDK.serverSocket(0)) {
            receiverThread.submit(() -> {
                SocketKind.JDK.accept(server).close();
                return null;
            });
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", server.getLocalPort())) {
                // EOF, reset or broken pipe, depending on how far the first write got: always an IOException.
                assertThrows(IOException.class,
                        () -> new SerializationSender(socket).run(Serialization.cases(1, 1, 1), 0, 0));
            }
        }
    }

    @Test
    void bigArraysUseTheBigRunCount() {
        List<SerializationSender.Case> cases = Serialization.cases(7, 100, 10);
        assertEquals(List.of(10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000),
                cases.stream().map(SerializationSender.Case::elements).toList());
        assertEquals(List.of(100, 100, 100, 100, 100, 10, 10),
                cases.stream().map(SerializationSender.Case::runs).toList());
    }

    @Test
    void thePatternFindsTheFirstWrongElement() {
        int[] array = IntArrayPattern.create(1000);
        assertEquals(-1, IntArrayPattern.firstMismatch(array));
        array[999] = ~array[999];
        array[640] = ~array[640];
        assertEquals(640, IntArrayPattern.firstMismatch(array));
    }
}
