package org.aldeia.core;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.util.Optional;
import java.util.Set;
import org.aldeia.core.bootstrap.Routes;
import org.aldeia.core.plain.PlainChannelCleaner;
import org.aldeia.core.spi.Transport;

/**
 * A server socket whose {@link #accept()} returns {@link AldeiaSocket}s (thesis Fig. 4.2). It
 * listens with a plain TCP {@link ServerSocketChannel} on its port for the bootstraps of
 * connecting Aldeia sockets and runs the server side of each bootstrap (thesis Fig. 4.4) in the
 * background ({@link BootstrapAcceptor}); {@link #accept()} returns the next connected socket.
 * As with TCP, a client's connect completes once the server has taken it, and a slow or dead
 * client never holds accept for the others. Like {@link AldeiaSocket}, it overrides every
 * method that would reach the superclass's SocketImpl, so no other OS socket is created.
 *
 * <p>A connection whose bootstrap fails (a foreign client, a peer that dies) is logged, naming
 * the peer, and dropped; accept goes on with the next one.
 */
public class AldeiaServerSocket extends ServerSocket {

    private static final int DEFAULT_BACKLOG = 50;
    /**
     * The kernel's queue of connections for the acceptor to take: the acceptor takes them as they
     * come (the backlog it keeps is its slots), so under a burst of connections (a flood, many
     * clients at once) a short kernel queue would only drop SYNs, which cost a client a second.
     */
    private static final int KERNEL_BACKLOG = 1024;

    private final AldeiaEnvironment environment;
    private final StoredSocketOptions options = StoredSocketOptions.forServerSocket();
    private volatile int soTimeout;

    private final Object stateLock = new Object();
    private ServerSocketChannel listener;
    private BootstrapAcceptor acceptor;
    private InetSocketAddress localAddress;
    private volatile boolean closed;

    /** An unbound server socket; {@link #bind(SocketAddress)} binds it. */
    public AldeiaServerSocket() throws IOException {
        this(AldeiaEnvironment.global());
    }

    AldeiaServerSocket(AldeiaEnvironment environment) throws IOException {
        super(); // the superclass's impl is created but never used, so it never opens an OS socket
        this.environment = environment;
    }

    /** Binds to {@code port} on every local address; 0 picks an ephemeral port. */
    public AldeiaServerSocket(int port) throws IOException {
        this(port, DEFAULT_BACKLOG, null);
    }

    public AldeiaServerSocket(int port, int backlog) throws IOException {
        this(port, backlog, null);
    }

    /** @param bindAddr the local address to listen on, or null for every local address */
    public AldeiaServerSocket(int port, int backlog, InetAddress bindAddr) throws IOException {
        this(AldeiaEnvironment.global(), port, backlog, bindAddr);
    }

