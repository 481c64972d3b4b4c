package org.aldeia.core;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.bootstrap.Routes;
import org.aldeia.core.bootstrap.ServerBootstrap;
import org.aldeia.core.bootstrap.ServerTickets;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.upgrade.PipedUpgrade;
import org.aldeia.core.upgrade.TcpFirstChannel;

/**
 * The server's side of a TCP-first connection's upgrade, started by the client's first control
 * frame: the steps of {@link BootstrapAcceptor} for one client, in order and blocking, on a
 * thread of the upgrade pool. Unlike the acceptor's, these steps hold a thread before the
 * client's proof: what bounds a stranger's cost is the pool's size ({@link PipedUpgrade}) and
 * the pipe's timeout per message. It returns once the client's CONNECTED is in: the client's
 * endpoint admits our writes, which then move.
 */
final class ServerUpgrade {

    /** Tickets of upgrades, for a client's next upgrade with this process (any server socket of it). */
    private static final ServerTickets TICKETS = new ServerTickets();

    /** What the server's upgrade needs of its socket and server socket. */
    record Context(BootstrapAcceptor.Sockets sockets, AldeiaSocket socket, InetAddress local, InetAddress client) {}

    private final TcpFirstChannel connection;
    private final Context context;

    private ServerUpgrade(TcpFirstChannel connection, Context context) {
        this.connection = connection;
        this.context = context;
    }

    /** What starts the server's side when the client's first control frame comes. */
    static TcpFirstChannel.UpgradeStarter starter(Context context, long waitMillis) {
        return PipedUpgrade.starter((connection, in, out) -> new ServerUpgrade(connection, context).bootstrap(in, out),
                waitMillis);
    }

    private Channel bootstrap(InputStream pipeIn, OutputStream out) throws IOException {
        DataInputStream in = new DataInputStream(pipeIn);
        byte[] start = new byte[BootstrapProtocol.START_BYTES];
        in.readFully(start);
        if (!Arrays.equals(start, BootstrapProtocol.start().array())) {
            throw new IOException(connection.peerName() + " started its upgrade with another magic or version");
        }
        Routes routes = context.sockets().routes();
        byte[] hello = readHello(in);
        Transport transport = routes.named(BootstrapProtocol.route(hello), context.client());
        if (transport == null) {
            send(out, BootstrapProtocol.unrouted(routes.names()));
            hello = readHello(in);
            transport = routes.named(BootstrapProtocol.route(hello), context.client());
            if (transport == null) {
                throw new IOException(connection.peerName() + " offered a route this process has not, twice");
            }
        }
        ServerBootstrap server = new ServerBootstrap(connection.peerName(), TICKETS);
        try {
            if (!transport.knowsPairKey(BootstrapProtocol.publicKey(hello)) || !server.resume(transport, hello)) {
                send(out, server.prove(transport, hello));
                byte[] proof = new byte[BootstrapProtocol.PROOF_BYTES];
                in.readFully(proof);
                server.checkProof(proof);
            }
            AldeiaSocket socket = context.socket();
            ByteBuffer info = server.create(transport, socket.id(), socket.connectionSizes().endpoint(), context.local());
            ByteBuffer connected = ByteBuffer.wrap(new byte[] {BootstrapProtocol.CONNECTED});
            if (server.connectsBeforeAnswer()) {
                server.connect(context.client());
                send(out, ByteBuffer.allocate(info.remaining() + 1).put(info).put(connected).flip());
            } else {
                send(out, info);
                server.connect(context.client());
                send(out, connected);
            }
            int ack = in.read();
            if (ack != BootstrapProtocol.CONNECTED) {
                throw new IOException(connection.peerName() + " sent " + ack + " instead of its upgrade's confirmation");
            }
            return server.takeChannel();
        } catch (IOException | RuntimeException e) {
            server.abandon();
            throw e;
        }
    }

    private byte[] readHello(DataInputStream in) throws IOException {
        int length = in.readInt();
        if (!BootstrapProtocol.validHelloLength(length)) {
            throw new IOException(connection.peerName() + " sent an upgrade HELLO of " + length + " bytes");
        }
        byte[] hello = new byte[length];
        in.readFully(hello);
        return hello;
    }

    private static void send(OutputStream out, ByteBuffer message) throws IOException {
        out.write(message.array(), message.arrayOffset() + message.position(), message.remaining());
        out.flush();
    }
}
