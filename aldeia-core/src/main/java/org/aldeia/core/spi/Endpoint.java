package org.aldeia.core.spi;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;

/**
 * One side of an Aldeia connection before it is connected: a queue pair waiting for the
 * peer's connection information. The bootstrap exchanges {@link #localInfo()} of both sides
 * over plain TCP, then calls {@link #connect}.
 */
public interface Endpoint extends Closeable {

    /**
     * Information 1 and 2 of the thesis (VAPI: LID and QP number; MicroVAPI: DECK id and
     * socket id) plus whatever the transport needs to reach this side, opaque to aldeia-core.
     */
    byte[] localInfo();

    /**
     * Connects the queue pair to the peer (step 4).
     *
     * @param remoteInfo the peer's {@link #localInfo()}
     * @param peerAddress the address the bootstrap connection reached the peer at
     * @return the connected channel; this endpoint is consumed by it
     */
    Channel connect(byte[] remoteInfo, InetAddress peerAddress) throws IOException;

    /** Releases the queue pair when the connection fails before {@link #connect} returns. */
    @Override
    void close() throws IOException;
}
