package org.aldeia.core.memory;

import java.io.IOException;
import org.aldeia.core.AldeiaConfiguration;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.Transport;

final class InMemoryTransport implements Transport {

    private final AldeiaConfiguration configuration;
    private volatile boolean closed;

    InMemoryTransport(AldeiaConfiguration configuration) {
        this.configuration = configuration;
    }

    @Override
    public String description() {
        return "in-memory test transport, mtu " + configuration.mtu();
    }

    @Override
    public Endpoint createEndpoint(int socketId) throws IOException {
        if (closed) {
            throw new IOException("in-memory transport is closed");
        }
        return new InMemoryEndpoint(configuration.mtu(), configuration.sendRegionSize());
    }

    @Override
    public void close() {
        closed = true;
    }
}
