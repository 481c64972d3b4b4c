package org.aldeia.microvapi.parity;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.aldeia.core.Aldeia;
import org.aldeia.core.AldeiaServerSocket;
import org.aldeia.core.AldeiaSocket;
import org.aldeia.core.config.AldeiaConfiguration;

/**
 * The implementation of java.net's socket API a run of {@link SocketContractTest} checks: the
 * JDK's own, as the reference, or Aldeia's. Tests and the {@link FarEnd} create every socket
 * through these factories, so one test body runs against both.
 */
enum SocketKind {

    JDK {
        @Override
        Socket newSocket() {
            return new Socket();
        }

        @Override
        Socket connectedSocket(InetAddress address, int port) throws IOException {
            return new Socket(address, port);
        }

        @Override
        ServerSocket newServerSocket() throws IOException {
            return new ServerSocket();
        }

        @Override
        ServerSocket boundServerSocket(int port, int backlog, InetAddress address) throws IOException {
            return new ServerSocket(port, backlog, address);
        }

        @Override
        boolean connectsOverAldeia() {
            return false;
        }
    },

    ALDEIA {
        @Override
        Socket newSocket() {
            return new AldeiaSocket();
        }

        @Override
        Socket connectedSocket(InetAddress address, int port) throws IOException {
            return new AldeiaSocket(address, port);
        }

        @Override
        ServerSocket newServerSocket() throws IOException {
            return new AldeiaServerSocket();
        }

        @Override
        ServerSocket boundServerSocket(int port, int backlog, InetAddress address) throws IOException {
            return new AldeiaServerSocket(port, backlog, address);
        }

        @Override
        boolean connectsOverAldeia() {
            return true;
        }
    },

    /**
     * java.net's own classes in a JVM where {@link Aldeia#install()} ran, the zero-code way: the
     * rules of the run's configuration decide whether each connection is Aldeia's or plain TCP.
     * Once installed, every socket of the JVM is, so a run checks no other kind beside it.
     */
    INSTALLED {
        @Override
        Socket newSocket() {
            install();
            return JDK.newSocket();
        }

        @Override
        Socket connectedSocket(InetAddress address, int port) throws IOException {
            install();
            return JDK.connectedSocket(address, port);
        }

        @Override
        ServerSocket newServerSocket() throws IOException {
            install();
            return JDK.newServerSocket();
        }

        @Override
        ServerSocket boundServerSocket(int port, int backlog, InetAddress address) throws IOException {
            install();
            return JDK.boundServerSocket(port, backlog, address);
        }

        @Override
        void prepareJvm() throws IOException {
            Aldeia.install();
        }

        /**
         * The parity-installed execution's configuration has a connect rule for the loopback
         * address, where every test connects; parity-installed-plain runs without one.
         */
        @Override
        boolean connectsOverAldeia() {
            return System.getProperty(AldeiaConfiguration.PROPERTY) != null;
        }

        private void install() {
            try {
                prepareJvm();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    /**
     * Readies a JVM that makes sockets of this kind before it makes any, control sockets
     * included (a client under a connect rule can only talk to an installed server).
     */
    void prepareJvm() throws IOException {
        // JDK and Aldeia sockets need nothing JVM-wide
    }

    /** Whether this run's connections are carried by Aldeia rather than TCP (where they still differ). */
    abstract boolean connectsOverAldeia();

    /** An unbound, unconnected socket. */
    abstract Socket newSocket();

    /** A socket connected at once by the constructor that takes an address and a port. */
    abstract Socket connectedSocket(InetAddress address, int port) throws IOException;

    /** An unbound server socket. */
    abstract ServerSocket newServerSocket() throws IOException;

    /** A server socket bound by the constructor; {@code address} null means every local address. */
    abstract ServerSocket boundServerSocket(int port, int backlog, InetAddress address) throws IOException;
}
