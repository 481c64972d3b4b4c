package org.aldeia.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Optional;
import java.util.function.Consumer;

import org.HdrHistogram.Histogram;
import org.aldeia.samples.SocketKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection set-up phase of a socket row: the client opens fresh connections of the row's
 * kind one after the other, each connect + 1-byte echo + close, timed one by one, to a
 * {@link PhaseListener} of the server.
 */
final class ConnectionSetup {

    private static final Logger log = LoggerFactory.getLogger(ConnectionSetup.class);

    /** The byte of the connection that ends the phase early: the server serves no more. */
    static final int LAST = 0x80;

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
        try (ServerSocket server = PhaseListener.listen(kind, link, BenchProtocol.SETUP_READY)) {
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
                    if (b == LAST) {
                        return;
                    }
                }
            }
        }
    }

    /**
     * Client side: {@code warmup} untimed connections, {@code timed} timed ones (SETUP), untimed
     * ones up to {@code steadyAfter} in all, and {@code timed} timed ones again (SETUP_STEADY);
     * the percentiles are per connection, each block reported when it is done. Both blocks,
     * because a program that opens a connection per request meets the first after a second and
     * the second from a few seconds on. The steady block is skipped when the connections before
     * it would outlast {@code budgetSeconds} at the first block's pace (see
     * {@link Pacing#setupSteadyBudgetSeconds}).
     */
    void measure(MessageLink link, int warmup, int timed, int steadyAfter, double budgetSeconds,
            Consumer<Measurement> report) throws IOException {
        int port = PhaseListener.ask(link, BenchProtocol.SETUP, steadyAfter + timed, BenchProtocol.SETUP_READY);
        untimed(port, 0, warmup);
        Measurement early = timed(port, warmup, timed, Measurement.Metric.SETUP);
        report.accept(early);
        int untimedCount = steadyAfter - warmup - timed;
        double untimedSeconds = early.mean() * 1e-6 * untimedCount;
        if (untimedSeconds > budgetSeconds) {
            log.warn("set-up: the steady block is skipped: {} connections at {} µs each would take {} s (budget {} s)",
                    untimedCount, Math.round(early.mean()), Math.round(untimedSeconds), Math.round(budgetSeconds));
            connectEchoClose(port, -1, LAST);
            return;
        }
        untimed(port, warmup + timed, steadyAfter);
        report.accept(timed(port, steadyAfter, timed, Measurement.Metric.SETUP_STEADY));
    }

    private void untimed(int port, int from, int to) throws IOException {
        for (int i = from; i < to; i++) {
            connectEchoClose(port, i, i & 0x7f);
        }
    }

    private Measurement timed(int port, int from, int count, Measurement.Metric metric) throws IOException {
        Histogram connections = new Histogram(3);
        long start = System.nanoTime();
        for (int i = from; i < from + count; i++) {
            long begin = System.nanoTime();
            connectEchoClose(port, i, i & 0x7f);
            connections.recordValue(System.nanoTime() - begin);
        }
        return Measurement.distribution(metric, 1, System.nanoTime() - start, connections, false);
    }

    /**
     * Connection {@code index} (-1: the last), its byte {@code sent}: the index mod 128, which
     * is never {@link #LAST}, or LAST itself.
     */
    private void connectEchoClose(int port, int index, int sent) throws IOException {
        try (Socket socket = kind.connect(PhaseListener.SERVER, port)) {
            OutputStream out = socket.getOutputStream();
            out.write(sent);
            out.flush();
            int echo = socket.getInputStream().read();
            if (echo != sent) {
                throw new IOException("set-up connection " + index + ": sent byte " + sent + ", echo " + echo);
            }
        }
    }
}
