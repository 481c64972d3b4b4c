package org.aldeia.core;

import java.io.IOException;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.channels.NetworkChannel;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The socket options of an Aldeia socket. Aldeia's channel is not a TCP connection, so most
 * options have no effect on it; they are validated and stored so that code written for
 * java.net (which sets TCP_NODELAY, keep-alive...) runs unchanged. SO_SNDBUF and SO_RCVBUF, if
 * set, size the connection when it is established (see {@link BufferSizes}). Storing them
 * here, instead of in the superclass's SocketImpl, also keeps java.net.Socket from ever
 * creating an OS socket behind the Aldeia socket. Thread-safe.
 */
final class StoredSocketOptions {

    private static final int DEFAULT_BUFFER_SIZE = 64 * 1024;

    private final Map<SocketOption<?>, Object> values = new LinkedHashMap<>();
    private final Set<SocketOption<?>> explicitlySet = new HashSet<>();

    private StoredSocketOptions() {}

    static StoredSocketOptions forSocket() {
        StoredSocketOptions options = new StoredSocketOptions();
        options.values.put(StandardSocketOptions.TCP_NODELAY, false);
        options.values.put(StandardSocketOptions.SO_KEEPALIVE, false);
        options.values.put(StandardSocketOptions.SO_LINGER, -1);
        options.values.put(StandardSocketOptions.SO_SNDBUF, DEFAULT_BUFFER_SIZE);
        options.values.put(StandardSocketOptions.SO_RCVBUF, DEFAULT_BUFFER_SIZE);
        options.values.put(StandardSocketOptions.SO_REUSEADDR, false);
        options.values.put(StandardSocketOptions.IP_TOS, 0);
        return options;
    }

    /** A server socket's options also apply to its bootstrap listener, see {@link #applyExplicit}. */
    static StoredSocketOptions forServerSocket() {
        StoredSocketOptions options = new StoredSocketOptions();
        options.values.put(StandardSocketOptions.SO_RCVBUF, DEFAULT_BUFFER_SIZE);
        // java.net server sockets on Unix reuse addresses by default.
        options.values.put(StandardSocketOptions.SO_REUSEADDR, true);
        return options;
    }

    synchronized <T> void set(SocketOption<T> name, T value) {
        checkSupported(name);
        if (value == null || !name.type().isInstance(value)) {
            throw new IllegalArgumentException("Invalid value '" + value + "' for " + name);
        }
        if ((name == StandardSocketOptions.SO_SNDBUF || name == StandardSocketOptions.SO_RCVBUF)
                && (Integer) value <= 0) {
            throw new IllegalArgumentException("Invalid value '" + value + "' for " + name + ": must be positive");
        }
        if (name == StandardSocketOptions.IP_TOS && ((Integer) value < 0 || (Integer) value > 255)) {
            throw new IllegalArgumentException("Invalid value '" + value + "' for " + name + ": must be 0..255");
        }
        values.put(name, value);
        explicitlySet.add(name);
    }

    synchronized <T> T get(SocketOption<T> name) {
        checkSupported(name);
        return name.type().cast(values.get(name));
    }

    /** The value the user set, or empty if {@code name} still has its default. */
    synchronized <T> Optional<T> explicit(SocketOption<T> name) {
        checkSupported(name);
        return explicitlySet.contains(name) ? Optional.of(name.type().cast(values.get(name))) : Optional.empty();
    }

    Set<SocketOption<?>> supported() {
        return Set.copyOf(values.keySet());
    }

    /** Applies the options the user set to a real channel, e.g. SO_REUSEADDR to a listener. */
    synchronized void applyExplicit(NetworkChannel channel) throws IOException {
        for (SocketOption<?> name : explicitlySet) {
            apply(channel, name);
        }
    }

    private <T> void apply(NetworkChannel channel, SocketOption<T> name) throws IOException {
        channel.setOption(name, name.type().cast(values.get(name)));
    }

    private void checkSupported(SocketOption<?> name) {
        Objects.requireNonNull(name, "name");
        if (!values.containsKey(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
    }
}
