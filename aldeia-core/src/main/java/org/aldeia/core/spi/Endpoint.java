package org.aldeia.core.spi;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;

/**
 * One side of an Aldeia connection before it is connected: a queue pair waiting for the
 * peer's connection information. The bootstrap (aldeia-core) exchanges the information of both
 * sides over plain TCP, agrees on the key the two processes prove themselves with on the data
 * path, then calls {@link #connect}.
 *
 * <p>Keys: a transport whose data path can be joined by a process that did not make the
 * connection (DECK tcp, a fabric's reliable datagrams) admits only a process that proves it
 * holds the key of the pair ({@link Transport#pairKey}), which both sides proved in the
 * bootstrap before {@link #connect}.
 */
public interface Endpoint extends Closeable {

    /**
     * The client side's information, sent first: information 1 and 2 of the thesis (VAPI: LID
     * and QP number; MicroVAPI: DECK id and socket id) plus whatever the transport needs to
     * reach this side, opaque to aldeia-core.
     */
    byte[] localInfo();

    /**
     * The server side's information, in answer to the client whose information is
     * {@code remoteInfo} and whose bootstrap arrived on {@code localAddress}. It may open what
     * that client needs to reach this side (a listener, on that address, for a peer on another
     * host). By default {@link #localInfo()}.
     *
     * @throws IOException if {@code remoteInfo} is not this transport's, or what the client
     *     needs cannot be opened
     */
    default byte[] localInfo(byte[] remoteInfo, InetAddress localAddress) throws IOException {
        return localInfo();
    }

    /**
     * On the server side, once {@link #localInfo(byte[], InetAddress)} made the answer: whether
     * {@link #connect} to that client completes without the client acting on the answer (its own
     * connect, a connection it opens to this side), as over shared memory. The server then
     * connects first and sends its information and its CONNECTED in one message, which saves the
     * client a wait and both sides a round of system calls. By default false: the answer goes
     * first, for a transport whose connect may need the client's.
     */
    default boolean connectsBeforeAnswer() {
        return false;
    }

    /**
     * Connects the queue pair to the peer (step 4).
     *
     * @param remoteInfo the peer's information
     * @param peerAddress the address the bootstrap connection reached the peer at
     * @param pairKey the key both processes proved in the bootstrap ({@link Transport#pairKey}),
     *     32 bytes: the transport admits the peer on its data path with it, and remembers the
     *     peer's identity with it
     * @return the connected channel; this endpoint is consumed by it
     */
    Channel connect(byte[] remoteInfo, InetAddress peerAddress, byte[] pairKey) throws IOException;

    /** Releases the queue pair when the connection fails before {@link #connect} returns. */
    @Override
    void close() throws IOException;
}
