package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.aldeia.core.AldeiaServerSocket;
import org.aldeia.core.AldeiaSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of the stream scenarios. As a main, the other JVM of the two-JVM tests: an
 * {@link AldeiaServerSocket} on a free port (of the address its argument names, if any: every
 * address by default) that serves every connection in its own thread. It
 * prints {@code PORT <n>} once listening, or {@code FAILED <exception>: <message>} (on one line)
 * if the server socket cannot be created, and runs until it is killed. {@link StaticStreamMain}
 * serves with {@link #serveUntilStopped} on node 0 of a static DECK run.
 * Each connection starts with a request header the client writes with {@link #request}: the
 * command, a seed and a byte count.
 */
public final class PeerMain {

    private static final Logger LOG = LoggerFactory.getLogger(PeerMain.class);

    /** What the child does on a connection; every command ends by closing the socket. */
    enum Command {
        /** Receives stream {@code seed} (checking the trailer), then answers the SHA-256 it computed. */
        SINK,
        /** Sends stream {@code seed} and its trailer, then closes without flushing (close must flush). */
        SOURCE,
        /** As SOURCE with a flush before the close. */
        SOURCE_FLUSHED,
        /** Sends stream {@code seed + 1} while receiving the client's stream (both directions at once). */
        EXCHANGE,
        /** Receives stream {@code seed} until the client ends its output, checking every byte, then answers the count. */
        VERIFY_UNTIL_END,
        /** Reads one object with an ObjectInputStream and writes it back with an ObjectOutputStream. */
        ECHO_OBJECT,
        /** Reads the header only, then neither reads nor writes: a peer whose application stalls. */
        HOLD,
        /** Closes the server socket, so that {@link #serveUntilStopped} returns. */
        STOP
    }

    private PeerMain() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        AldeiaServerSocket server;
        try {
            server = args.length > 0 ? new AldeiaServerSocket(0, 50, InetAddress.getByName(args[0])) : new AldeiaServerSocket(0);
        } catch (IOException | RuntimeException e) {
            System.out.println("FAILED " + e.getClass().getName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
            System.exit(3);
            return;
        }
        System.out.println("PORT " + server.getLocalPort());
        System.out.flush();
        serveUntilStopped(server);
    }

    /**
     * Serves every connection in its own thread until a STOP request closes {@code server}, then
     * waits for the connections still being served.
     *
     * @return how many connections failed (each failure is logged with its stack trace)
     */
    static int serveUntilStopped(AldeiaServerSocket server) throws IOException, InterruptedException {
        AtomicInteger failures = new AtomicInteger();
        List<Thread> connections = new ArrayList<>();
        while (true) {
            AldeiaSocket socket;
            try {
                socket = server.accept();
            } catch (SocketException e) {
                if (!server.isClosed()) {
                    throw e;
                }
                break;
            }
            Thread connection = new Thread(() -> {
                if (!serve(server, socket)) {
                    failures.incrementAndGet();
                }
            }, "peer-socket-" + socket.id());
            connection.start();
            connections.removeIf(done -> !done.isAlive()); // a long-lived child serves many connections
            connections.add(connection);
        }
        for (Thread connection : connections) {
            connection.join();
        }
        return failures.get();
    }

    private static boolean serve(AldeiaServerSocket server, AldeiaSocket socket) {
        try (socket) {
            DataInputStream header = new DataInputStream(socket.getInputStream());
            Command command = Command.valueOf(header.readUTF());
            long seed = header.readLong();
            long total = header.readLong();
            LOG.info("socket {}: {} seed {} bytes {}", socket.id(), command, seed, total);
            if (command == Command.STOP) {
                server.close(); // the client waits for this socket's end of stream: it knows we stopped
            } else {
                run(command, socket, seed, total);
            }
            return true;
        } catch (IOException | InterruptedException | RuntimeException e) {
            LOG.error("socket {} failed", socket.id(), e);
            return false;
        }
    }

    /** The work of every command but STOP, which {@link #serve} handles: it owns the server socket. */
    private static void run(Command command, Socket socket, long seed, long total)
            throws IOException, InterruptedException {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        switch (command) {
            case SINK -> out.write(StreamCheck.receive(in, seed, total));
            case SOURCE -> StreamCheck.send(out, seed, total);
            case SOURCE_FLUSHED -> {
                StreamCheck.send(out, seed, total);
                out.flush();
            }
            case EXCHANGE -> StreamCheck.exchange(socket, seed + 1, total);
            case HOLD -> Thread.sleep(Long.MAX_VALUE);
            case VERIFY_UNTIL_END -> {
                long received = StreamCheck.verifyUntilEnd(in, seed);
                LOG.info("socket {}: {} bytes of stream {} verified", socket.getLocalPort(), received, seed);
                new DataOutputStream(out).writeLong(received);
            }
            case ECHO_OBJECT -> {
                Object received;
                try {
                    received = new ObjectInputStream(in).readObject();
                } catch (ClassNotFoundException e) {
                    throw new IOException("the client sent a class this JVM lacks", e);
                }
                ObjectOutputStream echo = new ObjectOutputStream(out);
                echo.writeObject(received);
                echo.flush();
            }
        }
    }

    /** Connects to a child on {@code port} of this host and asks for {@code command}. */
    static AldeiaSocket request(int port, Command command, long seed, long total) throws IOException {
        return request(InetAddress.getLoopbackAddress(), port, command, seed, total);
    }

    /** Connects to a {@link PeerMain} at {@code host}:{@code port} and asks for {@code command}. */
    static AldeiaSocket request(InetAddress host, int port, Command command, long seed, long total) throws IOException {
        AldeiaSocket socket = new AldeiaSocket(host, port);
        DataOutputStream header = new DataOutputStream(socket.getOutputStream());
        header.writeUTF(command.name());
        header.writeLong(seed);
        header.writeLong(total);
        return socket;
    }

    /** Client side of SINK: sends stream {@code seed} and checks the digest the child computed. */
    static void sendToSink(AldeiaSocket socket, long seed, long total) throws IOException {
        byte[] sent = StreamCheck.send(socket.getOutputStream(), seed, total);
        byte[] seenByChild = socket.getInputStream().readNBytes(StreamCheck.DIGEST_LENGTH);
        assertEquals(StreamCheck.hex(sent), StreamCheck.hex(seenByChild),
                "SHA-256 of the bytes the child read vs. the bytes this JVM wrote");
    }
}
