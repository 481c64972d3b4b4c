package org.aldeia.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketImpl;
import java.net.SocketOption;
import java.net.UnknownHostException;
import java.nio.channels.SocketChannel;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.aldeia.core.bootstrap.AddressText;
import org.aldeia.core.config.SocketRule;
import org.aldeia.core.config.SocketRules;
import org.aldeia.core.plain.PlainChannelCleaner;
import org.aldeia.core.plain.PlainChannelIo;
import org.aldeia.core.plain.PlainSocketStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The implementation behind every {@code java.net.Socket} of a JVM where {@link Aldeia#install()}
 * ran. It hands each call on to a delegate socket: until connect, a plain TCP channel's socket
 * (so bind and options behave as the JDK's do); at connect, an {@link AldeiaSocket} that takes
 * over that channel for its bootstrap when a connect rule matches the peer, otherwise the same
 * plain socket. Accepted sockets get their delegate from {@link InstalledServerSocketImpl}.
 *
 * <p>Options set before connect are remembered and set again on an AldeiaSocket that takes
 * over, so the application sees the values it set whichever way the connection goes (options
 * that only TCP has are left out there).
 */
final class InstalledSocketImpl extends SocketImpl {

    private static final Logger LOG = LoggerFactory.getLogger(InstalledSocketImpl.class);

    /** One option setting, replayed on the socket that takes over at connect. */
    @FunctionalInterface
    private interface Setting {
        void applyTo(Socket socket) throws IOException;
    }

    private final Supplier<AldeiaEnvironment> environment;
    private final SocketRules rules;

    private final Object lock = new Object();
    /** The options set so far, by option id or SocketOption, in the order last set. */
    private final Map<Object, Setting> settings = new LinkedHashMap<>();
    /** The plain channel opened by create(), until connect decides what carries the connection. */
    private SocketChannel unconnected;
    private volatile Socket delegate;
    /** The bytes a server read from an accepted plain client before handing it over. */
    private byte[] firstBytes = new byte[0];
    /** A plain connection's connect, reads and writes, once the connection is known to be plain. */
    private PlainChannelIo plain;
    private InputStream input;
    private OutputStream output;
    private boolean closed;

    InstalledSocketImpl(Supplier<AldeiaEnvironment> environment, SocketRules rules) {
        // Opens nothing: java.net.Socket creates an impl for every socket, AldeiaSocket's too.
        this.environment = environment;
        this.rules = rules;
    }

    @Override
    protected void create(boolean stream) throws IOException {
        if (!stream) {
            throw new SocketException("datagram sockets through java.net.Socket are not supported where Aldeia "
                    + "is installed");
        }
        SocketChannel channel = SocketChannel.open();
        // As the JDK's own sockets do, a socket dropped without close gives its descriptor back once
        // unreachable; an AldeiaSocket that takes the channel over closes it itself, and again is harmless.
        PlainChannelCleaner.closeWhenUnreachable(this, channel);
        synchronized (lock) {
            unconnected = channel;
            delegate = channel.socket();
        }
    }

    /**
     * Gives an accepted socket its connection: an AldeiaSocket, or a plain channel's socket and
     * the first bytes its client sent.
     */
    void accepted(Socket connection, byte[] alreadyRead) throws IOException {
        PlainChannelIo io = connection instanceof AldeiaSocket ? null : plainIo(connection.getChannel());
        synchronized (lock) {
            delegate = connection;
            plain = io;
            firstBytes = alreadyRead;
        }
    }

    /** Takes over a plain connection's channel; closed with it when this socket is unreachable. */
    private PlainChannelIo plainIo(SocketChannel channel) throws IOException {
        PlainChannelIo io = new PlainChannelIo(channel);
        PlainChannelCleaner.closeWhenUnreachable(this, io);
        return io;
    }

    /** Whether the connection is carried by Aldeia rather than plain TCP (for tests). */
    boolean isAldeia() {
        return delegate instanceof AldeiaSocket;
    }

    @Override
    protected void connect(String host, int port) throws IOException {
        connect(new InetSocketAddress(host, port), 0);
    }

    @Override
    protected void connect(InetAddress address, int port) throws IOException {
        connect(new InetSocketAddress(address, port), 0);
    }

    @Override
    protected void connect(SocketAddress address, int timeout) throws IOException {
        InetSocketAddress remote = (InetSocketAddress) address;
        if (remote.isUnresolved()) {
            throw new UnknownHostException(remote.getHostName());
        }
        Optional<SocketRule> rule = rules.matchConnect(remote);
        Socket connecting;
        PlainChannelIo plainConnecting;
        synchronized (lock) {
            if (closed || unconnected == null) {
                // a connect after a failed one: java.net.Socket closed this socket when it failed
                throw new SocketException(closed || delegate != null ? "Socket closed" : "Socket is not created");
            }
            if (rule.isPresent()) {
                AldeiaSocket aldeia = new AldeiaSocket(environment.get(), unconnected);
                replaySettings(aldeia);
                delegate = aldeia;
            } else {
                plain = plainIo(unconnected);
            }
            connecting = delegate;
            plainConnecting = plain;
            unconnected = null;
        }
        LOG.debug("Aldeia connect to {}: {}", AddressText.of(remote),
                rule.map(matched -> "Aldeia (" + matched + ")").orElse("plain TCP (no connect rule matches)"));
        if (plainConnecting != null) {
            plainConnecting.connect(remote, timeout);
        } else {
            connecting.connect(remote, timeout);
        }
    }

    /**
     * Sets again on the AldeiaSocket that takes over what was set on the plain channel. An
     * option only TCP has (TCP_KEEPIDLE, SO_REUSEPORT...), which the channel accepted, means
     * nothing to an Aldeia connection and is left out rather than failing the connect.
     */
    private void replaySettings(AldeiaSocket aldeia) throws IOException {
        for (Map.Entry<Object, Setting> setting : settings.entrySet()) {
            try {
                setting.getValue().applyTo(aldeia);
            } catch (UnsupportedOperationException tcpOnly) {
                LOG.debug("Aldeia connect: option {} applies to TCP only; not set on the Aldeia connection",
                        setting.getKey());
            }
        }
    }

    @Override
    protected void bind(InetAddress host, int port) throws IOException {
        socket().bind(new InetSocketAddress(host, port));
    }

    @Override
    protected void listen(int backlog) throws IOException {
        throw new SocketException("a client socket does not listen");
    }

    @Override
    protected void accept(SocketImpl s) throws IOException {
        throw new SocketException("a client socket does not accept");
    }

    @Override
    protected InputStream getInputStream() throws IOException {
        synchronized (lock) {
            if (input == null) {
                Socket socket = socket();
                input = plain == null ? socket.getInputStream() : PlainSocketStreams.input(socket, plain, firstBytes);
            }
            return input;
        }
    }

    @Override
    protected OutputStream getOutputStream() throws IOException {
        synchronized (lock) {
            if (output == null) {
                Socket socket = socket();
                output = plain == null ? socket.getOutputStream() : PlainSocketStreams.output(socket, plain);
            }
            return output;
        }
    }

    @Override
    protected int available() throws IOException {
        return getInputStream().available();
    }

    @Override
    protected void close() throws IOException {
        Socket toClose;
        PlainChannelIo plainToClose;
        synchronized (lock) {
            closed = true;
            toClose = delegate;
            plainToClose = plain;
        }
        try {
            if (toClose != null) {
                toClose.close();
            }
        } finally {
            if (plainToClose != null) {
                plainToClose.close(); // wakes the reads and writes waiting on it
            }
        }
    }

    @Override
    protected void shutdownInput() throws IOException {
        socket().shutdownInput();
    }

    @Override
    protected void shutdownOutput() throws IOException {
        socket().shutdownOutput();
    }

    @Override
    protected void sendUrgentData(int data) throws IOException {
        socket().sendUrgentData(data);
    }

    @Override
    protected boolean supportsUrgentData() {
        return !(delegate instanceof AldeiaSocket);
    }

    @Override
    protected InetAddress getInetAddress() {
        Socket current = delegate;
        return current == null ? null : current.getInetAddress();
    }

    @Override
    protected int getPort() {
        Socket current = delegate;
        return current == null ? 0 : current.getPort();
    }

    @Override
    protected int getLocalPort() {
        Socket current = delegate;
        return current == null ? -1 : current.getLocalPort();
    }

    private Socket socket() throws SocketException {
        Socket current = delegate;
        if (current == null) {
            throw new SocketException("Socket is not created");
        }
        return current;
    }

    // ---- options: the int ids java.net.Socket's setters use, and SocketOption ----

    @Override
    public void setOption(int optID, Object value) throws SocketException {
        Setting setting = switch (optID) {
            case SO_TIMEOUT -> socket -> socket.setSoTimeout((Integer) value);
            case TCP_NODELAY -> socket -> socket.setTcpNoDelay((Boolean) value);
            case SO_LINGER -> value instanceof Integer seconds ? socket -> socket.setSoLinger(true, seconds)
                    : socket -> socket.setSoLinger(false, 0);
            case SO_SNDBUF -> socket -> socket.setSendBufferSize((Integer) value);
            case SO_RCVBUF -> socket -> socket.setReceiveBufferSize((Integer) value);
            case SO_KEEPALIVE -> socket -> socket.setKeepAlive((Boolean) value);
            case SO_OOBINLINE -> socket -> socket.setOOBInline((Boolean) value);
            case SO_REUSEADDR -> socket -> socket.setReuseAddress((Boolean) value);
            case IP_TOS -> socket -> socket.setTrafficClass((Integer) value);
            default -> throw new SocketException("socket option " + optID + " is not supported");
        };
        try {
            set(optID, setting);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw (SocketException) new SocketException(e.getMessage()).initCause(e);
        }
    }

    @Override
    public Object getOption(int optID) throws SocketException {
        Socket socket = socket();
        return switch (optID) {
            case SO_TIMEOUT -> socket.getSoTimeout();
            case TCP_NODELAY -> socket.getTcpNoDelay();
            case SO_LINGER -> {
                int seconds = socket.getSoLinger();
                yield seconds < 0 ? Boolean.FALSE : (Object) seconds;
            }
            case SO_SNDBUF -> socket.getSendBufferSize();
            case SO_RCVBUF -> socket.getReceiveBufferSize();
            case SO_KEEPALIVE -> socket.getKeepAlive();
            case SO_OOBINLINE -> socket.getOOBInline();
            case SO_REUSEADDR -> socket.getReuseAddress();
            case IP_TOS -> socket.getTrafficClass();
            case SO_BINDADDR -> socket.getLocalAddress();
            default -> throw new SocketException("socket option " + optID + " is not supported");
        };
    }

    @Override
    protected <T> void setOption(SocketOption<T> name, T value) throws IOException {
        set(name, socket -> socket.setOption(name, value));
    }

    @Override
    protected <T> T getOption(SocketOption<T> name) throws IOException {
        return socket().getOption(name);
    }

    @Override
    protected Set<SocketOption<?>> supportedOptions() {
        Socket current = delegate;
        return current == null ? Set.of() : current.supportedOptions();
    }

    /** Sets the option on the current delegate and remembers it for one that takes over. */
    private void set(Object key, Setting setting) throws IOException {
        synchronized (lock) {
            setting.applyTo(socket());
            settings.remove(key);
            settings.put(key, setting);
        }
    }
}
