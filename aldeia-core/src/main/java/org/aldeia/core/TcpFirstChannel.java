package org.aldeia.core;

import java.io.IOException;
import java.net.SocketException;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;
import org.aldeia.core.spi.Channel;

/**
 * The channel of a connection that starts on the plain TCP connection its connect made and
 * moves to its route's channel (shared memory, DECK tcp, a fabric) once it has lived
 * {@code upgrade_after} milliseconds ({@link BootstrapProtocol}, "TCP first"). A program that
 * opens a connection per request gets TCP's set-up cost and never pays for a queue pair; a
 * connection that lives on moves to the fast path while it carries data.
 *
 * <p>Each direction moves on its own, and in order: the writer sends its last TCP bytes, ends
 * its TCP output (a FIN) and writes on the route's channel from then on; the reader reads TCP
 * to its end and goes on on the route's channel. A TCP end of stream is therefore either the
 * peer's close or its move, which the {@link Upgrade} tells apart: a writer moves only once
 * its upgrade is {@linkplain Upgrade#done done}, which the other side's upgrade learns no later
 * than the moment the first moved byte can arrive ({@link Upgrade#afterTcpEnd} waits for a
 * pending one). Once both directions moved, the TCP connection is closed.
 *
 * <pre>
 *   writer:  TCP bytes ... | FIN |  channel bytes ... | channel end of stream
 *   reader:  TCP bytes ... | -1: upgraded? yes -> channel bytes ... | -1
 *                                          no  -> -1 (the peer closed)
 * </pre>
 *
 * <p>One thread reads while another writes, as with every channel; the upgrade itself runs on
 * another thread (the client's {@link ClientUpgrade}, the server's acceptor).
 */
final class TcpFirstChannel implements Channel {

    /** How one connection's upgrade stands, as its TCP phase needs to know it. */
    interface Upgrade {
        /** The channel to move to, or null while the upgrade is not complete (never blocks). */
        Channel done();

        /**
         * After the peer's TCP end of stream: the channel the peer moved to, or null if the end
         * is the peer's close. Waits, bounded, for an upgrade whose outcome is not known yet.
         *
         * @throws IOException if the peer may have moved to a channel this side could not complete
         */
        Channel afterTcpEnd() throws IOException;

        /**
         * The connection closes: ends the upgraded channel, or will once it is done, so that a
         * peer that reads on after our FIN finds our end of stream there (abortive: a reset).
         */
        void release(boolean abortive) throws IOException;
    }

    /** A client-side action run once, when the connection is old enough to be upgraded. */
    @FunctionalInterface
    interface Trigger {
        void fire(TcpFirstChannel channel);
    }

    private final SocketChannel tcp;
    private final PlainChannelIo io;
    private final String peerName;
    private final Object readLock = new Object();
    private final Object writeLock = new Object();
    private volatile Upgrade upgrade;
    /**
     * Server: its answer, not written yet (under writeLock). It goes with the first write, in the
     * same segment, so that the client wakes up once for both; or alone before a shutdown, a move
     * or a close. (The client's start goes at connect: accept must return without the client's
     * first write, as a TCP server's does.)
     */
    private byte[] preamble;
    /** Client: bytes of the server's answer still to be read before its first data byte. */
    private byte[] answer;
    private int answerRead;
    /** Client: what starts the upgrade, and when (System.nanoTime); null once fired, or never. */
    private volatile Trigger trigger;
    private final long triggerAtNanos;
    /** Server: tells the acceptor the connection is gone, so nobody can upgrade it any more. */
    private final Runnable onRelease;
    /** Set under writeLock. */
    private volatile Channel writeChannel;
    private volatile boolean outputShut;
    /** The upgraded channel's output or input was shut for a shutdown made on TCP (once each). */
    private final AtomicBoolean movedOutputShut = new AtomicBoolean();
    private final AtomicBoolean movedInputShut = new AtomicBoolean();
    /** Set under readLock. */
    private volatile Channel readChannel;
    private volatile boolean inputShut;
    /** Which TCP directions are over (moved or shut); the TCP connection closes when both are. */
    private boolean tcpWriteOver;
    private boolean tcpReadOver;
    private volatile boolean closed;

    private TcpFirstChannel(SocketChannel tcp, String peerName, byte[] preamble, byte[] answer, Trigger trigger,
            long triggerAtNanos, Runnable onRelease) throws IOException {
        this.tcp = tcp;
        this.io = new PlainChannelIo(tcp);
        this.peerName = peerName;
        this.preamble = preamble;
        this.answer = answer;
        this.trigger = trigger;
        this.triggerAtNanos = triggerAtNanos;
        this.onRelease = onRelease;
    }

