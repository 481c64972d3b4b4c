package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.bootstrap.BootstrapKeys;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.bootstrap.Routes;
import org.aldeia.core.bootstrap.ServerBootstrap;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.upgrade.TcpFirstChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes the server side of the bootstrap ({@link BootstrapAcceptor}, {@link ServerBootstrap})
 * through a real loopback connection, one input per connection ({@link SeededFuzzer}).
 *
 * <p>An input is a script: its first byte (mod 4) says how far this test plays a genuine
 * client before it sends the rest of the input in place of what comes next, then ends its side:
 * 0 from the first byte, 1 after the start (magic, version), 2 after the HELLO and the server's
 * reply (in place of the proof), 3 after the proof, the server's INFO and its CONNECTED (in place
 * of our CONNECTED). For every input the server must: close the connection within its step deadlines;
 * say nothing to a client that did not start with the magic and version and a whole HELLO; send
 * its INFO (and create an endpoint) only to a client that proved the key; accept only a client
 * that proved it and confirmed; and be back to preparing nothing, with every endpoint it made
 * released.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class BootstrapServerFuzzTest extends BootstrapFuzzing {

    private static final int STEP_MILLIS = 300;
    /** Far beyond the deadlines of all the steps an input can reach. */
    private static final int CLOSE_WAIT_MILLIS = 10 * STEP_MILLIS + 2000;
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private ServerSocketChannel listener;
    private BootstrapAcceptor acceptor;
    private Transport clientTransport;

    @BeforeEach
    void start() throws IOException {
        listener = ServerSocketChannel.open().bind(LOOPBACK, 64);
        BootstrapAcceptor.Sockets sockets = new BootstrapAcceptor.Sockets() {
            @Override
            public AldeiaSocket newSocket() {
                return new AldeiaSocket(server);
            }

            @Override
            public Routes routes() throws IOException {
                return server.routes();
            }
        };
        acceptor = new BootstrapAcceptor(listener, 4, "fuzz", BootstrapAcceptor.Mode.ALDEIA,
                new BootstrapAcceptor.Limits(STEP_MILLIS, 16), sockets);
        clientTransport = client.transport();
    }

    @AfterEach
    void stop() throws IOException {
        acceptor.close();
        listener.close();
    }

    @Test
    void theServerSurvivesMalformedAndHalfGenuineClients() throws Exception {
        fuzz("bootstrap-server", this::play);
        play(new byte[] {3, BootstrapProtocol.CONNECTED}); // and a genuine client is still accepted
    }

    private void play(byte[] input) throws Exception {
        int stage = input.length == 0 ? 0 : (input[0] & 0xff) % 4;
        byte[] raw = input.length == 0 ? input : Arrays.copyOfRange(input, 1, input.length);
        Endpoint endpoint = null;
        Channel channel = null;
        try (Socket socket = new Socket()) {
            socket.connect(listener.getLocalAddress(), 5000);
            socket.setSoTimeout(CLOSE_WAIT_MILLIS);
            OutputStream out = socket.getOutputStream();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            if (stage >= 1) {
                out.write(BootstrapProtocol.start().array());
            }
            if (stage >= 2) {
                endpoint = clientTransport.createEndpoint(0, sizes);
                byte[] hello = BootstrapProtocol.body(clientTransport.publicKey(), BootstrapKeys.nonce(),
                        clientTransport.route(), endpoint.localInfo());
                out.write(BootstrapProtocol.hello(hello).array());
                BootstrapProtocol.Reply reply = readReply(in);
                if (stage == 3) {
                    byte[] transcript = BootstrapKeys.transcript(hello, reply.covered());
                    byte[] key = clientTransport.pairKey(reply.identity(), reply.publicKey());
                    assertTrue(BootstrapKeys.verify(key, BootstrapKeys.SERVER, transcript, reply.proof()));
                    out.write(BootstrapKeys.proof(key, BootstrapKeys.CLIENT, transcript));
                    byte[] info = readServerInfo(in, key, transcript);
                    channel = endpoint.connect(info, InetAddress.getLoopbackAddress(), key);
                    endpoint = null;
                    assertEquals(BootstrapProtocol.CONNECTED, in.read(), "the server's CONNECTED after a genuine proof");
                }
            }
            out.write(raw);
            socket.shutdownOutput();
            if (tcpFirst(stage, raw)) {
                // accept gets the connection; what follows are its frames, which the socket reads
                // to their end or refuses with an IOException, never more
                try (BootstrapAcceptor.Prepared accepted = acceptor.accept(5000)) {
                    AldeiaSocket server = assertInstanceOf(BootstrapAcceptor.AldeiaClient.class, accepted).socket();
                    server.setSoTimeout(CLOSE_WAIT_MILLIS);
                    try {
                        server.getInputStream().readAllBytes();
                    } catch (SocketTimeoutException e) {
                        throw new AssertionError("a TCP-first socket waited for more than the client sent", e);
                    } catch (IOException e) {
                        // frames it refused
                    }
                }
                checkWhatATcpFirstServerSaid(readUntilClosed(in));
            } else {
                checkWhatTheServerSaid(stage, raw, readUntilClosed(in));
            }
            // accept has had the socket since our endpoint connected: once we confirmed, it sends
            // to us; otherwise it was taken back when we closed (checked below: nothing to accept)
            if (stage == 3 && raw.length > 0 && raw[0] == BootstrapProtocol.CONNECTED) {
                try (BootstrapAcceptor.Prepared accepted = acceptor.accept(5000)) {
                    AldeiaSocket server = assertInstanceOf(BootstrapAcceptor.AldeiaClient.class, accepted).socket();
                    server.getOutputStream().write(7);
                    server.getOutputStream().flush();
                    byte[] b = new byte[1];
                    assertEquals(1, channel.read(b, 0, 1));
                    assertEquals(7, b[0]);
                }
            }
        } finally {
            if (channel != null) {
                channel.close();
            }
            if (endpoint != null) {
                endpoint.close();
            }
        }
        awaitNothingPrepared();
        assertThrows(SocketTimeoutException.class, () -> acceptor.accept(1), "a client accepted that never confirmed");
    }

    /** Whether the client's bytes make a TCP-first start (stage 0: start, TCP_FIRST; stage 1, after our start: TCP_FIRST). */
    private static boolean tcpFirst(int stage, byte[] raw) {
        ByteBuffer sent = ByteBuffer.wrap(raw);
        if (stage == 0) {
            if (raw.length < BootstrapProtocol.START_BYTES || sent.getInt() != BootstrapProtocol.MAGIC
                    || sent.getInt() != BootstrapProtocol.VERSION) {
                return false;
            }
        } else if (stage != 1) {
            return false;
        }
        return sent.remaining() >= Integer.BYTES && sent.getInt() == BootstrapProtocol.TCP_FIRST;
    }

    /**
     * A TCP-first server: its answer, then at most one control frame, the reply to an upgrade's
     * HELLO (which a fuzzed client cannot prove: nothing after it), and END if it closed in
     * order (not when a malformed frame made it reset); never a data frame.
     */
    private static void checkWhatATcpFirstServerSaid(byte[] rest) {
        ByteBuffer said = ByteBuffer.wrap(rest);
        assertTrue(rest.length >= BootstrapProtocol.START_BYTES && said.getInt() == BootstrapProtocol.MAGIC
                && said.getInt() == BootstrapProtocol.VERSION, "a TCP-first connection's answer first");
        if (said.remaining() >= Integer.BYTES && said.getInt(rest.length - Integer.BYTES) == TcpFirstChannel.END) {
            said.limit(rest.length - Integer.BYTES);
        }
        if (!said.hasRemaining()) {
            return;
        }
        assertTrue(said.remaining() >= 8 && said.getInt() == TcpFirstChannel.CONTROL, "only a control frame after it");
        int length = said.getInt();
        assertEquals(said.remaining(), length, "one control frame, and nothing after it (but END)");
        assertTrue(length >= 12 && said.getInt() == BootstrapProtocol.MAGIC && said.getInt() == BootstrapProtocol.VERSION,
                "the control frame is a reply");
    }

    /** Everything the server sends until it closes; it must close within its deadlines. */
    private static byte[] readUntilClosed(DataInputStream in) throws IOException {
        try {
            return BootstrapFuzzing.drainUntilClosed(in);
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server held the connection for more than " + CLOSE_WAIT_MILLIS + " ms", e);
        }
    }

    /** The server's INFO after a genuine proof: its endpoint's information, vouched for by the key. */
    private static byte[] readServerInfo(DataInputStream in, byte[] key, byte[] transcript) throws IOException {
        int length = in.readInt();
        assertTrue(length >= 0 && length <= BootstrapProtocol.MAX_INFO_LENGTH, "INFO length " + length);
        byte[] info = new byte[length], ticket = new byte[BootstrapProtocol.TICKET_BYTES];
        byte[] mac = new byte[BootstrapProtocol.PROOF_BYTES];
        in.readFully(info);
        in.readFully(ticket);
        in.readFully(mac);
        assertTrue(BootstrapKeys.verifyInfo(key, transcript, info, ticket, mac), "the server's INFO does not carry the key's MAC");
        return info;
    }

    private static BootstrapProtocol.Reply readReply(DataInputStream in) throws IOException {
        assertEquals(BootstrapProtocol.MAGIC, in.readInt(), "a genuine HELLO is answered");
        assertEquals(BootstrapProtocol.VERSION, in.readInt());
        int length = in.readInt();
        assertTrue(length >= BootstrapProtocol.REPLY_FIXED && length <= BootstrapProtocol.MAX_REPLY_LENGTH, "" + length);
        byte[] body = new byte[length];
        in.readFully(body);
        return BootstrapProtocol.Reply.parse(body, "the server");
    }

    /**
     * Stage 0: nothing, unless the input was a start and a whole HELLO, and then one reply and no
     * more (its proof cannot be right), or an UNROUTED answer to a HELLO on a route the server
     * has not and the reply to a second whole HELLO; stages 1 and 2 likewise, nothing after the
     * reply; stage 3: nothing more.
     */
    private static void checkWhatTheServerSaid(int stage, byte[] raw, byte[] rest) {
        if (stage >= 2 || rest.length == 0) {
            assertEquals(0, rest.length, "the server sent " + rest.length + " bytes more in stage " + stage);
            return;
        }
        ByteBuffer sent = ByteBuffer.wrap(raw);
        if (stage == 0) {
            assertTrue(raw.length >= BootstrapProtocol.START_BYTES && sent.getInt() == BootstrapProtocol.MAGIC
                    && sent.getInt() == BootstrapProtocol.VERSION, "the server answered a client without the magic and version");
        }
        assertTrue(sent.remaining() >= Integer.BYTES, "the server answered before a HELLO");
        int helloLength = sent.getInt();
        assertTrue(BootstrapProtocol.validHelloLength(helloLength) && sent.remaining() >= helloLength,
                "the server answered a HELLO of length " + helloLength + " with " + sent.remaining() + " bytes after it");
        sent.position(sent.position() - Integer.BYTES);
        int hellos = wholeHellos(sent);
        ByteBuffer said = ByteBuffer.wrap(rest);
        int answers = 0;
        while (said.hasRemaining()) {
            assertTrue(said.remaining() >= 13 && said.getInt() == BootstrapProtocol.MAGIC
                    && said.getInt() == BootstrapProtocol.VERSION, "the server's answer is not a reply");
            int length = said.getInt();
            assertTrue(length >= 1 && length <= said.remaining(), "a reply of " + length + " bytes, " + said.remaining() + " sent");
            byte mode = said.get(said.position());
            said.position(said.position() + length);
            answers++;
            if (mode == BootstrapProtocol.UNROUTED) {
                assertEquals(1, answers, "an UNROUTED answer after the first HELLO's");
            } else {
                assertFalse(said.hasRemaining(), "the server sent more than its reply (an INFO without proof?)");
            }
        }
        assertTrue(answers <= hellos, "the server answered " + answers + " HELLOs of the " + hellos + " whole ones sent");
    }

    /**
     * The whole HELLOs at the front of {@code sent} (length, then that many bytes): a server
     * that does not have the first one's route answers UNROUTED and may answer a second one on
     * the same connection with its reply.
     */
    private static int wholeHellos(ByteBuffer sent) {
        int hellos = 0;
        while (sent.remaining() >= Integer.BYTES) {
            int length = sent.getInt();
            if (!BootstrapProtocol.validHelloLength(length) || sent.remaining() < length) {
                break;
            }
            sent.position(sent.position() + length);
            hellos++;
        }
        return hellos;
    }

    private void awaitNothingPrepared() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
        while (acceptor.preparing() != 0) {
            assertTrue(System.nanoTime() - deadline < 0, acceptor.preparing() + " connections still being prepared");
            TimeUnit.MILLISECONDS.sleep(1);
        }
    }
}
