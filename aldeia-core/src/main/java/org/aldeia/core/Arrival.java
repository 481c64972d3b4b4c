package org.aldeia.core;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import org.aldeia.core.bootstrap.AddressText;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.bootstrap.ServerBootstrap;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.upgrade.TcpFirstChannel;
import org.aldeia.core.upgrade.UnconfirmedChannel;

/**
 * One TCP connection a server socket took and is preparing for accept ({@link
 * BootstrapAcceptor}): where its bootstrap stands, what has been read of it and what is still
 * to be written to it. A non-blocking channel, read only by the selector thread and written by
 * it, or by the worker that holds the client meanwhile ({@link #writeEarly}; the selector then
 * asks nothing of the channel); the fields the workers fill ({@link #server}'s state,
 * {@link #socket}, {@link #sizes}, {@link #out}) are handed back to it through the acceptor's
 * queue of finished work.
 */
final class Arrival {

    /** Where the bootstrap stands; the comment says what the stage waits for. */
    enum Stage {
        START(true),           // the client's magic, version and HELLO length (or, under a bind rule, any first bytes)
        HELLO_LENGTH(true),    // the HELLO's length
        HELLO_BODY(true),      // the HELLO's public key, nonce, route and endpoint info
        UNROUTED(true),        // our routes to be written: the HELLO named a route we have not
        PROVING(false),        // a worker: the pair key and the reply
        REPLYING(false),       // the reply to be written
        PROOF(false),          // the client's proof
        WAIT_SLOT(false),      // a free slot: the backlog of prepared connections is full
        CREATING(false),       // a worker: the endpoint and the INFO
        INFORMING(false),      // the INFO to be written
        CONNECTING(false),     // a worker: the endpoint's connect
        CONFIRMING(false),     // our CONNECTED to be written
        CONFIRM_WAIT(false);   // the client's CONNECTED

        /** Before the HELLO: it costs nothing yet, and the newest ones may push it out. */
        final boolean beforeHello;

        Stage(boolean beforeHello) {
            this.beforeHello = beforeHello;
        }
    }

    final SocketChannel channel;
    final InetSocketAddress remote;
    final InetSocketAddress local;
    /** Order of arrival: the oldest of an address is pushed out first. */
    final long sequence;
    final SelectionKey key;
    Stage stage = Stage.START;
    long deadlineNanos;
    ByteBuffer in = ByteBuffer.allocate(BootstrapProtocol.START_BYTES);
    ByteBuffer out;
    boolean slotHeld;
    /** Whether the client proved the pair's key: from then on a failure is worth a warning. */
    boolean proved;
    /** Proved by its ticket: its endpoint is made on the selector thread ({@link BootstrapAcceptor}). */
    boolean resumed;
    /** Closed or pushed out: work queued for it is skipped (read by the workers). */
    volatile boolean abandoned;
    /** Told our routes once ({@link BootstrapProtocol#UNROUTED}): a second unknown route is dropped. */
    boolean rerouted;
    /** The transport of the route the client's HELLO named. */
    Transport transport;
    ServerBootstrap server;
    AldeiaSocket socket;
    /** The channel of the socket handed to accept, until the client confirms (set by the worker). */
    UnconfirmedChannel unconfirmed;
    /** Handed to accept before the client's CONNECTED: it holds its slot in the accept queue. */
    volatile boolean delivered;
    BufferSizes sizes;
    /** Sent TCP_FIRST in place of a HELLO's length: it goes to accept on TCP ({@link TcpFirstChannel}). */
    boolean tcpFirst;

    Arrival(SocketChannel channel, SelectionKey key, long sequence) throws IOException {
        this.channel = channel;
        this.key = key;
        this.sequence = sequence;
        this.remote = (InetSocketAddress) channel.getRemoteAddress();
        this.local = (InetSocketAddress) channel.getLocalAddress();
    }

    /** The client's address and port for logs and errors, e.g. 10.0.0.9:40112 or [::1]:40112. */
    String name() {
        return AddressText.of(remote);
    }

    /** Moves to {@code next}, reading {@code expect} bytes (0: none) within {@code stepNanos}. */
    void enter(Stage next, int expect, long stepNanos) {
        stage = next;
        in = expect > 0 ? ByteBuffer.allocate(expect) : null;
        deadlineNanos = System.nanoTime() + stepNanos;
        key.interestOps(expect > 0 ? SelectionKey.OP_READ : 0);
    }

    /** Reads what the stage still expects: true once it is all there; -1 from the channel is EOF. */
    boolean readStep() throws IOException {
        if (channel.read(in) < 0) {
            throw new EndOfStream();
        }
        return !in.hasRemaining();
    }

    /** What has been read of the current stage. */
    byte[] readSoFar() {
        return Arrays.copyOf(in.array(), in.position());
    }

    /** Writes what is pending: true once all of it is out (OP_WRITE is asked for meanwhile). */
    boolean writeStep() throws IOException {
        channel.write(out);
        key.interestOps(out.hasRemaining() ? SelectionKey.OP_WRITE : 0);
        return !out.hasRemaining();
    }

    /**
     * On the worker that holds the client: writes what the channel takes of {@link #out} now,
     * without waiting; true once all of it is out. The rest, if any, is for {@link #writeStep}.
     */
    boolean writeEarly() throws IOException {
        channel.write(out);
        return !out.hasRemaining();
    }

    /** The client closed its side before the stage was complete. */
    static final class EndOfStream extends IOException {
        private static final long serialVersionUID = 1L;

        EndOfStream() {
            super("the client closed the connection");
        }
    }
}
