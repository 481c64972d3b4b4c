package org.aldeia.bench;

import static org.aldeia.bench.BenchProtocol.HEADER_BYTES;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;

import org.aldeia.samples.SocketKind;

/**
 * How a socket phase (connection set-up, application) gets its own listener: the client asks
 * with a frame carrying a count, the server listens on a fresh port of the row's socket kind and
 * answers with the port as text. Both ends of the phase's connections are then made exactly as
 * the row's main connection was.
 */
final class PhaseListener {

    /**
     * Where a client connects: the server's address as the client reaches it, the system
     * property {@value #SERVER_PROPERTY} ({@link Bench} sets it for the emulated hosts), else
     * loopback: the server runs on this machine.
     */
    static final String SERVER_PROPERTY = "aldeia.bench.server";
    static final String SERVER = System.getProperty(SERVER_PROPERTY, InetAddress.getLoopbackAddress().getHostAddress());

    private PhaseListener() {
    }

    /** Server side: a listening socket of {@code kind}, its port already sent to the client as {@code readyType}. */
    static ServerSocket listen(SocketKind kind, MessageLink link, int readyType) throws IOException {
        ServerSocket server = kind.serverSocket(0);
        try {
            byte[] port = Integer.toString(server.getLocalPort()).getBytes(StandardCharsets.US_ASCII);
            byte[] ready = new byte[HEADER_BYTES + port.length];
            System.arraycopy(port, 0, ready, HEADER_BYTES, port.length);
            link.send(ready, readyType, port.length);
            link.flush();
            return server;
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** Client side: asks for a phase of {@code count} (frame {@code type}) and returns the port the server listens on. */
    static int ask(MessageLink link, int type, int count, int readyType) throws IOException {
        byte[] request = new byte[HEADER_BYTES + Integer.BYTES];
        BenchProtocol.putInt(request, HEADER_BYTES, count);
        link.send(request, type, Integer.BYTES);
        link.flush();
        byte[] ready = new byte[HEADER_BYTES + 16];
        int length = link.receive(ready);
        if (BenchProtocol.type(ready) != readyType) {
            throw new IOException("expected the server's port (frame type " + readyType + "), got a frame of type "
                    + BenchProtocol.type(ready));
        }
        return Integer.parseInt(new String(ready, HEADER_BYTES, length, StandardCharsets.US_ASCII));
    }
}