    AldeiaServerSocket(AldeiaEnvironment environment, int port, int backlog, InetAddress bindAddr)
            throws IOException {
        this(environment);
        if (port < 0 || port > 0xFFFF) {
            throw new IllegalArgumentException("Port value out of range: " + port);
        }
        try {
            bind(new InetSocketAddress(bindAddr, port), backlog);
        } catch (IOException | RuntimeException e) {
            try {
                close();
            } catch (IOException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
    }

    @Override
    public void bind(SocketAddress endpoint) throws IOException {
        bind(endpoint, DEFAULT_BACKLOG);
    }

    /**
     * Starts the Aldeia environment if this is the JVM's first use of it, so that a bad
     * configuration or a missing native library is reported here rather than at the first
     * accept, then listens for bootstraps.
     */
    @Override
    public void bind(SocketAddress endpoint, int backlog) throws IOException {
        InetSocketAddress address = endpoint == null ? new InetSocketAddress(0) : checkAddress(endpoint);
        synchronized (stateLock) {
            checkNotClosed();
            if (listener != null) {
                throw new SocketException("Already bound");
            }
            try {
                environment.transport();
            } catch (IOException e) {
                throw JavaNetExceptions.of(e);
            }
            ServerSocketChannel channel = ServerSocketChannel.open();
            try {
                options.applyExplicit(channel);
                channel.bind(address, Math.max(KERNEL_BACKLOG, backlog));
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
            listener = channel;
            localAddress = (InetSocketAddress) channel.getLocalAddress();
            acceptor = new BootstrapAcceptor(channel, backlog < 1 ? DEFAULT_BACKLOG : backlog,
                    "port " + localAddress.getPort(), BootstrapAcceptor.Mode.ALDEIA,
                    BootstrapAcceptor.Limits.of(environment.configuration()), new AcceptedSockets(environment, options));
            // As the JDK's server sockets are, one dropped without close is closed once unreachable.
            PlainChannelCleaner.closeWhenUnreachable(this, acceptor);
        }
    }

    private static InetSocketAddress checkAddress(SocketAddress endpoint) throws SocketException {
        if (!(endpoint instanceof InetSocketAddress address)) {
            throw new IllegalArgumentException("Unsupported address type");
        }
        if (address.isUnresolved()) {
            throw new SocketException("Unresolved address");
        }
        return address;
    }

    /**
     * The next connected Aldeia socket, waiting at most SO_TIMEOUT, if set.
     *
     * @throws SocketTimeoutException if SO_TIMEOUT passed without a connection
     * @throws SocketException if the server socket is closed, also while waiting
     */
    @Override
    public AldeiaSocket accept() throws IOException {
        BootstrapAcceptor connections;
        synchronized (stateLock) {
            checkNotClosed();
            if (acceptor == null) {
                throw new SocketException("Socket is not bound yet");
            }
            connections = acceptor;
        }
        try {
            return ((BootstrapAcceptor.AldeiaClient) connections.accept(soTimeout)).socket();
        } catch (IOException e) {
            throw JavaNetExceptions.of(e);
        }
    }

    /**
     * The sockets of the clients accepted: apart from this server socket, so that the acceptor's
     * threads do not keep it reachable. As java.net's accepted sockets inherit their listener's
     * SO_RCVBUF, a value set on the server socket sizes the receive window of every connection
     * accepted (see {@link AldeiaSocket#setReceiveBufferSize}).
     */
    private record AcceptedSockets(AldeiaEnvironment environment, StoredSocketOptions options)
            implements BootstrapAcceptor.Sockets {
        @Override
        public AldeiaSocket newSocket() throws IOException {
            AldeiaSocket socket = new AldeiaSocket(environment);
            Optional<Integer> receiveBufferSize = options.explicit(StandardSocketOptions.SO_RCVBUF);
            if (receiveBufferSize.isPresent()) {
                socket.setReceiveBufferSize(receiveBufferSize.get());
            }
            return socket;
        }

        @Override
        public Routes routes() throws IOException {
            return environment.routes();
        }
    }

    /** Stops listening; a thread blocked in accept gets a SocketException. Idempotent. */
    @Override
    public void close() throws IOException {
        BootstrapAcceptor toClose;
        synchronized (stateLock) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = acceptor;
        }
        if (toClose != null) {
            toClose.close(); // closes the listener too
        }
    }

    private void checkNotClosed() throws SocketException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
    }

    @Override
    public boolean isBound() {
        return boundAddress() != null;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public InetAddress getInetAddress() {
        InetSocketAddress local = boundAddress();
        return local == null ? null : local.getAddress();
    }

    @Override
    public int getLocalPort() {
        InetSocketAddress local = boundAddress();
        return local == null ? -1 : local.getPort();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return boundAddress();
    }

    private InetSocketAddress boundAddress() {
        synchronized (stateLock) {
            return localAddress;
        }
    }

    /** Aldeia server sockets have no NIO channel, like java.net ones not made from one. */
    @Override
    public ServerSocketChannel getChannel() {
        return null;
    }

    @Override
    public String toString() {
        InetSocketAddress local = boundAddress();
        return local == null ? "AldeiaServerSocket[unbound]"
                : "AldeiaServerSocket[addr=" + local.getAddress() + ",localport=" + local.getPort() + "]";
    }

    // ---- options: SO_TIMEOUT bounds accept; SO_REUSEADDR and SO_RCVBUF apply to the listener,
    // and SO_RCVBUF to the accepted connections too ----

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        checkNotClosed();
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        soTimeout = timeout;
    }

    @Override
    public int getSoTimeout() throws IOException {
        checkNotClosed();
        return soTimeout;
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        setStored(StandardSocketOptions.SO_REUSEADDR, on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return getStored(StandardSocketOptions.SO_REUSEADDR);
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        setStored(StandardSocketOptions.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return getStored(StandardSocketOptions.SO_RCVBUF);
    }

    /**
     * Options set after bind no longer reach the listener; like java.net, they matter before
     * bind. SO_RCVBUF still sizes the connections accepted after it was set.
     */
    @Override
    public <T> ServerSocket setOption(SocketOption<T> name, T value) throws IOException {
        setStored(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return getStored(name);
    }

    private <T> void setStored(SocketOption<T> name, T value) throws SocketException {
        checkNotClosed();
        options.set(name, value);
    }

    private <T> T getStored(SocketOption<T> name) throws SocketException {
        checkNotClosed();
        return options.get(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return options.supported();
    }

    @Override
    public void setPerformancePreferences(int connectionTime, int latency, int bandwidth) {
        // one way to move bytes: nothing to choose between
    }
}
