package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.bootstrap.ClientBootstrap;
import org.aldeia.core.bootstrap.Routes;
import org.aldeia.core.bootstrap.ServerBootstrap;
import org.aldeia.core.bootstrap.ServerTickets;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Transport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes the client side of the bootstrap ({@link ClientBootstrap}): this test plays the server
 * on a loopback port, one input per connection ({@link SeededFuzzer}).
 *
 * <p>An input's first byte (mod 3) says how far the server is genuine before it sends the rest
 * of the input and ends its side: 0 from its first byte (in place of the reply), 1 after a
 * genuine reply and the client's proof (in place of the server's INFO, whose MAC only the pair's
 * key makes), 2 after a genuine INFO, its endpoint connected (in place of its CONNECTED). The
 * client must end within its timeout, connected only after a genuine INFO and a CONNECTED, else
 * with an IOException, and release its endpoint when it fails.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class BootstrapClientFuzzTest extends BootstrapFuzzing {

    private static final int CLIENT_TIMEOUT_MILLIS = 2000;

    private ServerSocket listener;
    private ExecutorService serverThread;
    private Transport serverTransport;
    private Transport clientTransport;

    @BeforeEach
    void start() throws IOException {
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        serverThread = Executors.newSingleThreadExecutor();
        serverTransport = server.transport();
        clientTransport = client.transport();
    }

    @AfterEach
    void stop() throws IOException {
        serverThread.shutdownNow();
        listener.close();
    }

    @Test
    void theClientSurvivesMalformedAndHalfGenuineServers() throws Exception {
        fuzz("bootstrap-client", this::play);
    }

    private void play(byte[] input) throws Exception {
        int stage = input.length == 0 ? 0 : (input[0] & 0xff) % 3;
        byte[] raw = input.length == 0 ? input : Arrays.copyOfRange(input, 1, input.length);
        boolean genuine = stage == 2 && raw.length > 0 && raw[0] == BootstrapProtocol.CONNECTED;
        Future<Channel> serverSide = serverThread.submit(() -> serve(stage, raw));
        long start = System.nanoTime();
        Channel connected = null;
        IOException failure = null;
        try (SocketChannel bootstrap = SocketChannel.open(listener.getLocalSocketAddress())) {
            connected = ClientBootstrap.connect(bootstrap, Routes.of(clientTransport), clientTransport,
                    clientTransport.createEndpoint(0, sizes), t -> t.createEndpoint(0, sizes), CLIENT_TIMEOUT_MILLIS);
        } catch (IOException e) {
            failure = e;
        } finally {
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(millis < 2 * CLIENT_TIMEOUT_MILLIS, "the client took " + millis + " ms");
            Channel ours = serverSide.get(10, TimeUnit.SECONDS);
            if (ours != null) {
                ours.close();
            }
            if (connected != null) {
                connected.close();
            }
        }
        if (genuine && failure != null) {
            throw new AssertionError("a genuine server failed the client", failure);
        }
        assertEquals(genuine, connected != null, "the client connected to a server that never vouched for it");
    }

    /** The server's side: the client's start and HELLO, then the script; its channel, if it made one. */
    private Channel serve(int stage, byte[] raw) throws IOException {
        ServerBootstrap genuine = new ServerBootstrap("the client", new ServerTickets());
        try (Socket socket = listener.accept()) {
            socket.setSoTimeout(5000);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            byte[] start = new byte[BootstrapProtocol.START_BYTES];
            in.readFully(start);
            assertArrayEquals(BootstrapProtocol.start().array(), start);
            int length = in.readInt();
            assertTrue(BootstrapProtocol.validHelloLength(length), "HELLO length " + length);
            byte[] hello = new byte[length];
            in.readFully(hello);
            if (stage >= 1) {
                out.write(genuine.prove(serverTransport, hello).array());
                byte[] proof = new byte[BootstrapProtocol.PROOF_BYTES];
                in.readFully(proof);
                genuine.checkProof(proof); // a genuine client's proof
            }
            if (stage == 2) {
                out.write(genuine.create(serverTransport, 0, sizes, InetAddress.getLoopbackAddress()).array());
                genuine.connect(InetAddress.getLoopbackAddress());
            }
            out.write(raw);
            socket.shutdownOutput();
            BootstrapFuzzing.drainUntilClosed(in); // until the client closes
            return genuine.takeChannel();
        } catch (IOException | RuntimeException | Error e) {
            genuine.abandon();
            throw e;
        }
    }
}
