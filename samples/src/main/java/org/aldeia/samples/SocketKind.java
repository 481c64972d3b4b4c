package org.aldeia.samples;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Locale;

import org.aldeia.core.AldeiaServerSocket;
import org.aldeia.core.AldeiaSocket;

/**
 * Which socket implementation a sample runs over. This is the only class of the samples that
 * names Aldeia: everything else uses the plain java.net API, which is the point of Aldeia.
 */
public enum SocketKind {
    /** The JDK's java.net sockets (the thesis's "Soquetes TCP/IP"). */
    JDK {
        @Override
        public ServerSocket serverSocket(int port) throws IOException {
            return new ServerSocket(port);
        }

        @Override
        public Socket connect(String host, int port) throws IOException {
            return noDelay(new Socket(host, port));
        }

        @Override
        public Socket accept(ServerSocket server) throws IOException {
            return noDelay(server.accept());
        }
    },
    /** Aldeia sockets: the same constructors, another transport underneath. */
    ALDEIA {
        @Override
        public ServerSocket serverSocket(int port) throws IOException {
            return new AldeiaServerSocket(port);
        }

        @Override
        public Socket connect(String host, int port) throws IOException {
            return new AldeiaSocket(host, port);
        }

        @Override
        public Socket accept(ServerSocket server) throws IOException {
            return server.accept();
        }
    };

    /** A listening server socket on {@code port} (0 = any free port). */
    public abstract ServerSocket serverSocket(int port) throws IOException;

    /** A client socket connected to {@code host:port}. */
    public abstract Socket connect(String host, int port) throws IOException;

    /** The next connection of {@code server}, tuned like {@link #connect}'s sockets. */
    public abstract Socket accept(ServerSocket server) throws IOException;

    /** The name used on the command line: {@code jdk} or {@code aldeia}. */
    public String optionValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses the {@code --impl} option value. */
    public static SocketKind parse(String value) {
        for (SocketKind kind : values()) {
            if (kind.optionValue().equals(value.toLowerCase(Locale.ROOT))) {
                return kind;
            }
        }
        throw new IllegalArgumentException("--impl must be 'aldeia' or 'jdk', not '" + value + "'");
    }

    /*
     * The benchmarks are request/response exchanges: with Nagle's algorithm on, a JDK socket
     * would hold the tail of a message until the peer's delayed ACK, and the tables would measure
     * that timer instead of the network. Aldeia has no such delay, so the comparison is only
     * fair with TCP_NODELAY on the JDK side.
     */
    private static Socket noDelay(Socket socket) throws IOException {
        try {
            socket.setTcpNoDelay(true);
            return socket;
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }
}
