package org.aldeia.core.spi;

import org.aldeia.core.config.AldeiaConfiguration;

/**
 * The memory of one connection, decided when it is established: the bytes of its registered
 * send ring, the number of mtu-sized receive buffers kept posted, and the receive window: the
 * bytes the connection holds for its application before the peer's writer must wait (TCP's
 * receive buffer). A socket's SO_SNDBUF and SO_RCVBUF choose the ring and the window; the
 * configuration's values are the default.
 *
 * @param sendRegionSize bytes of the send ring, at least 1 (a transport may require at least
 *     one mtu)
 * @param receiveBuffers receive buffers posted, at least 1
 * @param receiveWindow bytes received and not yet read that the connection holds at most, at
 *     least 1 (a transport may hold more: at least two mtu-sized blocks)
 */
public record EndpointSizes(int sendRegionSize, int receiveBuffers, int receiveWindow) {

    public EndpointSizes {
        if (sendRegionSize < 1) {
            throw new IllegalArgumentException("send region size " + sendRegionSize + " is less than 1 byte");
        }
        if (receiveBuffers < 1) {
            throw new IllegalArgumentException("receive buffers " + receiveBuffers + " is less than 1");
        }
        if (receiveWindow < 1) {
            throw new IllegalArgumentException("receive window " + receiveWindow + " is less than 1 byte");
        }
    }

    /** The configuration's send_region_size, receive_buffers and receive_window. */
    public static EndpointSizes of(AldeiaConfiguration configuration) {
        return new EndpointSizes(configuration.sendRegionSize(), configuration.receiveBuffers(),
                configuration.receiveWindow());
    }
}
