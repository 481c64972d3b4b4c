package org.aldeia.core.memory;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.aldeia.core.AldeiaConfiguration;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.EndpointSizes;
import org.aldeia.core.spi.Transport;

/**
 * Creates in-memory endpoints whose send queue holds the requested send ring's bytes, and
 * remembers the sizes each socket's endpoint was created with, for tests of SO_SNDBUF and
 * SO_RCVBUF.
 */
public final class InMemoryTransport implements Transport {

    private final AldeiaConfiguration configuration;
    private final Map<Integer, EndpointSizes> sizesBySocket = new ConcurrentHashMap<>();
    private volatile boolean closed;

    InMemoryTransport(AldeiaConfiguration configuration) {
        this.configuration = configuration;
    }

    @Override
    public String description() {
        return "in-memory test transport, mtu " + configuration.mtu();
    }

    @Override
    public Endpoint createEndpoint(int socketId, EndpointSizes sizes) throws IOException {
        if (closed) {
            throw new IOException("in-memory transport is closed");
        }
        sizesBySocket.put(socketId, sizes);
        return new InMemoryEndpoint(configuration.mtu(), sizes.sendRegionSize());
    }

    /** The sizes the endpoint of socket {@code socketId} was created with; null if none was. */
    public EndpointSizes sizesOf(int socketId) {
        return sizesBySocket.get(socketId);
    }

    @Override
    public void close() {
        closed = true;
    }
}
