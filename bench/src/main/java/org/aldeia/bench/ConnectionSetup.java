package org.aldeia.bench;

import static org.aldeia.bench.BenchProtocol.HEADER_BYTES;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

import org.HdrHistogram.Histogram;
import org.aldeia.samples.SocketKind;

/**
 * The connection set-up phase of a socket row: the client opens fresh connections of the row's
 * kind one after the other, each connect + 1-byte echo + close, timed one by one. The server
 * listens on a second port of the same kind and tells the client which over the row's link,
 * so both ends of every connection are made exactly as the row's main connection was.
 */
final class ConnectionSetup {

    private static final String LOOPBACK = InetAddress.getLoopbackAddress().getHostAddress();

    private final SocketKind kind;

    private ConnectionSetup(SocketKind kind) {
        this.kind = kind;
    }

    /** The phase for a row whose connections are sockets; empty for Unix-domain channels and Aeron. */
    static Optional<ConnectionSetup> of(Transport transport) {
        return Links.isSocketTransport(transport)
                ? Optional.of(new ConnectionSetup(Links.socketKind(transport))) : Optional.empty();
    }

    /** Server side, on the client's SETUP frame: listens, answers with the port, serves {@code count} connections. */
    void serve(MessageLink link, int count) throws IOException {
        try (ServerSocket server = kind.serverSocket(0)) {
            byte[] port = Integer.toString(server.getLocalPort()).getBytes(StandardCharsets.US_ASCII);
            byte[] ready = new byte[HEADER_BYTES + port.length];
            System.arraycopy(port, 0, ready, HEADER_BYTES, port.length);
            link.send(ready, BenchProtocol.SETUP_READY, port.length);
            link.flush();
            for (int i = 0; i < count; i++) {
                try (Socket socket = kind.accept(server)) {
                    InputStream in = socket.getInputStream();
                    int b = in.read();
                    if (b < 0) {
                        throw new IOException("set-up connection " + i + " closed before its byte");
                    }
                    OutputStream out = socket.getOutputStream();
                    out.write(b);
                    out.flush();
                    // Wait for the client's close, so the client's close is part of what it times
                    // and the next accept never overlaps this connection.
                    if (in.read() >= 0) {
                        throw new IOException("set-up connection " + i + " sent more than one byte");
                    }
                }
            }
        }
    }

    /**
     * Client side: {@code warmup} untimed connections, then {@code timed} timed ones; the
     * result's percentiles are per connection.
     */
    Measurement measure(MessageLink link, int warmup, int timed) throws IOException {
        byte[] request = new byte[HEADER_BYTES + Integer.BYTES];
        BenchProtocol.putInt(request, HEADER_BYTES, warmup + timed);
        link.send(request, BenchProtocol.SETUP, Integer.BYTES);
        link.flush();
        byte[] ready = new byte[HEADER_BYTES + 16];
        int length = link.receive(ready);
        if (BenchProtocol.type(ready) != BenchProtocol.SETUP_READY) {
            throw new IOException("expected the server's set-up port, got a frame of type " + BenchProtocol.type(ready));
        }
        int port = Integer.parseInt(new String(ready, HEADER_BYTES, length, StandardCharsets.US_ASCII));
        for (int i = 0; i < warmup; i++) {
            connectEchoClose(port, i);
        }
        Histogram connections = new Histogram(3);
        long start = System.nanoTime();
        for (int i = 0; i < timed; i++) {
            long begin = System.nanoTime();
            connectEchoClose(port, warmup + i);
            connections.recordValue(System.nanoTime() - begin);
        }
        return Measurement.distribution(Measurement.Metric.SETUP, 1, System.nanoTime() - start, connections, false);
    }

    private void connectEchoClose(int port, int index) throws IOException {
        try (Socket socket = kind.connect(LOOPBACK, port)) {
            OutputStream out = socket.getOutputStream();
            int sent = index & 0x7f;
            out.write(sent);
            out.flush();
            int echo = socket.getInputStream().read();
            if (echo != sent) {
                throw new IOException("set-up connection " + index + ": sent byte " + sent + ", echo " + echo);
            }
        }
    }
}