    /**
     * The client side, over the connected {@code tcp}, to which it writes {@code start} now; its
     * first read checks the server's {@code answer}; {@code trigger} runs at the first call after
     * {@code upgradeAfterNanos}.
     */
    static TcpFirstChannel client(SocketChannel tcp, String serverName, byte[] start, byte[] answer,
            long upgradeAfterNanos, Trigger trigger) throws IOException {
        TcpFirstChannel channel = new TcpFirstChannel(tcp, serverName, null, answer, trigger,
                System.nanoTime() + upgradeAfterNanos, () -> {});
        channel.io.write(start, 0, start.length);
        return channel;
    }

    /**
     * The server side, over an accepted {@code tcp} whose TCP-first start was read: it sends
     * {@code answer} first; the client upgrades it. {@code onRelease} runs when it closes.
     */
    static TcpFirstChannel server(SocketChannel tcp, String clientName, byte[] answer, Runnable onRelease)
            throws IOException {
        return new TcpFirstChannel(tcp, clientName, answer, null, null, 0, onRelease);
    }

    /**
     * Sets the connection's upgrade, before anything that lets the peer move (the server: before
     * its CONNECTED; the client: before its bootstrap starts). False if there is one already or
     * the channel is closed: a connection is upgraded once.
     */
    synchronized boolean offer(Upgrade next) {
        if (upgrade != null || closed) {
            return false;
        }
        upgrade = next;
        return true;
    }

    /**
     * Called once the upgrade is done (its {@link Upgrade#done} returns {@code moved}), by the
     * thread that completed it, which may be a server socket's acceptor: so it never waits for a
     * writer. A direction this side shut down while on TCP is shut down on the new channel too,
     * so the peer, which reads on after the FIN it took for a move, sees the same end. A shutdown
     * racing with this sets its flag first and then looks at the upgrade, this looks at the flag
     * after the upgrade was done: one of the two sees the other (both are volatile).
     */
    void completed(Channel moved) throws IOException {
        if (outputShut && movedOutputShut.compareAndSet(false, true)) {
            moved.shutdownOutput();
        }
        if (inputShut && movedInputShut.compareAndSet(false, true)) {
            moved.shutdownInput();
        }
    }

    private Channel upgradeDone() {
        Upgrade u = upgrade;
        return u == null ? null : u.done();
    }

    /** Writes the preamble if it has not gone yet (under writeLock). */
    private void sayFirst() throws IOException {
        byte[] first = preamble;
        if (first != null) {
            preamble = null;
            io.write(first, 0, first.length);
        }
    }

    /** The preamble, for a side about to end. */
    private void sayFirstNow() throws IOException {
        if (preamble != null) {
            synchronized (writeLock) {
                sayFirst();
            }
        }
    }

    /** Whether writes go to the upgraded channel now (for tests). */
    boolean writesMoved() {
        return writeChannel != null;
    }

    /** Whether reads come from the upgraded channel now (for tests). */
    boolean readsMoved() {
        return readChannel != null;
    }

    /** The peer's name, for the upgrade's messages. */
    String peerName() {
        return peerName;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        synchronized (writeLock) {
            Channel moved = writeTarget();
            if (moved != null) {
                moved.write(b, off, len);
            } else if (preamble != null) {
                byte[] first = preamble;
                preamble = null;
                io.write(first, b, off, len);
            } else {
                io.write(b, off, len);
            }
        }
        maybeTrigger();
    }

    @Override
    public void flush() throws IOException {
        synchronized (writeLock) {
            sayFirst();
            Channel moved = writeTarget();
            if (moved != null) {
                moved.flush();
            }
            // TCP: write has handed every byte to the kernel already, as java.net's flush does
        }
    }

