package org.aldeia.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.SocketChannel;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.bootstrap.AddressText;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.bootstrap.ClientBootstrap;
import org.aldeia.core.bootstrap.Routes;
import org.aldeia.core.plain.PlainChannelIo;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.upgrade.PipedUpgrade;
import org.aldeia.core.upgrade.TcpFirstChannel;

/**
 * A socket whose bytes travel over the Aldeia transport of this JVM (thesis Fig. 4.2): code
 * written for {@link Socket} switches by adding the prefix "Aldeia". The connection is set up
 * by the bootstrap of thesis Fig. 4.4 over a short-lived plain TCP connection to the same host
 * and port; the addresses and ports this socket reports are those of that connection.
 *
 * <p>Every method of {@link Socket} that would reach the superclass's SocketImpl is
 * overridden, so no OS socket is ever created behind an Aldeia socket. Socket options are
 * validated and stored (see {@link StoredSocketOptions}); SO_TIMEOUT is honoured by reads;
 * SO_SNDBUF and SO_RCVBUF size the connection (see {@link #setSendBufferSize}).
 */
public class AldeiaSocket extends Socket {

    private final AldeiaEnvironment environment;
    private final int id;
    private final StoredSocketOptions options = StoredSocketOptions.forSocket();
    private volatile int soTimeout;
    private volatile boolean oobInline;
    private volatile int bootstrapTimeoutMillis = BootstrapProtocol.CLIENT_TIMEOUT_MILLIS;

    private final Object stateLock = new Object();
    /** The bootstrap connection while bound or connecting; close() closes it to abort a connect. */
    private SocketChannel bootstrap;
    private boolean connecting;
    private InetSocketAddress localAddress;
    private InetSocketAddress remoteAddress;
    private ChannelRelease release;
    private Channel channel;
    /** The memory of the connection, once established; SO_SNDBUF and SO_RCVBUF report it. */
    private volatile BufferSizes sizesInUse;
    private AldeiaInputStream input;
    private AldeiaOutputStream output;
    private volatile boolean connected;
    private volatile boolean closed;
    private volatile boolean inputShutdown;
    private volatile boolean outputShutdown;

    /** An unconnected socket; {@link #connect(SocketAddress)} connects it. */
    public AldeiaSocket() {
        this(AldeiaEnvironment.global());
    }

    AldeiaSocket(AldeiaEnvironment environment) {
        // The superclass's impl is created but never used, so it never opens an OS socket (when
        // Aldeia is installed it is an InstalledSocketImpl, which opens nothing until created).
        super();
        this.environment = environment;
        this.id = environment.nextSocketId();
    }

    /**
     * A socket that will run its bootstrap over {@code unconnected}, a channel the caller
     * opened (and maybe bound) before it knew the connection would be Aldeia's: an
     * {@link InstalledSocketImpl} whose connect matched a rule.
     */
    AldeiaSocket(AldeiaEnvironment environment, SocketChannel unconnected) throws IOException {
        this(environment);
        bootstrap = unconnected;
        localAddress = (InetSocketAddress) unconnected.getLocalAddress();
    }

    /** Connects at once to {@code host} ({@code null}: the loopback address) and {@code port}. */
    public AldeiaSocket(String host, int port) throws UnknownHostException, IOException {
        this();
        connectAtOnce(addressOf(host, port), null);
    }

    public AldeiaSocket(InetAddress address, int port) throws IOException {
        this();
        connectAtOnce(new InetSocketAddress(Objects.requireNonNull(address, "address"), port), null);
    }

    public AldeiaSocket(String host, int port, InetAddress localAddr, int localPort) throws IOException {
        this();
        connectAtOnce(addressOf(host, port), new InetSocketAddress(localAddr, localPort));
    }

    public AldeiaSocket(InetAddress address, int port, InetAddress localAddr, int localPort) throws IOException {
        this();
        connectAtOnce(new InetSocketAddress(Objects.requireNonNull(address, "address"), port),
                new InetSocketAddress(localAddr, localPort));
    }

    private static InetSocketAddress addressOf(String host, int port) throws UnknownHostException {
        return host != null ? new InetSocketAddress(host, port)
                : new InetSocketAddress(InetAddress.getByName(null), port);
    }

    /** As java.net's constructors do: a failed connect closes the socket. */
    private void connectAtOnce(SocketAddress remote, SocketAddress local) throws IOException {
        try {
            if (local != null) {
                bind(local);
            }
            connect(remote);
        } catch (IOException | RuntimeException e) {
            closeAfterFailedConnect(e);
            throw e;
        }
    }

