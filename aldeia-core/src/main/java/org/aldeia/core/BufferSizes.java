package org.aldeia.core;

import java.util.Optional;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.EndpointSizes;

/**
 * How a socket's SO_SNDBUF and SO_RCVBUF become the memory of its Aldeia connection, and the
 * sizes the socket reports back once the connection is established: the send ring in bytes,
 * and the receive window in bytes (what the connection holds unread before the peer's writer
 * blocks, as TCP's receive buffer). The posted receive buffers are the configuration's
 * receive_buffers, fewer when the window holds fewer mtu-sized blocks.
 *
 * @param endpoint the sizes the transport creates the connection with
 * @param mtu the transport's mtu, the size of one receive buffer
 */
record BufferSizes(EndpointSizes endpoint, int mtu) {

    /**
     * The send ring is registered (pinned) memory, the window bounds memory that grows only
     * while data waits unread: neither may hold the machine's RAM.
     */
    static final int MAX_REGISTERED_BYTES = 1 << 30;
    /** With two, the peer can fill one buffer while the reader still copies out of the other. */
    static final int MIN_RECEIVE_BUFFERS = 2;
    /** The smallest window: what every connection starts with before its peer's first update. */
    static final int MIN_RECEIVE_WINDOW = 1 << 16;

    /**
     * The sizes of a connection being established.
     *
     * @param sendBuffer SO_SNDBUF if the user set it: a ring of that many bytes, at least one
     *     mtu (a block must fit) and at most {@link #MAX_REGISTERED_BYTES}
     * @param receiveBuffer SO_RCVBUF if the user set it: the window, {@link #MIN_RECEIVE_WINDOW}
     *     to {@link #MAX_REGISTERED_BYTES}; unset, the configuration's receive_window
     */
    static BufferSizes choose(AldeiaConfiguration configuration, Optional<Integer> sendBuffer,
            Optional<Integer> receiveBuffer) {
        int mtu = configuration.mtu();
        int ring = sendBuffer.map(bytes -> clamp(bytes, mtu, MAX_REGISTERED_BYTES))
                .orElse(configuration.sendRegionSize());
        int window = receiveBuffer.map(bytes -> clamp(bytes, MIN_RECEIVE_WINDOW, MAX_REGISTERED_BYTES))
                .orElse(configuration.receiveWindow());
        int buffers = clamp(Math.min(configuration.receiveBuffers(), window / mtu), MIN_RECEIVE_BUFFERS,
                Integer.MAX_VALUE);
        return new BufferSizes(new EndpointSizes(ring, buffers, window), mtu);
    }

    /** SO_SNDBUF of an established connection: the bytes of its send ring. */
    int sendBufferSize() {
        return endpoint.sendRegionSize();
    }

    /** SO_RCVBUF of an established connection: its receive window. */
    int receiveBufferSize() {
        return endpoint.receiveWindow();
    }

    private static int clamp(long value, int min, int max) {
        return (int) Math.max(min, Math.min(max, value));
    }
}
