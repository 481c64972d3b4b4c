package org.aldeia.core;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import javax.net.ServerSocketFactory;

/**
 * A {@link ServerSocketFactory} that makes {@link AldeiaServerSocket}s; every overload behaves
 * like the {@link AldeiaServerSocket} constructor with the same parameters.
 */
public final class AldeiaServerSocketFactory extends ServerSocketFactory {

    private static final AldeiaServerSocketFactory DEFAULT = new AldeiaServerSocketFactory();

    /** A factory of its own; {@link #getDefault()} shares one. */
    public AldeiaServerSocketFactory() {
    }

    /** Stateless, so one instance serves the whole JVM. */
    public static ServerSocketFactory getDefault() {
        return DEFAULT;
    }

    /** An unbound Aldeia server socket; {@link ServerSocket#bind} binds it. */
    @Override
    public ServerSocket createServerSocket() throws IOException {
        return new AldeiaServerSocket();
    }

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        return new AldeiaServerSocket(port);
    }

    @Override
    public ServerSocket createServerSocket(int port, int backlog) throws IOException {
        return new AldeiaServerSocket(port, backlog);
    }

    @Override
    public ServerSocket createServerSocket(int port, int backlog, InetAddress ifAddress) throws IOException {
        return new AldeiaServerSocket(port, backlog, ifAddress);
    }
}
