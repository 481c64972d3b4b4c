package org.aldeia.core.spi;

import org.aldeia.core.AldeiaConfiguration;

/**
 * The memory of one connection, decided when it is established: the bytes of its registered
 * send ring and the number of mtu-sized receive buffers kept posted. A socket's SO_SNDBUF and
 * SO_RCVBUF choose them; the configuration's values are the default.
 *
 * @param sendRegionSize bytes of the send ring, at least 1 (a transport may require at least
 *     one mtu)
 * @param receiveBuffers receive buffers posted, at least 1
 */
public record EndpointSizes(int sendRegionSize, int receiveBuffers) {

    public EndpointSizes {
        if (sendRegionSize < 1) {
            throw new IllegalArgumentException("send region size " + sendRegionSize + " is less than 1 byte");
        }
        if (receiveBuffers < 1) {
            throw new IllegalArgumentException("receive buffers " + receiveBuffers + " is less than 1");
        }
    }

    /** The configuration's send_region_size and receive_buffers. */
    public static EndpointSizes of(AldeiaConfiguration configuration) {
        return new EndpointSizes(configuration.sendRegionSize(), configuration.receiveBuffers());
    }
}