    /** The channel writes go to: the upgraded one once it is done (moving now if not yet), else null for TCP. */
    private Channel writeTarget() throws IOException {
        if (writeChannel != null) {
            return writeChannel;
        }
        Channel moved = upgradeDone();
        if (moved == null) {
            return null;
        }
        sayFirst();
        if (!outputShut) {
            tcp.shutdownOutput(); // the FIN: every TCP byte before it, every later one on `moved`
        }
        writeChannel = moved;
        tcpDirectionOver(true);
        return moved;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        maybeTrigger();
        synchronized (readLock) {
            if (readChannel != null) {
                return readChannel.read(b, off, len);
            }
            if (inputShut) {
                return -1;
            }
            if (len == 0) {
                return 0;
            }
            readAnswer();
            int n = io.read(b, off, len, 0);
            if (n >= 0 || inputShut) {
                return n;
            }
            Upgrade u = upgrade;
            Channel moved = u == null ? null : u.afterTcpEnd();
            if (moved == null) {
                return -1;
            }
            readChannel = moved;
            tcpDirectionOver(false);
            return moved.read(b, off, len);
        }
    }

    /** Client: the server's answer to the TCP-first start, before the first byte of data. */
    private void readAnswer() throws IOException {
        if (answer == null) {
            return;
        }
        byte[] got = new byte[answer.length];
        while (answerRead < answer.length) {
            int n = io.read(got, answerRead, answer.length - answerRead, 0);
            if (n < 0) {
                throw new SocketException(peerName + " closed the connection without answering its Aldeia start (is it "
                        + "an Aldeia server socket of the same version?)");
            }
            for (int i = answerRead; i < answerRead + n; i++) {
                if (got[i] != answer[i]) {
                    throw new SocketException(peerName + " answered its Aldeia start with other bytes: it is not an "
                            + "Aldeia server socket of the same version");
                }
            }
            answerRead += n;
        }
        answer = null;
    }

    @Override
    public int available() throws IOException {
        Channel moved = readChannel;
        if (moved != null) {
            return moved.available();
        }
        if (inputShut || closed || answer != null) {
            return 0;
        }
        return tcp.socket().getInputStream().available();
    }

    @Override
    public long skip(long n) throws IOException {
        byte[] scratch = new byte[(int) Math.min(n, 8192)];
        int skipped = read(scratch, 0, scratch.length);
        return Math.max(skipped, 0);
    }

    @Override
    public void shutdownOutput() throws IOException {
        synchronized (writeLock) {
            Channel moved = writeTarget();
            boolean wasShut = outputShut;
            outputShut = true;
            if (moved == null && !wasShut) {
                sayFirst();
                tcp.shutdownOutput();
                tcpDirectionOver(true);
                moved = upgradeDone(); // done meanwhile: see completed()
            }
            if (moved != null && movedOutputShut.compareAndSet(false, true)) {
                moved.shutdownOutput();
            }
        }
    }

    @Override
    public void shutdownInput() throws IOException {
        inputShut = true;
        Channel moved = readChannel;
        if (moved == null) {
            tcp.shutdownInput(); // a blocked TCP read returns -1, which inputShut keeps from meaning a move
            moved = upgradeDone(); // see completed()
        }
        if (moved != null && movedInputShut.compareAndSet(false, true)) {
            moved.shutdownInput();
        }
    }

    /** A TCP direction is over; the second one closes the connection (its descriptor is not kept for nothing). */
    private synchronized void tcpDirectionOver(boolean writing) throws IOException {
        if (writing) {
            tcpWriteOver = true;
        } else {
            tcpReadOver = true;
        }
        if (tcpWriteOver && tcpReadOver) {
            io.close();
        }
    }

    @Override
    public void close() throws IOException {
        release(false);
    }

    @Override
    public void abort() throws IOException {
        release(true);
    }

    /** Ends the upgrade's channel (see {@link Upgrade#release}), then the TCP connection. */
    private void release(boolean abortive) throws IOException {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        trigger = null;
        onRelease.run();
        if (!abortive) {
            try {
                sayFirstNow(); // the client checks it before the end of stream
            } catch (IOException e) {
                // the peer went first: the close goes on
            }
        }
        Upgrade u = upgrade;
        IOException failure = null;
        if (u != null) {
            try {
                u.release(abortive);
            } catch (IOException e) {
                failure = e;
            }
        }
        if (abortive) {
            try {
                tcp.socket().setSoLinger(true, 0);
            } catch (IOException e) {
                // closed already (both directions had moved): nothing left to reset
            }
        }
        try {
            io.close();
        } catch (IOException e) {
            if (failure == null) {
                failure = e;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Client: starts the upgrade at the first call once the connection is old enough. */
    private void maybeTrigger() {
        Trigger t = trigger;
        if (t != null && System.nanoTime() - triggerAtNanos >= 0) {
            synchronized (this) {
                if (trigger != t || closed) {
                    return;
                }
                trigger = null;
            }
            t.fire(this);
        }
    }
}