    private void closeAfterFailedConnect(Exception failure) {
        try {
            close();
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    /** The serial id of this socket in its JVM, from 0 (thesis 4.4.2). */
    public int id() {
        return id;
    }

    /** Bounds each wait for the peer during the bootstrap; for tests of broken peers. */
    void setBootstrapTimeout(int millis) {
        bootstrapTimeoutMillis = millis;
    }

    @Override
    public void bind(SocketAddress bindpoint) throws IOException {
        if (bindpoint != null && !(bindpoint instanceof InetSocketAddress)) {
            throw new IllegalArgumentException("Unsupported address type");
        }
        InetSocketAddress address = (InetSocketAddress) bindpoint;
        if (address != null && address.isUnresolved()) {
            throw new SocketException("Unresolved address");
        }
        synchronized (stateLock) {
            checkNotClosed();
            if (isBound()) {
                throw new SocketException("Already bound");
            }
            SocketChannel channel = SocketChannel.open();
            try {
                channel.bind(address);
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
            bootstrap = channel;
            localAddress = (InetSocketAddress) channel.getLocalAddress();
        }
    }

    @Override
    public void connect(SocketAddress endpoint) throws IOException {
        connect(endpoint, 0);
    }

    /**
     * Steps 1 to 5 of thesis Fig. 4.4: starts the environment if this is the first socket,
     * connects the bootstrap (honouring {@code timeout}), exchanges connection information,
     * connects the Aldeia channel and closes the bootstrap.
     */
    @Override
    public void connect(SocketAddress endpoint, int timeout) throws IOException {
        if (endpoint == null) {
            throw new IllegalArgumentException("connect: The address can't be null");
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("connect: timeout can't be negative");
        }
        if (!(endpoint instanceof InetSocketAddress remote)) {
            throw new IllegalArgumentException("Unsupported address type");
        }
        SocketChannel channel;
        synchronized (stateLock) {
            checkNotClosed();
            if (connected || connecting) {
                throw new SocketException(connected ? "already connected" : "connect already in progress");
            }
            if (remote.isUnresolved()) {
                throw new UnknownHostException(remote.getHostName());
            }
            channel = bootstrap != null ? bootstrap : SocketChannel.open();
            bootstrap = channel;
            connecting = true;
        }
        boolean tcpFirst = false;
        try {
            int upgradeAfter = environment.configuration().upgradeAfter();
            if (upgradeAfter > 0) {
                connectTcpFirst(channel, remote, timeout, upgradeAfter);
                tcpFirst = true;
                return;
            }
            Routes routes = environment.routes();
            Transport transport = routes.toward(remote);
            long start = System.nanoTime();
            BufferSizes sizes = chooseSizes();
            attach(ClientBootstrap.connect(channel, routes, transport,
                    endpointThenTcp(transport, sizes, channel, remote, timeout),
                    other -> other.createEndpoint(id, sizes.endpoint()), bootstrapWait(timeout, start)),
                    sizes, (InetSocketAddress) channel.getLocalAddress(), remote);
        } catch (IOException | RuntimeException e) {
            if (closed) {
                throw abortedByClose(e);
            }
            closeAfterFailedConnect(e); // as java.net does
            if (e instanceof IOException io) {
                throw JavaNetExceptions.of(io);
            }
            throw e;
        } finally {
            finishBootstrap(channel, tcpFirst);
        }
    }

    /**
     * A TCP-first connection (aldeia.conf upgrade_after): the TCP connection and its start, no
     * more; the connection carries data at once and moves to its route once it has lived
     * {@code upgradeAfterMillis} ({@link TcpFirstChannel}, {@link PipedUpgrade}).
     */
    private void connectTcpFirst(SocketChannel tcp, InetSocketAddress remote, int timeout, int upgradeAfterMillis)
            throws IOException {
        // Connected in non-blocking mode, as the channel stays: the socket adaptor's connect
        // switches the mode there and back (four system calls) and is one more object.
        PlainChannelIo io = new PlainChannelIo(tcp);
        try {
            io.connect(remote, timeout);
        } catch (IOException | RuntimeException e) {
            io.close(); // with the selector a connect that had to wait made
            throw e;
        }
        tcp.setOption(StandardSocketOptions.TCP_NODELAY, true); // Aldeia writes go at once, on every route
        BufferSizes sizes = chooseSizes();
        int waitMillis = bootstrapTimeoutMillis;
        TcpFirstChannel connection = TcpFirstChannel.client(tcp, io, () -> "server at " + AddressText.of(remote),
                BootstrapProtocol.tcpFirst().array(), BootstrapProtocol.start().array(),
                TimeUnit.MILLISECONDS.toNanos(upgradeAfterMillis),
                PipedUpgrade.starter((c, in, out) -> upgrade(remote, in, out, sizes, waitMillis), 4L * waitMillis));
        attach(connection, sizes, (InetSocketAddress) tcp.getLocalAddress(), remote);
    }

    /** The client bootstrap of a TCP-first connection's upgrade, over its control frames. */
    private Channel upgrade(InetSocketAddress remote, InputStream in, OutputStream out, BufferSizes sizes,
            int waitMillis) throws IOException {
        Routes routes = environment.routes();
        Transport transport = routes.toward(remote);
        return ClientBootstrap.upgrade(remote, in, out, routes, transport, transport.createEndpoint(id, sizes.endpoint()),
                other -> other.createEndpoint(id, sizes.endpoint()), waitMillis);
    }

    /**
     * Step 2, then step 1: the endpoint is created before the TCP connection, so that the HELLO
     * follows the handshake at once and the server's selector, woken by the new connection,
     * finds it there instead of waking up a second time for it. A TCP connect that fails
     * releases the endpoint.
     */
    private Endpoint endpointThenTcp(Transport transport, BufferSizes sizes, SocketChannel channel,
            InetSocketAddress remote, int timeout) throws IOException {
        Endpoint endpoint = transport.createEndpoint(id, sizes.endpoint());
        try {
            channel.socket().connect(remote, timeout);
            return endpoint;
        } catch (IOException | RuntimeException e) {
            try {
                endpoint.close();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * A connect timeout bounds the whole connect, as java.net's does: a server whose TCP backlog
     * took the connection but that never accepts it must not hold connect for the bootstrap's
     * own, longer bound.
     */
    private int bootstrapWait(int connectTimeout, long start) throws SocketTimeoutException {
        if (connectTimeout == 0) {
            return bootstrapTimeoutMillis;
        }
        long left = connectTimeout - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        if (left <= 0) {
            throw new SocketTimeoutException("Connect timed out");
        }
        return (int) Math.min(left, bootstrapTimeoutMillis);
    }

    /**
     * The memory of the connection a server socket prepares for this (accepted) socket: from
     * its SO_SNDBUF and SO_RCVBUF (inherited from the server socket), or the configuration's.
     */
    BufferSizes connectionSizes() throws IOException {
        return chooseSizes();
    }

    /**
     * Gives this socket the connection a server socket prepared for it ({@link
     * BootstrapAcceptor}): the server side of the bootstrap has run.
     */
    void attachAccepted(Channel connectedChannel, BufferSizes sizes, InetSocketAddress local,
            InetSocketAddress remote) throws IOException {
        attach(connectedChannel, sizes, local, remote);
    }

    /** The connection's channel, null before connect: what carries it, for tests. */
    Channel connection() {
        synchronized (stateLock) {
            return channel;
        }
    }

    /** Called once the environment is started, so its configuration is known. */
    private BufferSizes chooseSizes() throws IOException {
        return BufferSizes.choose(environment.configuration(), options.explicit(StandardSocketOptions.SO_SNDBUF),
                options.explicit(StandardSocketOptions.SO_RCVBUF));
    }

    private void attach(Channel connectedChannel, BufferSizes sizes, InetSocketAddress local,
            InetSocketAddress remote) throws IOException {
        synchronized (stateLock) {
            if (closed) {
                connectedChannel.close();
                throw new SocketException("Socket closed");
            }
            channel = connectedChannel;
            sizesInUse = sizes;
            release = environment.track(this, connectedChannel, id);
            localAddress = local;
            remoteAddress = remote;
            input = new AldeiaInputStream(this, connectedChannel);
            output = new AldeiaOutputStream(this, connectedChannel);
            connected = true;
        }
    }

    /**
     * Step 5: the bootstrap connection is closed whether the connection succeeded or not, unless
     * it is the connection ({@code carriesData}: TCP first).
     */
    private void finishBootstrap(SocketChannel used, boolean carriesData) throws IOException {
        synchronized (stateLock) {
            connecting = false;
            if (bootstrap == used) {
                bootstrap = null;
            }
        }
        if (!carriesData) {
            used.close();
        }
    }

    private static SocketException abortedByClose(Exception cause) {
        SocketException e = new SocketException("Socket closed");
        e.initCause(cause);
        return e;
    }

    @Override
    public InputStream getInputStream() throws IOException {
        synchronized (stateLock) {
            checkConnectedAndOpen();
            if (inputShutdown) {
                throw new SocketException("Socket input is shutdown");
            }
            return input;
        }
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
        synchronized (stateLock) {
            checkConnectedAndOpen();
            if (outputShutdown) {
                throw new SocketException("Socket output is shutdown");
            }
            return output;
        }
    }

    /**
     * Closes the channel, which first delivers every posted write and then tells the peer that
     * no more bytes follow (with SO_LINGER 0: resets the connection, as TCP does, the peer's
     * reads and writes fail with "connection reset"); aborts a connect in progress. Idempotent.
     */
    @Override
    public void close() throws IOException {
        ChannelRelease toRelease;
        SocketChannel toAbort;
        boolean abortive = options.get(StandardSocketOptions.SO_LINGER) == 0;   // TCP's reset
        synchronized (stateLock) {
            if (closed) {
                return;
            }
            closed = true;
            toRelease = release;
            toAbort = bootstrap;
        }
        try {
            if (toAbort != null) {
                toAbort.close();
            }
            if (toRelease != null) {
                toRelease.release(abortive);
            }
        } catch (IOException e) {
            throw JavaNetExceptions.of(e);
        }
    }

    @Override
    public void shutdownInput() throws IOException {
        synchronized (stateLock) {
            checkConnectedAndOpen();
            if (inputShutdown) {
                throw new SocketException("Socket input is already shutdown");
            }
            inputShutdown = true;
            try {
                input.shutdown();
            } catch (IOException e) {
                throw JavaNetExceptions.of(e);
            }
        }
    }

    @Override
    public void shutdownOutput() throws IOException {
        Channel toShut;
        synchronized (stateLock) {
            checkConnectedAndOpen();
            if (outputShutdown) {
                throw new SocketException("Socket output is already shutdown");
            }
            outputShutdown = true;
            toShut = channel;
        }
        try {
            toShut.shutdownOutput();
        } catch (IOException e) {
            throw JavaNetExceptions.of(e);
        }
    }

    private void checkNotClosed() throws SocketException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
    }

    private void checkConnectedAndOpen() throws SocketException {
        checkNotClosed();
        if (!connected) {
            throw new SocketException("Socket is not connected");
        }
    }

    @Override
    public boolean isConnected() {
        return connected;
    }

    @Override
    public boolean isBound() {
        synchronized (stateLock) {
            return localAddress != null;
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public boolean isInputShutdown() {
        return inputShutdown;
    }

    @Override
    public boolean isOutputShutdown() {
        return outputShutdown;
    }

    @Override
    public InetAddress getInetAddress() {
        InetSocketAddress remote = remoteSocketAddress();
        return remote == null ? null : remote.getAddress();
    }

    @Override
    public int getPort() {
        InetSocketAddress remote = remoteSocketAddress();
        return remote == null ? 0 : remote.getPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return remoteSocketAddress();
    }

    private InetSocketAddress remoteSocketAddress() {
        synchronized (stateLock) {
            return connected ? remoteAddress : null;
        }
    }

    /** The local address of the bootstrap connection; the wildcard address when unbound or closed. */
    @Override
    public InetAddress getLocalAddress() {
        InetSocketAddress local = localSocketAddress();
        return local == null || closed ? new InetSocketAddress(0).getAddress() : local.getAddress();
    }

    @Override
    public int getLocalPort() {
        InetSocketAddress local = localSocketAddress();
        return local == null ? -1 : local.getPort();
    }

    /** Like java.net, a closed socket keeps its local port but reports the wildcard address. */
    @Override
    public SocketAddress getLocalSocketAddress() {
        InetSocketAddress local = localSocketAddress();
        return local == null || !closed ? local : new InetSocketAddress(getLocalAddress(), local.getPort());
    }

    private InetSocketAddress localSocketAddress() {
        synchronized (stateLock) {
            return localAddress;
        }
    }

    /** Aldeia sockets have no NIO channel, like java.net sockets not made from one. */
    @Override
    public SocketChannel getChannel() {
        return null;
    }

    @Override
    public String toString() {
        InetSocketAddress remote = remoteSocketAddress();
        if (remote == null) {
            return "AldeiaSocket[unconnected,id=" + id + "]";
        }
        return "AldeiaSocket[addr=" + remote.getAddress() + ",port=" + remote.getPort() + ",localport="
                + getLocalPort() + ",id=" + id + "]";
    }

    // ---- socket options: validated and stored, see StoredSocketOptions; buffer sizes, see BufferSizes ----

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        checkNotClosed();
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout can't be negative");
        }
        soTimeout = timeout;
    }

    @Override
    public int getSoTimeout() throws SocketException {
        checkNotClosed();
        return soTimeout;
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        setOption(StandardSocketOptions.TCP_NODELAY, on);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return getOption(StandardSocketOptions.TCP_NODELAY);
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        if (on && linger < 0) {
            throw new IllegalArgumentException("invalid value for SO_LINGER");
        }
        setOption(StandardSocketOptions.SO_LINGER, on ? Math.min(linger, 65535) : -1);
    }

    @Override
    public int getSoLinger() throws SocketException {
        return getOption(StandardSocketOptions.SO_LINGER);
    }

    /**
     * Refused: TCP's urgent byte travels out of band, and whether the peer's reads see it
     * depends on the peer's SO_OOBINLINE, which an Aldeia connection has no way to carry or
     * tell apart from the stream; sending nothing, or the byte in the stream, would lose or
     * add a byte silently in one of the two cases. README, "The differences", lists this.
     */
    @Override
    public void sendUrgentData(int data) throws IOException {
        checkNotClosed();
        throw new SocketException("Urgent data not supported: an Aldeia connection has no out-of-band channel");
    }

    @Override
    public void setOOBInline(boolean on) throws SocketException {
        checkNotClosed();
        oobInline = on;
    }

    @Override
    public boolean getOOBInline() throws SocketException {
        checkNotClosed();
        return oobInline;
    }

    /**
     * Sizes the send ring of the connection: set before connect, the ring registered when the
     * connection is established holds {@code size} bytes, at least one mtu and at most 1 GiB;
     * unset, the configuration's send_region_size.
     * Once connected, {@link #getSendBufferSize()} reports the ring's size; a later set is
     * validated and accepted, but the connection keeps its ring, because a registered ring
     * cannot be resized under the sends posted from it.
     */
    @Override
    public void setSendBufferSize(int size) throws SocketException {
        setOption(StandardSocketOptions.SO_SNDBUF, size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return getOption(StandardSocketOptions.SO_SNDBUF);
    }

    /**
     * Sizes the receive side of the connection: set before connect, {@code size} bytes (64 KiB
     * to 1 GiB) become its receive window, what it holds unread before the peer's writer blocks,
     * as TCP's receive buffer; unset, the configuration's receive_window. The posted receive
     * buffers are the configuration's receive_buffers, fewer when the window holds fewer
     * mtu-sized blocks. An accepted socket gets the value set on its
     * {@link AldeiaServerSocket}, as java.net's accepted sockets do. Once connected,
     * {@link #getReceiveBufferSize()} reports the window; a later set is validated and accepted,
     * but the connection keeps its window, like the send ring (see {@link #setSendBufferSize}).
     */
    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        setOption(StandardSocketOptions.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return getOption(StandardSocketOptions.SO_RCVBUF);
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        setOption(StandardSocketOptions.SO_KEEPALIVE, on);
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
        return getOption(StandardSocketOptions.SO_KEEPALIVE);
    }

    @Override
    public void setTrafficClass(int tc) throws SocketException {
        setOption(StandardSocketOptions.IP_TOS, tc);
    }

    @Override
    public int getTrafficClass() throws SocketException {
        return getOption(StandardSocketOptions.IP_TOS);
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        setOption(StandardSocketOptions.SO_REUSEADDR, on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return getOption(StandardSocketOptions.SO_REUSEADDR);
    }

    @Override
    public <T> Socket setOption(SocketOption<T> name, T value) throws SocketException {
        checkNotClosed();
        options.set(name, value);
        return this;
    }

    /** SO_SNDBUF and SO_RCVBUF: what was set until connected, then the sizes in use. */
    @Override
    public <T> T getOption(SocketOption<T> name) throws SocketException {
        checkNotClosed();
        BufferSizes sizes = sizesInUse;
        if (sizes != null && name == StandardSocketOptions.SO_SNDBUF) {
            return name.type().cast(sizes.sendBufferSize());
        }
        if (sizes != null && name == StandardSocketOptions.SO_RCVBUF) {
            return name.type().cast(sizes.receiveBufferSize());
        }
        return options.get(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return options.supported();
    }

    /** Aldeia has one way to move bytes; like java.net after connect, preferences are ignored. */
    @Override
    public void setPerformancePreferences(int connectionTime, int latency, int bandwidth) {
        // nothing to choose between
    }
}
