package org.aldeia.core;

import java.util.Optional;
import org.aldeia.core.spi.EndpointSizes;

/**
 * How a socket's SO_SNDBUF and SO_RCVBUF become the memory of its Aldeia connection, and the
 * sizes the socket reports back once the connection is established: the send ring in bytes,
 * and the receive buffers times the mtu.
 *
 * @param endpoint the sizes the transport creates the connection with
 * @param mtu the transport's mtu, the size of one receive buffer
 */
record BufferSizes(EndpointSizes endpoint, int mtu) {

    /**
     * Both sides are registered (pinned) memory: a large SO_SNDBUF or SO_RCVBUF must not pin
     * the machine's RAM. Bounds the send ring, and the receive buffers together.
     */
    static final int MAX_REGISTERED_BYTES = 1 << 30;
    /** With two, the peer can fill one buffer while the reader still copies out of the other. */
    static final int MIN_RECEIVE_BUFFERS = 2;
    /** Bounds the depth of the receive queue. */
    static final int MAX_RECEIVE_BUFFERS = 4096;

    /**
     * The sizes of a connection being established.
     *
     * @param sendBuffer SO_SNDBUF if the user set it: a ring of that many bytes, at least one
     *     mtu (a block must fit) and at most {@link #MAX_REGISTERED_BYTES}
     * @param receiveBuffer SO_RCVBUF if the user set it: enough mtu-sized buffers to hold that
     *     many bytes, {@link #MIN_RECEIVE_BUFFERS} to {@link #MAX_RECEIVE_BUFFERS}, and no more
     *     than {@link #MAX_REGISTERED_BYTES} in all
     */
    static BufferSizes choose(AldeiaConfiguration configuration, Optional<Integer> sendBuffer,
            Optional<Integer> receiveBuffer) {
        int mtu = configuration.mtu();
        int ring = sendBuffer.map(bytes -> clamp(bytes, mtu, MAX_REGISTERED_BYTES))
                .orElse(configuration.sendRegionSize());
        int maxBuffers = Math.max(MIN_RECEIVE_BUFFERS, Math.min(MAX_RECEIVE_BUFFERS, MAX_REGISTERED_BYTES / mtu));
        int buffers = receiveBuffer.map(bytes -> clamp(ceilDiv(bytes, mtu), MIN_RECEIVE_BUFFERS, maxBuffers))
                .orElse(configuration.receiveBuffers());
        return new BufferSizes(new EndpointSizes(ring, buffers), mtu);
    }

    /** SO_SNDBUF of an established connection: the bytes of its send ring. */
    int sendBufferSize() {
        return endpoint.sendRegionSize();
    }

    /**
     * SO_RCVBUF of an established connection: the bytes its posted receive buffers hold (at
     * most Integer.MAX_VALUE, should the configuration's receive_buffers times mtu exceed it).
     */
    int receiveBufferSize() {
        return (int) Math.min(Integer.MAX_VALUE, (long) endpoint.receiveBuffers() * mtu);
    }

    private static long ceilDiv(int bytes, int mtu) {
        return ((long) bytes + mtu - 1) / mtu;
    }

    private static int clamp(long value, int min, int max) {
        return (int) Math.max(min, Math.min(max, value));
    }
}
