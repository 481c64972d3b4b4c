package org.aldeia.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.aldeia.samples.SocketKind;

/** Opens the two ends of a {@link MessageLink} for each {@link Transport}. */
final class Links {

    /** How long a client waits for the server's address (a JVM start plus DECK's start). */
    static final Duration SERVER_START_LIMIT = Duration.ofSeconds(60);

    private Links() {
    }

    /**
     * Listens, publishes the address through {@code rendezvous}, and returns the link once the
     * client is connected. {@code scratch} is a directory for the Unix socket file or Aeron's.
     */
    static MessageLink server(Transport transport, Path scratch, Rendezvous rendezvous) throws IOException {
        switch (transport) {
            case JDK_UNIX:
                return unixServer(scratch.resolve("bench.sock"), rendezvous);
            case AERON_IPC:
                Path directory = scratch.resolve("aeron");
                AeronLink aeron = AeronLink.startServer(directory);
                try {
                    rendezvous.publish(directory.toString());
                } catch (IOException | RuntimeException e) {
                    aeron.close();
                    throw e;
                }
                return awaitPeer(aeron);
            default:
                return socketServer(socketKind(transport), rendezvous, transport);
        }
    }

    /** Waits for the server's address and connects to it. */
    static MessageLink client(Transport transport, Rendezvous rendezvous) throws IOException, InterruptedException {
        String address = rendezvous.await(SERVER_START_LIMIT);
        switch (transport) {
            case JDK_UNIX:
                SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(address));
                return new StreamLink(transport.label(), Channels.newInputStream(channel),
                        Channels.newOutputStream(channel), channel);
            case AERON_IPC:
                return awaitPeer(AeronLink.connectClient(Path.of(address)));
            default:
                Socket socket = socketKind(transport).connect(PhaseListener.SERVER, Integer.parseInt(address));
                return new StreamLink(transport.label(), socket.getInputStream(), socket.getOutputStream(), socket);
        }
    }

    private static MessageLink socketServer(SocketKind kind, Rendezvous rendezvous, Transport transport)
            throws IOException {
        try (ServerSocket server = kind.serverSocket(0)) {
            rendezvous.publish(Integer.toString(server.getLocalPort()));
            Socket socket = kind.accept(server);
            return new StreamLink(transport.label(), socket.getInputStream(), socket.getOutputStream(), socket);
        }
    }

    private static MessageLink unixServer(Path path, Rendezvous rendezvous) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(path));
            rendezvous.publish(path.toString());
            SocketChannel channel = server.accept();
            return new StreamLink(Transport.JDK_UNIX.label(), Channels.newInputStream(channel),
                    Channels.newOutputStream(channel), channel);
        } finally {
            // The accepted channel does not need the name; a left-over file would block a rerun's bind.
            Files.deleteIfExists(path);
        }
    }

    /** Whether the row's connections are java.net sockets (of {@link #socketKind}). */
    static boolean isSocketTransport(Transport transport) {
        return transport == Transport.JDK_LOOPBACK || transport.isAldeia();
    }

    static SocketKind socketKind(Transport transport) {
        if (transport == Transport.JDK_LOOPBACK || transport.isInstalled()) {
            return SocketKind.JDK;
        }
        if (transport.isAldeia()) {
            return SocketKind.ALDEIA;
        }
        throw new IllegalArgumentException(transport + " is not a socket transport");
    }

    /** The link once the other side's publication is connected; closed if it never is. */
    private static AeronLink awaitPeer(AeronLink aeron) throws IOException {
        try {
            aeron.awaitPeer();
            return aeron;
        } catch (IOException | RuntimeException e) {
            aeron.close();
            throw e;
        }
    }
}
