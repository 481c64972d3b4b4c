package org.aldeia.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketImpl;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.util.Set;
import java.util.function.Supplier;
import org.aldeia.core.bootstrap.Routes;
import org.aldeia.core.config.SocketRule;
import org.aldeia.core.config.SocketRules;
import org.aldeia.core.plain.PlainChannelCleaner;
import org.aldeia.core.spi.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The implementation behind every {@code java.net.ServerSocket} of a JVM where
 * {@link Aldeia#install()} ran. It listens with a plain TCP channel. When a bind rule matches
 * its address, every connection it accepts is looked at first: an Aldeia client (its first
 * bytes are the bootstrap's magic) gets the server side of the bootstrap and an
 * {@link AldeiaSocket}, any other client a plain socket that still delivers the bytes looked at;
 * without a matching rule every connection is plain. So a server keeps accepting the clients of
 * a mixed cluster.
 *
 * <p>Connections are accepted, and under a bind rule looked at, in the background
 * ({@link BootstrapAcceptor}): a silent or slow client never holds accept for the others, and
 * a client whose Aldeia bootstrap fails (it died, it is not what it claimed) does not make
 * accept fail, as a client's trouble never makes java.net's accept fail: it is logged and the
 * next connection is accepted.
 */
final class InstalledServerSocketImpl extends SocketImpl {

    private static final Logger LOG = LoggerFactory.getLogger(InstalledServerSocketImpl.class);
    private static final int DEFAULT_BACKLOG = 50;

    private final SocketRules rules;
    /** Prepares accepted clients; apart from this object, so that its acceptor thread does not keep it reachable. */
    private final ClientPreparation preparation;

    private volatile ServerSocketChannel listener;
    private InetSocketAddress requested;
    /** What the listener was bound to: java.net reports it still once the server socket is closed. */
    private volatile InetSocketAddress bound;
    private volatile int soTimeout;
    /** Set by listen: it accepts in the background, and tells clients apart under a bind rule. */
    private volatile BootstrapAcceptor acceptor;
    private volatile boolean closed;

    /**
     * @param environment the JVM's: its configuration says how long a silent client is waited
     *     for before it counts as plain TCP (bootstrap_timeout), and its transport serves the
     *     Aldeia clients
     */
    InstalledServerSocketImpl(Supplier<AldeiaEnvironment> environment, SocketRules rules) {
        // Opens nothing: java.net.ServerSocket creates an impl for every server socket, AldeiaServerSocket's too.
        this.rules = rules;
        this.preparation = new ClientPreparation(environment);
    }

    @Override
    protected void create(boolean stream) throws IOException {
        listener = ServerSocketChannel.open();
        // As the JDK's server sockets are, one dropped without close is closed once unreachable.
        PlainChannelCleaner.closeWhenUnreachable(this, listener);
    }

    /** java.net.ServerSocket calls bind, then listen: the channel binds and listens in one step. */
    @Override
    protected void bind(InetAddress host, int port) throws IOException {
        requested = new InetSocketAddress(host, port);
    }

    @Override
    protected void listen(int backlog) throws IOException {
        int queue = backlog < 1 ? DEFAULT_BACKLOG : backlog;
        SocketRule matched;
        try {
            matched = rules.matchBind(requested).orElse(null);
        } catch (UncheckedIOException e) { // this host's interfaces could not be listed
            throw (SocketException) new SocketException(e.getMessage()).initCause(e);
        }
        listener().bind(requested, queue);
        bound = (InetSocketAddress) listener.getLocalAddress();
        int port = bound.getPort();
        BootstrapAcceptor.Mode mode = BootstrapAcceptor.Mode.PLAIN;
        if (matched != null) {
            LOG.debug("Aldeia server socket on port {}: accepts Aldeia and plain TCP clients ({})", port, matched);
            mode = BootstrapAcceptor.Mode.MIXED;
        }
        // Also without a rule: the application's accept then waits on a queue, which an interrupt
        // does not end, where an interrupted wait in the channel's accept would close the listener.
        acceptor = new BootstrapAcceptor(listener, queue, "port " + port, mode,
                BootstrapAcceptor.Limits.of(preparation.environment.get().configuration()), preparation);
        PlainChannelCleaner.closeWhenUnreachable(this, acceptor);
    }

    /** What the acceptor's threads use for each Aldeia client: it refers to no server socket. */
    private static final class ClientPreparation implements BootstrapAcceptor.Sockets {
        private final Supplier<AldeiaEnvironment> environment;
        /** SO_RCVBUF if the user set it: the Aldeia sockets accepted inherit it, as java.net's do. */
        private volatile Integer receiveBufferSize;

        ClientPreparation(Supplier<AldeiaEnvironment> environment) {
            this.environment = environment;
        }

        @Override
        public AldeiaSocket newSocket() throws IOException {
            AldeiaSocket socket = new AldeiaSocket(environment.get());
            Integer inherited = receiveBufferSize;
            if (inherited != null) {
                socket.setReceiveBufferSize(inherited);
            }
            return socket;
        }

        @Override
        public Routes routes() throws IOException {
            return environment.get().routes();
        }
    }

    @Override
    protected void accept(SocketImpl s) throws IOException {
        if (!(s instanceof InstalledSocketImpl target)) {
            throw new SocketException("cannot accept into " + s.getClass().getName()
                    + ": Aldeia's socket implementation factory is not the one installed");
        }
        BootstrapAcceptor connections = acceptor;
        if (connections == null) {
            throw new SocketException(closed ? "Socket is closed" : "Socket is not bound yet");
        }
        BootstrapAcceptor.Prepared accepted;
        try {
            accepted = connections.accept(soTimeout);
        } catch (IOException e) {
            throw JavaNetExceptions.of(e);
        }
        if (accepted instanceof BootstrapAcceptor.AldeiaClient aldeia) {
            target.accepted(aldeia.socket(), new byte[0]);
        } else {
            BootstrapAcceptor.PlainClient plain = (BootstrapAcceptor.PlainClient) accepted;
            target.accepted(plain.channel().socket(), plain.firstBytes());
        }
    }

    @Override
    protected void close() throws IOException {
        closed = true;
        if (acceptor != null) {
            acceptor.close();
        }
        if (listener != null) {
            listener.close();
        }
    }

    private ServerSocketChannel listener() throws SocketException {
        if (listener == null) {
            throw new SocketException("Socket is not created");
        }
        return listener;
    }

    @Override
    protected InetAddress getInetAddress() {
        InetSocketAddress local = localAddress();
        return local == null ? null : local.getAddress();
    }

    @Override
    protected int getLocalPort() {
        InetSocketAddress local = localAddress();
        return local == null ? -1 : local.getPort();
    }

    private InetSocketAddress localAddress() {
        return bound;
    }

    // ---- options: SO_TIMEOUT bounds accept; the others are the listener's ----

    @Override
    public void setOption(int optID, Object value) throws SocketException {
        ServerSocket adaptor = listener().socket();
        switch (optID) {
            case SO_TIMEOUT -> soTimeout = (Integer) value;
            case SO_REUSEADDR -> adaptor.setReuseAddress((Boolean) value);
            case SO_RCVBUF -> {
                adaptor.setReceiveBufferSize((Integer) value);
                preparation.receiveBufferSize = (Integer) value;
            }
            default -> throw new SocketException("server socket option " + optID + " is not supported");
        }
    }

    @Override
    public Object getOption(int optID) throws SocketException {
        ServerSocket adaptor = listener().socket();
        return switch (optID) {
            case SO_TIMEOUT -> soTimeout;
            case SO_REUSEADDR -> adaptor.getReuseAddress();
            case SO_RCVBUF -> adaptor.getReceiveBufferSize();
            case SO_BINDADDR -> getInetAddress();
            default -> throw new SocketException("server socket option " + optID + " is not supported");
        };
    }

    @Override
    protected <T> void setOption(SocketOption<T> name, T value) throws IOException {
        listener().setOption(name, value);
        if (name == StandardSocketOptions.SO_RCVBUF) {
            preparation.receiveBufferSize = (Integer) value;
        }
    }

    @Override
    protected <T> T getOption(SocketOption<T> name) throws IOException {
        return listener().getOption(name);
    }

    @Override
    protected Set<SocketOption<?>> supportedOptions() {
        return listener == null ? Set.of() : listener.supportedOptions();
    }

    // ---- a server socket has no connection of its own ----

    @Override
    protected void connect(String host, int port) throws IOException {
        throw notAConnection();
    }

    @Override
    protected void connect(InetAddress address, int port) throws IOException {
        throw notAConnection();
    }

    @Override
    protected void connect(SocketAddress address, int timeout) throws IOException {
        throw notAConnection();
    }

    @Override
    protected InputStream getInputStream() throws IOException {
        throw notAConnection();
    }

    @Override
    protected OutputStream getOutputStream() throws IOException {
        throw notAConnection();
    }

    @Override
    protected int available() throws IOException {
        throw notAConnection();
    }

    @Override
    protected void sendUrgentData(int data) throws IOException {
        throw notAConnection();
    }

    private static SocketException notAConnection() {
        return new SocketException("a server socket has no connection of its own");
    }
}
