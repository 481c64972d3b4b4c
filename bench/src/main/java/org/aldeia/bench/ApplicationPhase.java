package org.aldeia.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.HdrHistogram.Histogram;
import org.aldeia.samples.SocketKind;

/**
 * The application phase of a socket row (issue 11): what a request/response program sees rather
 * than a micro-benchmark. {@link #CONNECTIONS} connections, each with its own calling thread and
 * reader thread ({@link AppConnection}); requests and responses are objects through
 * ObjectOutputStream over buffered streams, with payloads of 1 to 8 KiB; the server is a thread
 * per connection; and a {@link BusyJvm} computes on the machine meanwhile. Each call (write,
 * flush, the reader's read, the hand-over to the caller) is timed as one round trip.
 */
final class ApplicationPhase {

    static final int CONNECTIONS = 4;
    static final int MIN_PAYLOAD = 1024;
    /** The cell's size: the largest payload of the phase (they range from 1 KiB to this). */
    static final int MAX_PAYLOAD = 8 * 1024;

    private final SocketKind kind;
    private final boolean busyJvm;

    ApplicationPhase(SocketKind kind, boolean busyJvm) {
        this.kind = kind;
        this.busyJvm = busyJvm;
    }

    /** The phase of a row whose connections are sockets, with its busy JVM; empty for the others. */
    static Optional<ApplicationPhase> of(Transport transport) {
        return Links.isSocketTransport(transport)
                ? Optional.of(new ApplicationPhase(Links.socketKind(transport), true)) : Optional.empty();
    }

    /** Server side, on the client's APPLICATION frame: serves {@code connections} connections until each closes. */
    void serve(MessageLink link, int connections) throws IOException {
        ExecutorService threads = Executors.newFixedThreadPool(connections);
        try (ServerSocket server = PhaseListener.listen(kind, link, BenchProtocol.APPLICATION_READY)) {
            List<Future<Long>> served = new ArrayList<>();
            for (int i = 0; i < connections; i++) {
                Socket socket = kind.accept(server);
                served.add(threads.submit(() -> answerUntilClosed(socket)));
            }
            for (Future<Long> connection : served) {
                connection.get();
            }
        } catch (ExecutionException e) {
            throw new IOException("an application connection failed at the server: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted serving the application phase", e);
        } finally {
            threads.shutdownNow();
        }
    }

    /** One connection's server thread: answers every request until the client closes; returns how many. */
    private static long answerUntilClosed(Socket socket) throws IOException, ClassNotFoundException {
        long answered = 0;
        try (socket; ObjectInputStream in = new ObjectInputStream(new BufferedInputStream(socket.getInputStream()))) {
            ObjectOutputStream out = new ObjectOutputStream(new BufferedOutputStream(socket.getOutputStream()));
            out.flush();
            while (true) {
                AppMessages.Request request;
                try {
                    request = (AppMessages.Request) in.readObject();
                } catch (EOFException end) {
                    return answered;
                }
                out.writeObject(AppMessages.answer(request));
                out.reset();
                out.flush();
                answered++;
            }
        }
    }

    /**
     * Client side: {@code warmup} untimed calls then {@code timed} timed ones, spread over the
     * connections, which call at the same time; percentiles are per call.
     */
    Measurement measure(MessageLink link, int warmup, int timed) throws IOException {
        int port = PhaseListener.ask(link, BenchProtocol.APPLICATION, CONNECTIONS, BenchProtocol.APPLICATION_READY);
        Process busy = busyJvm ? BusyJvm.start() : null;
        List<AppConnection> connections = new ArrayList<>();
        ExecutorService callers = Executors.newFixedThreadPool(CONNECTIONS);
        try {
            for (int i = 0; i < CONNECTIONS; i++) {
                connections.add(new AppConnection(kind.connect(PhaseListener.SERVER, port), "app-" + i));
            }
            CyclicBarrier timedStart = new CyclicBarrier(CONNECTIONS);
            List<Future<Histogram>> calls = new ArrayList<>();
            for (int i = 0; i < CONNECTIONS; i++) {
                AppConnection connection = connections.get(i);
                int index = i;
                calls.add(callers.submit(() -> callMany(connection, index, share(warmup, index), share(timed, index),
                        timedStart)));
            }
            Histogram all = new Histogram(3);
            for (Future<Histogram> histogram : calls) {
                all.add(histogram.get());
            }
            // The calls overlap, so the phase's wall time is no sum of calls: the mean is the histogram's.
            long callNanos = Math.round(all.getMean() * all.getTotalCount());
            return Measurement.distribution(Measurement.Metric.APPLICATION, MAX_PAYLOAD, callNanos, all, false);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException("an application call failed", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted in the application phase", e);
        } finally {
            callers.shutdownNow();
            closeAll(connections);
            if (busy != null) {
                stopBusy(busy);
            }
        }
    }

    /** The calls of one connection; the timed ones start when every connection has warmed up. */
    private static Histogram callMany(AppConnection connection, int index, int warmup, int timed, CyclicBarrier timedStart)
            throws IOException, InterruptedException, BrokenBarrierException {
        Random sizes = new Random(index);
        long id = 0;
        for (int k = 0; k < warmup; k++) {
            connection.call(request(id++, sizes));
        }
        timedStart.await();
        Histogram histogram = new Histogram(3);
        for (int k = 0; k < timed; k++) {
            AppMessages.Request request = request(id++, sizes);
            long begin = System.nanoTime();
            connection.call(request);
            histogram.recordValue(System.nanoTime() - begin);
        }
        return histogram;
    }

    private static AppMessages.Request request(long id, Random sizes) {
        byte[] payload = new byte[MIN_PAYLOAD + sizes.nextInt(MAX_PAYLOAD - MIN_PAYLOAD + 1)];
        sizes.nextBytes(payload);
        return new AppMessages.Request(id, payload);
    }

    /** Connection {@code index}'s part of {@code total} calls (the first ones take the remainder). */
    static int share(int total, int index) {
        return total / CONNECTIONS + (index < total % CONNECTIONS ? 1 : 0);
    }

    private static void closeAll(List<AppConnection> connections) throws IOException {
        IOException failure = null;
        for (AppConnection connection : connections) {
            try {
                connection.close();
            } catch (IOException e) {
                failure = failure == null ? e : failure;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static void stopBusy(Process busy) {
        try {
            BusyJvm.stop(busy);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            busy.destroyForcibly();
        }
    }
}
