package org.aldeia.samples;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.MessageDigest;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The far end of {@link Soak}: an Aldeia server socket that serves every connection in a thread
 * of its own. A connection carries messages {@code [int length][length bytes]}; the server
 * echoes each byte as it reads it, in writes of random sizes, then sends the SHA-256 of what it
 * read. A length of -1 ends the connection; a connection whose first length is -3 makes the
 * server take its baseline once its other connections ended, and print {@code BASELINE}; one
 * whose first length is -2 stops the server, which waits for its other connections to end and
 * prints {@code SERVER connections=.. bytes=.. errors=.. threads=a->b descriptors=a->b}.
 */
public final class SoakServer {

    private static final AtomicLong CONNECTIONS = new AtomicLong();
    private static final AtomicLong BYTES = new AtomicLong();
    private static final AtomicLong ERRORS = new AtomicLong();
    private static final AtomicLong ACTIVE = new AtomicLong();

    private SoakServer() {
    }

    public static void main(String[] args) throws Exception {
        ProcessCounts before = null;
        try (ServerSocket server = SocketKind.ALDEIA.serverSocket(0)) {
            System.out.println("PORT " + server.getLocalPort());
            System.out.flush();
            while (true) {
                Socket socket = SocketKind.ALDEIA.accept(server);
                DataInputStream in = new DataInputStream(socket.getInputStream());
                int first = in.readInt();
                if (first == -3) {
                    socket.close();
                    awaitIdle();
                    before = ProcessCounts.now();
                    System.out.println("BASELINE " + before);
                    System.out.flush();
                    continue;
                }
                if (first == -2) {
                    socket.close();
                    break;
                }
                ACTIVE.incrementAndGet();
                Thread t = new Thread(() -> serve(socket, in, first), "soak-server");
                t.setDaemon(true);
                t.start();
            }
        }
        awaitIdle();
        ProcessCounts after = ProcessCounts.settled(before);
        System.out.println("SERVER connections=" + CONNECTIONS.get() + " bytes=" + BYTES.get() + " errors="
                + ERRORS.get() + " threads=" + before.threads() + "->" + after.threads() + " descriptors="
                + before.descriptors() + "->" + after.descriptors());
        System.out.flush();
    }

    /** Until every connection's thread has ended. */
    private static void awaitIdle() throws InterruptedException {
        while (ACTIVE.get() > 0) {
            Thread.sleep(50);
        }
    }

    private static void serve(Socket socket, DataInputStream in, int firstLength) {
        CONNECTIONS.incrementAndGet();
        try (socket) {
            OutputStream out = socket.getOutputStream();
            DataOutputStream data = new DataOutputStream(out);
            Random chunks = new Random(socket.getPort());
            byte[] buffer = new byte[64 * 1024];
            for (int length = firstLength; length >= 0; length = in.readInt()) {
                MessageDigest sha = MessageDigest.getInstance("SHA-256");
                for (int left = length; left > 0;) {
                    int n = in.read(buffer, 0, Math.min(left, 1 + chunks.nextInt(buffer.length)));
                    if (n < 0) {
                        throw new EOFException("end of stream with " + left + " bytes of a message to come");
                    }
                    sha.update(buffer, 0, n);
                    out.write(buffer, 0, n);
                    left -= n;
                }
                data.write(sha.digest());
                data.flush();
                BYTES.addAndGet(length);
            }
        } catch (IOException | java.security.NoSuchAlgorithmException | RuntimeException e) {
            ERRORS.incrementAndGet();
            System.err.println("soak server: connection from port " + socket.getPort() + " failed: " + e);
        } finally {
            ACTIVE.decrementAndGet();
        }
    }
}
