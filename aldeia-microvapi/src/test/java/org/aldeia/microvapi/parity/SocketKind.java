package org.aldeia.microvapi.parity;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.aldeia.core.AldeiaServerSocket;
import org.aldeia.core.AldeiaSocket;

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
    };

    /** An unbound, unconnected socket. */
    abstract Socket newSocket();

    /** A socket connected at once by the constructor that takes an address and a port. */
    abstract Socket connectedSocket(InetAddress address, int port) throws IOException;

    /** An unbound server socket. */
    abstract ServerSocket newServerSocket() throws IOException;

    /** A server socket bound by the constructor; {@code address} null means every local address. */
    abstract ServerSocket boundServerSocket(int port, int backlog, InetAddress address) throws IOException;
}
