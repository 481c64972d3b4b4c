package org.aldeia.bench;

import static org.aldeia.bench.BenchProtocol.HEADER_BYTES;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.rmi.Remote;
import java.rmi.server.RMIClientSocketFactory;
import java.rmi.server.RMIServerSocketFactory;
import java.rmi.server.UnicastRemoteObject;
import java.util.Optional;
import java.util.Random;

import org.HdrHistogram.Histogram;
import org.aldeia.core.AldeiaRMIClientSocketFactory;
import org.aldeia.core.AldeiaRMIServerSocketFactory;
import org.aldeia.samples.SocketKind;
import org.aldeia.samples.rmi.Reverser;
import org.aldeia.samples.rmi.ReverserService;

/**
 * The RMI phase of a socket row: the RMI sample's remote object ({@link ReverserService})
 * exported by the server JVM, called by the client JVM with int arrays of {@link #INTS}
 * (4 KiB each way), one call after the other, each timed. An Aldeia row exports it with the
 * Aldeia RMI socket factories; the JDK row and the installed rows with RMI's own sockets (which
 * installed Aldeia makes its own where a rule says so). The stub travels over the row's link
 * instead of through a registry, so the phase needs no fixed port.
 */
final class RmiPhase {

    static final int INTS = 1024;
    /** The largest serialized stub the client accepts: a stub is a few hundred bytes. */
    private static final int STUB_LIMIT = 64 * 1024;

    private final boolean aldeiaFactories;

    private RmiPhase(boolean aldeiaFactories) {
        this.aldeiaFactories = aldeiaFactories;
    }

    /** The phase of a row whose connections are sockets; empty for the others. */
    static Optional<RmiPhase> of(Transport transport) {
        return Links.isSocketTransport(transport)
                ? Optional.of(new RmiPhase(Links.socketKind(transport) == SocketKind.ALDEIA)) : Optional.empty();
    }

    /** Server side, on the client's RMI frame: exports the object, sends its stub, serves until RMI_DONE. */
    void serve(MessageLink link) throws IOException {
        ReverserService service = new ReverserService();
        RMIClientSocketFactory clients = aldeiaFactories ? new AldeiaRMIClientSocketFactory() : null;
        RMIServerSocketFactory servers = aldeiaFactories ? new AldeiaRMIServerSocketFactory() : null;
        Remote stub = UnicastRemoteObject.exportObject(service, 0, clients, servers);
        try {
            byte[] bytes = serialized(stub);
            byte[] frame = new byte[HEADER_BYTES + bytes.length];
            System.arraycopy(bytes, 0, frame, HEADER_BYTES, bytes.length);
            link.send(frame, BenchProtocol.RMI_READY, bytes.length);
            link.flush();
            byte[] done = new byte[HEADER_BYTES];
            link.receive(done);
            if (BenchProtocol.type(done) != BenchProtocol.RMI_DONE) {
                throw new IOException("expected the end of the RMI phase, got a frame of type " + BenchProtocol.type(done));
            }
        } finally {
            UnicastRemoteObject.unexportObject(service, true);
        }
    }

    /** Client side: {@code warmup} untimed calls, then {@code timed} timed ones; percentiles per call. */
    Measurement measure(MessageLink link, int warmup, int timed) throws IOException {
        link.send(new byte[HEADER_BYTES], BenchProtocol.RMI, 0);
        link.flush();
        byte[] ready = new byte[HEADER_BYTES + STUB_LIMIT];
        int length = link.receive(ready);
        if (BenchProtocol.type(ready) != BenchProtocol.RMI_READY) {
            throw new IOException("expected the server's RMI stub, got a frame of type " + BenchProtocol.type(ready));
        }
        Reverser reverser = stub(ready, length);
        Random values = new Random(INTS);
        for (int k = 0; k < warmup; k++) {
            call(reverser, values, k);
        }
        Histogram calls = new Histogram(3);
        for (int k = 0; k < timed; k++) {
            long begin = System.nanoTime();
            call(reverser, values, warmup + k);
            calls.recordValue(System.nanoTime() - begin);
        }
        link.send(new byte[HEADER_BYTES], BenchProtocol.RMI_DONE, 0);
        link.flush();
        return Measurement.distribution(Measurement.Metric.RMI, INTS * Integer.BYTES,
                Math.round(calls.getMean() * calls.getTotalCount()), calls, false);
    }

    /** One call with fresh values; a reply that is not their reverse fails the phase. */
    private static void call(Reverser reverser, Random random, int index) throws IOException {
        int[] sent = random.ints(INTS).toArray();
        int[] reply = reverser.reverse(sent);
        if (reply.length != sent.length) {
            throw new IOException("RMI call " + index + ": " + sent.length + " ints sent, " + reply.length + " back");
        }
        for (int i = 0; i < sent.length; i++) {
            if (reply[i] != sent[sent.length - 1 - i]) {
                throw new IOException("RMI call " + index + ": element " + i + " of the reply is not the reverse");
            }
        }
    }

    private static byte[] serialized(Remote stub) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(stub);
        }
        return bytes.toByteArray();
    }

    private static Reverser stub(byte[] frame, int length) throws IOException {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(frame, HEADER_BYTES, length))) {
            return (Reverser) in.readObject();
        } catch (ClassNotFoundException | ClassCastException e) {
            throw new IOException("the server's RMI stub is not a Reverser: " + e, e);
        }
    }
}
