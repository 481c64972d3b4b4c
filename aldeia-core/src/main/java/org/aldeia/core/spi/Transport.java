package org.aldeia.core.spi;

import java.io.Closeable;
import java.io.IOException;

/** A provider's live environment, shared by every Aldeia socket of the JVM. */
public interface Transport extends Closeable {

    /** One line for the log and for users: e.g. "MicroVAPI over DECK dynamic/tcp, mtu 1024". */
    String description();

    /**
     * Creates the queue pair of one socket (step 2 of the connection algorithm), not yet
     * connected.
     *
     * @param socketId the serial id of the Aldeia socket, from 0
     * @param sizes the send ring and receive buffers of this connection (from the socket's
     *     SO_SNDBUF and SO_RCVBUF, or the configuration)
     */
    Endpoint createEndpoint(int socketId, EndpointSizes sizes) throws IOException;
}
