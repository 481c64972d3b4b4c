package org.aldeia.core;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import javax.net.SocketFactory;

/**
 * A {@link SocketFactory} that makes {@link AldeiaSocket}s, for libraries that take a factory
 * instead of calling {@code new Socket(...)} (JDBC drivers, HTTP clients, JSSE layering). Every
 * overload behaves like the {@link AldeiaSocket} constructor with the same parameters.
 */
public final class AldeiaSocketFactory extends SocketFactory {

    private static final AldeiaSocketFactory DEFAULT = new AldeiaSocketFactory();

    /** A factory of its own; {@link #getDefault()} shares one. */
    public AldeiaSocketFactory() {
    }

    /** Stateless, so one instance serves the whole JVM. */
    public static SocketFactory getDefault() {
        return DEFAULT;
    }

    /** An unconnected Aldeia socket; {@link Socket#connect} connects it. */
    @Override
    public Socket createSocket() {
        return new AldeiaSocket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return new AldeiaSocket(host, port);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return new AldeiaSocket(host, port, localHost, localPort);
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return new AldeiaSocket(host, port);
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
            throws IOException {
        return new AldeiaSocket(address, port, localAddress, localPort);
    }
}
