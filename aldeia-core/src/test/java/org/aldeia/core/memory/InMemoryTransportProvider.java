package org.aldeia.core.memory;

import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.spi.TransportProvider;

/**
 * A transport for aldeia-core's tests: channels are in-JVM byte queues, so sockets, streams
 * and the bootstrap are tested without native code. Registered under META-INF/services so the
 * ServiceLoader path is exercised too.
 */
public final class InMemoryTransportProvider implements TransportProvider {

    public static final String SOCKET_TYPE = "SOCKET_TEST";

    /** Endpoints and channels not yet closed, JVM-wide; tests check that none leaks. */
    public static int openEndpoints() {
        return InMemoryEndpoint.open();
    }

    @Override
    public String socketType() {
        return SOCKET_TYPE;
    }

    @Override
    public boolean isAvailable(AldeiaConfiguration configuration) {
        return true;
    }

    @Override
    public Transport open(AldeiaConfiguration configuration) throws java.io.IOException {
        return new InMemoryTransport(configuration);
    }
}
