package org.aldeia.microvapi.parity;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.aldeia.microvapi.TestLoopback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The far end of {@link SocketContractTest}: a JVM of its own (Aldeia sockets only exercise
 * their transport between two processes) that makes sockets of one {@link SocketKind} and, on
 * request, acts on them. It prints {@code CONTROL <port>} once listening for requests on a
 * plain JDK control socket, then serves each request in its own thread until it is killed.
 *
 * <p>A request is one UTF string, {@code LISTEN <scenario>} or {@code CONNECT <port> <scenario>}.
 * For LISTEN the far end answers {@code PORT <n>}, accepts one connection on that port and runs
 * the scenario on it; for CONNECT it connects to the test's server socket, answers
 * {@code LOCAL <its local port>} and runs the scenario. Either way it ends with
 * {@code DONE <what it saw>} or {@code FAILED <exception>}, then closes its socket. A
 * {@link Scenario#STALL} waits for {@code RELEASE} from the test on the same control connection.
 */
public final class FarEnd {

    private static final Logger LOG = LoggerFactory.getLogger(FarEnd.class);
    /** A LISTEN whose test never connects must not leave an accept blocked forever. */
    private static final int ACCEPT_TIMEOUT_MILLIS = 20_000;

    /** What the far end does with its connected socket. */
    enum Scenario {
        /** Writes back every byte it reads, until end of stream. */
        ECHO,
        /** Reads until end of stream, then writes the number of bytes read as a long. */
        READ_TO_EOF_THEN_REPLY,
        /** Writes {@link #GREETING} and closes at once. */
        SEND_GREETING_THEN_CLOSE,
        /** Reads until end of stream or an error and reports which, writing nothing. */
        DRAIN,
        /**
         * Reads nothing, so the test's writes fill every buffer on the way, until the test sends
         * {@code RELEASE} (or drops the control connection); then drains like {@link #DRAIN}.
         */
        STALL,
        /**
         * Writes {@link #CROSSING_BYTES} of {@link #crossing()} and flushes before reading anything,
         * then reads as many and reports whether they were the same bytes: with the test doing the
         * same, both ends write before either reads.
         */
        WRITE_THEN_READ
    }

    /** What each end of {@link Scenario#WRITE_THEN_READ} writes: well within loopback TCP's buffers. */
    static final int CROSSING_BYTES = 1 << 20;

    static final byte[] GREETING = "hello".getBytes(StandardCharsets.US_ASCII);

    private FarEnd() {
    }

    public static void main(String[] args) throws IOException {
        SocketKind kind = SocketKind.valueOf(args[0]);
        kind.prepareJvm();
        try (ServerSocket control = new ServerSocket(0, 50, TestLoopback.address())) {
            System.out.println("CONTROL " + control.getLocalPort());
            System.out.flush();
            while (true) {
                Socket request = control.accept();
                Thread serving = new Thread(() -> serve(kind, request), "far-end-request");
                serving.setDaemon(true);
                serving.start();
            }
        }
    }

    private static void serve(SocketKind kind, Socket request) {
        try (request) {
            DataInputStream in = new DataInputStream(request.getInputStream());
            DataOutputStream out = new DataOutputStream(request.getOutputStream());
            String[] words = in.readUTF().split(" ");
            try {
                out.writeUTF("DONE " + (words[0].equals("LISTEN") ? listen(kind, Scenario.valueOf(words[1]), in, out)
                        : connect(kind, Integer.parseInt(words[1]), Scenario.valueOf(words[2]), in, out)));
            } catch (IOException | RuntimeException e) {
                LOG.warn("far end request {} failed", String.join(" ", words), e);
                out.writeUTF("FAILED " + e);
            }
        } catch (IOException e) {
            LOG.warn("far end control connection failed", e);
        }
    }

    private static String listen(SocketKind kind, Scenario scenario, DataInputStream requests,
            DataOutputStream control) throws IOException {
        Socket socket;
        try (ServerSocket server = kind.boundServerSocket(0, 1, TestLoopback.address())) {
            server.setSoTimeout(ACCEPT_TIMEOUT_MILLIS);
            control.writeUTF("PORT " + server.getLocalPort());
            socket = server.accept();
        }
        return run(scenario, socket, requests);
    }

    private static String connect(SocketKind kind, int port, Scenario scenario, DataInputStream requests,
            DataOutputStream control) throws IOException {
        Socket socket = kind.connectedSocket(TestLoopback.address(), port);
        control.writeUTF("LOCAL " + socket.getLocalPort());
        return run(scenario, socket, requests);
    }

    private static String run(Scenario scenario, Socket socket, DataInputStream requests) throws IOException {
        try (socket) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            return switch (scenario) {
                case ECHO -> "echoed " + in.transferTo(out);
                case READ_TO_EOF_THEN_REPLY -> {
                    long count = in.transferTo(OutputStream.nullOutputStream());
                    DataOutputStream reply = new DataOutputStream(out);
                    reply.writeLong(count);
                    reply.flush();
                    yield "read " + count;
                }
                case SEND_GREETING_THEN_CLOSE -> {
                    out.write(GREETING);
                    yield "sent " + GREETING.length;
                }
                case DRAIN -> drain(in);
                case STALL -> {
                    awaitRelease(requests);
                    yield drain(in);
                }
                case WRITE_THEN_READ -> {
                    byte[] mine = crossing();
                    out.write(mine);
                    out.flush();
                    byte[] theirs = in.readNBytes(CROSSING_BYTES);
                    yield Arrays.equals(mine, theirs) ? "crossed " + theirs.length
                            : "crossed " + theirs.length + " bytes, not the ones written";
                }
            };
        }
    }

    /** The bytes both ends of {@link Scenario#WRITE_THEN_READ} write. */
    static byte[] crossing() {
        byte[] bytes = new byte[CROSSING_BYTES];
        new Random(CROSSING_BYTES).nextBytes(bytes);
        return bytes;
    }

    private static void awaitRelease(DataInputStream requests) {
        try {
            requests.readUTF();
        } catch (IOException testGone) {
            // the test dropped the control connection: nothing holds the stall any longer
        }
    }

    private static String drain(InputStream in) {
        long count = 0;
        byte[] buffer = new byte[1024];
        try {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                count += n;
            }
            return "read " + count + " then end of stream";
        } catch (IOException e) {
            return "read " + count + " then " + e.getClass().getSimpleName();
        }
    }
}
