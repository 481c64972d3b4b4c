package org.aldeia.core.upgrade;

import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.aldeia.core.plain.PlainChannelIo;
import org.aldeia.core.spi.Channel;

/**
 * The channel of a connection that starts on the plain TCP connection its connect made and
 * moves to its route's channel (shared memory, DECK tcp, a fabric) once it has lived
 * {@code upgrade_after} milliseconds ({@code BootstrapProtocol}, "TCP first"). A program that
 * opens a connection per request gets TCP's set-up cost and never pays for a queue pair; a
 * connection that lives on moves to the fast path while it carries data.
 *
 * <p>On TCP, each direction is a sequence of frames, so that the upgrade's bootstrap runs on the
 * connection itself (no second connection, so no need for the server's listener) and the move
 * of each direction is a marker in its stream:
 *
 * <pre>
 *   +-------------+------------------+
 *   | length >= 0 | data (length)    |      DATA: what the application wrote, one frame a write
 *   +-------------+------------------+
 *   | CONTROL -1  | length | message |      one bootstrap message (at most MAX_CONTROL bytes)
 *   +-------------+--------+---------+
 *   | MOVED -2    |                        the last frame: this direction goes on on the channel
 *   +-------------+
 *   | END -3      |                        the last frame: the writer's close or shutdownOutput
 *   +-------------+
 * </pre>
 *
 * (the server's stream starts with its answer, its magic and version). The client starts the
 * upgrade; both sides run the bootstrap of thesis Fig. 4.4 over control frames ({@code
 * ClientBootstrap#upgrade}, {@code ServerUpgrade}, on a {@link PipedUpgrade}); each side's writes move once its channel may be written
 * (the client after its CONNECTED, the server once it has the client's), by a MOVED; each reader
 * moves when it reads the peer's MOVED. Once both directions moved, the TCP connection is closed.
 * A TCP stream that ends without END or MOVED was broken (the peer's process died): its reader
 * gets a SocketException, as on the channels, where TCP would give an end of stream.
 *
 * <p>Control frames are read by whoever reads the connection: the application's reader, or,
 * while none is reading, the upgrade itself ({@link #pump}), which takes only control frames at
 * the front of the stream: data waits for the application, and TCP's flow control holds the peer.
 */
public final class TcpFirstChannel implements Channel {

    static final int DATA_MAX = Integer.MAX_VALUE;
    public static final int CONTROL = -1;
    static final int MOVED = -2;
    public static final int END = -3;
    /** A bootstrap message is a few hundred bytes; a HELLO at most about 4.5 KiB. */
    public static final int MAX_CONTROL = 8192;
    /**
     * The inbound buffer's first size: headers and small frames, so that a connection per request
     * allocates little; it grows to what a control frame needs (data frames larger than it are
     * read straight into the reader's array).
     */
    private static final int INBOUND_BYTES = 1024;
    /** How often a server that writes and does not read looks for its client's upgrade messages. */
    private static final long PUMP_NANOS = 1_000_000;
    /**
     * Half the least upgrade_after a client may have (its range starts at 1 ms; half, for the
     * time between the client's connect and the server's accept): a server connection younger
     * than this at its close has no upgrade message coming.
     */
    public static final long EARLIEST_UPGRADE_NANOS = 500_000;

    /** Where the control frames go, and what the connection's reader must wait for at a MOVED. */
    public interface Upgrade {
        /** A control frame arrived (on the reader's thread: must not block). */
        void control(byte[] message) throws IOException;

        /** The peer's TCP stream ended, or the connection closed: a bootstrap waiting for a message fails. */
        void ended();

        /** The channel the peer moved to, at its MOVED: waits, bounded, for this side's bootstrap to finish. */
        Channel movedChannel() throws IOException;

        /** The connection closes: a channel made later is closed at once. */
        void abandon();
    }

    /** Makes the upgrade of a connection (server side: at the client's first control frame). */
    @FunctionalInterface
    public interface UpgradeStarter {
        Upgrade start(TcpFirstChannel connection) throws IOException;
    }

    private final SocketChannel tcp;
    private final PlainChannelIo io;
    /** The accepting side: its upgrade starts at the client's first control frame. */
    private final boolean server;
    /** The peer's name for messages, made when first needed: a connection per request never needs it. */
    private final Supplier<String> peerNaming;
    private String peerName;
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final Object upgradeLock = new Object();
    /** The upgrade under way or done; null before. */
    private volatile Upgrade upgrade;
    /** Server: starts the upgrade at the client's first control frame. Client: starts it at its trigger. */
    private final UpgradeStarter starter;
    /** Client: when the upgrade starts (System.nanoTime), at the first call from then on; server: unused. */
    private final long upgradeAtNanos;
    private volatile boolean upgradeDue;

    // ---- reading, under readLock ----
    private ByteBuffer inbound = ByteBuffer.allocate(INBOUND_BYTES).flip();
    /** Client: the server's answer, checked before its first frame; null once checked. */
    private byte[] answer;
    /** Bytes of the current data frame not read yet. */
    private int dataLeft;
    /** The reader's SO_TIMEOUT, as a deadline (System.nanoTime), while {@link #readTimed}. */
    private boolean readTimed;
    private long readDeadlineNanos;
    private boolean tcpEnded;
    /** The peer's END was read: every read from now on is the end of stream. */
    private boolean endRead;
    /** Set once, under readLock, for good: from then on reads go straight there, without the lock. */
    private volatile Channel readChannel;
    private volatile boolean inputShut;

    // ---- writing, under writeLock ----
    /** Server: its answer, in front of its first frame. */
    private ByteBuffer preamble;
    /** Set once, under writeLock, for good: from then on writes go straight there, without the lock. */
    private volatile Channel writeChannel;
    private boolean outputShut;
    /** Server: when a write next looks for control frames nobody reads (System.nanoTime): none come earlier. */
    private long pumpAtNanos = System.nanoTime() + EARLIEST_UPGRADE_NANOS;

    private volatile boolean closed;
    private boolean tcpClosed;
    private final long openedAtNanos = System.nanoTime();

    private TcpFirstChannel(SocketChannel tcp, PlainChannelIo io, Supplier<String> peerNaming, byte[] answer,
            byte[] preamble, UpgradeStarter starter, long upgradeAtNanos) {
        this.tcp = tcp;
        this.io = io;
        this.server = answer == null;
        this.peerNaming = peerNaming;
        this.answer = answer;
        this.preamble = preamble == null ? null : ByteBuffer.wrap(preamble);
        this.starter = starter;
        this.upgradeAtNanos = upgradeAtNanos;
        this.upgradeDue = starter != null && answer != null;
    }

    /**
     * The client side, over {@code tcp}, connected through {@code io}, to which it writes
     * {@code start} now; its first frame is preceded by the server's {@code answer};
     * {@code starter} makes the upgrade at the first read or write after {@code upgradeAfterNanos}.
     */
    public static TcpFirstChannel client(SocketChannel tcp, PlainChannelIo io, Supplier<String> serverName, byte[] start,
            byte[] answer, long upgradeAfterNanos, UpgradeStarter starter) throws IOException {
        TcpFirstChannel channel = new TcpFirstChannel(tcp, io, serverName, answer, null, starter,
                System.nanoTime() + upgradeAfterNanos);
        io.write(start, 0, start.length);
        return channel;
    }

    /**
     * The server side, over an accepted {@code tcp} whose TCP-first start was read: it sends
     * {@code answer} in front of its first frame; {@code starter} makes the upgrade when the
     * client's first control frame comes.
     */
    public static TcpFirstChannel server(SocketChannel tcp, Supplier<String> clientName, byte[] answer, UpgradeStarter starter)
            throws IOException {
        return new TcpFirstChannel(tcp, new PlainChannelIo(tcp), clientName, null, answer, starter, 0);
    }

    /** The peer's name, for the upgrade's messages and this channel's. */
    public String peerName() {
        String name = peerName; // made at most a few times when threads race: each the same
        if (name == null) {
            name = peerNaming.get();
            peerName = name;
        }
        return name;
    }

    // ---- the upgrade's side ----

    /** One bootstrap message to the peer; fails once this side's TCP output is over. */
    void writeControl(byte[] message) throws IOException {
        writeLock.lock();
        try {
            if (writeChannel != null || outputShut || closed) {
                Upgrade u = upgrade;
                if (u != null) {
                    u.ended(); // the upgrade ends with this side's output: nothing went wrong
                }
                throw new SocketException("the connection's TCP output is over: no upgrade");
            }
            ByteBuffer frame = ByteBuffer.allocate(2 * Integer.BYTES + message.length).putInt(CONTROL)
                    .putInt(message.length).put(message).flip();
            io.write(takePreamble(), frame);
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * The upgrade is done and the peer's endpoint admits ours: the last TCP frame, MOVED, then
     * every write goes to {@code moved}. False if this side's output ended meanwhile (the peer
     * has read its end on TCP then).
     */
    boolean moveWrites(Channel moved) throws IOException {
        writeLock.lock();
        try {
            if (outputShut || closed) {
                return false;
            }
            writeMarker(MOVED);
            writeChannel = moved;
        } finally {
            writeLock.unlock();
        }
        tcpDirectionOver();
        return true;
    }

    /**
     * While no application thread reads: takes the control frames at the front of what has
     * arrived, without waiting (the upgrade calls it while it waits for a message).
     */
    void pump() throws IOException {
        if (!readLock.tryLock()) {
            return; // a reader is there: it hands the control frames over itself
        }
        try {
            if (readChannel == null && !inputShut && !closed && dataLeft == 0) { // not in the middle of data
                nextFrame(false, false);
            }
        } finally {
            readLock.unlock();
        }
    }

    /** Whether writes go to the upgraded channel now (for tests). */
    public boolean writesMoved() {
        return writeChannel != null;
    }

    /** Whether reads come from the upgraded channel now (for tests). */
    public boolean readsMoved() {
        return readChannel != null;
    }

    // ---- writing ----

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        Channel moved = writeChannel;
        if (moved != null) {
            moved.write(b, off, len);   // moved for good: that channel orders its writers itself
            return;
        }
        writeLock.lock();
        try {
            Channel movedMeanwhile = writeChannel;
            if (movedMeanwhile != null) {
                movedMeanwhile.write(b, off, len);
            } else if (len > 0) {
                io.write(takePreamble(), ByteBuffer.allocate(Integer.BYTES).putInt(len).flip(),
                        ByteBuffer.wrap(b, off, len));
                maybePump();
            }
        } finally {
            writeLock.unlock();
        }
        maybeUpgrade();
    }

    @Override
    public void flush() throws IOException {
        Channel moved = writeChannel;
        if (moved != null) {
            moved.flush();
            return;
        }
        writeLock.lock();
        try {
            Channel movedMeanwhile = writeChannel;
            if (movedMeanwhile != null) {
                movedMeanwhile.flush();
            } else {
                writePreamble(); // TCP: write handed every byte to the kernel, as java.net's flush does
            }
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Server, on TCP (under writeLock): a server that only writes would never read its client's
     * first upgrade message, which starts its side; so a write looks, at most once a millisecond,
     * without waiting, when no reader is there.
     */
    private void maybePump() throws IOException {
        if (!server) {
            return; // the client's upgrade pumps while it waits for the server
        }
        long now = System.nanoTime();
        if (now - pumpAtNanos >= 0) {
            pumpAtNanos = now + PUMP_NANOS;
            pump();
        }
    }

    /** The server's answer, taken to go in front of a frame (an empty buffer once it went). */
    private ByteBuffer takePreamble() {
        ByteBuffer first = preamble == null ? ByteBuffer.allocate(0) : preamble;
        preamble = null;
        return first;
    }

    /** The orderly end of this side's TCP stream (under writeLock): the answer if not sent yet, END, FIN. */
    private void endOutput() throws IOException {
        writeMarker(END);
        tcp.shutdownOutput();
        outputShut = true;
    }

    /** A frame that is its header alone (MOVED, END), behind the server's answer if that has not gone yet. */
    private void writeMarker(int marker) throws IOException {
        io.write(takePreamble(), ByteBuffer.allocate(Integer.BYTES).putInt(marker).flip());
    }

    private void writePreamble() throws IOException {
        ByteBuffer first = takePreamble();
        if (first.hasRemaining()) {
            io.write(first);
        }
    }

    @Override
    public void shutdownOutput() throws IOException {
        writeLock.lock();
        try {
            Channel moved = writeChannel;
            if (moved != null) {
                moved.shutdownOutput();
                return;
            }
            if (!outputShut) {
                endOutput(); // no upgrade from now on: its messages and MOVED go on TCP
            }
        } finally {
            writeLock.unlock();
        }
    }

    // ---- reading ----

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Channel moved = readChannel;
        return moved != null ? moved.read(b, off, len) : read(b, off, len, false, 0);
    }

    @Override
    public int read(byte[] b, int off, int len, int timeoutMillis) throws IOException {
        Channel moved = readChannel;
        if (moved != null) {
            return readMoved(moved, b, off, len, timeoutMillis);
        }
        return read(b, off, len, true, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
    }

    /**
     * A read on the channel this direction moved to, bounded by {@code timeoutMillis} (0: none)
     * where that channel bounds its reads itself (every channel of Aldeia's transports does).
     */
    private static int readMoved(Channel moved, byte[] b, int off, int len, int timeoutMillis) throws IOException {
        return timeoutMillis > 0 && moved.timedReads() ? moved.read(b, off, len, timeoutMillis) : moved.read(b, off, len);
    }

    @Override
    public boolean timedReads() {
        return true;
    }

    /** A read, bounded by {@code deadlineNanos} (System.nanoTime) when {@code timed}. */
    private int read(byte[] b, int off, int len, boolean timed, long deadlineNanos) throws IOException {
        maybeUpgrade();
        readLock.lock();
        readTimed = timed;
        readDeadlineNanos = deadlineNanos;
        try {
            while (true) {
                Channel moved = readChannel;
                if (moved != null) {
                    return readMoved(moved, b, off, len, readTimeoutLeft());
                }
                if (inputShut || endRead) {
                    return -1;
                }
                if (len == 0) {
                    return 0;
                }
                if (dataLeft > 0) {
                    return readData(b, off, len);
                }
                if (!nextFrame(true, true)) {
                    return -1;
                }
            }
        } finally {
            readTimed = false;
            readLock.unlock();
        }
    }

    /**
     * What is left of the reader's SO_TIMEOUT, for a blocking read on TCP or on the moved channel
     * (0, none: the read waits for ever); SocketTimeoutException once it is over. Under readLock.
     */
    private int readTimeoutLeft() throws SocketTimeoutException {
        if (!readTimed) {
            return 0;
        }
        long left = readDeadlineNanos - System.nanoTime();
        if (left <= 0) {
            throw new SocketTimeoutException("Read timed out");
        }
        return (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left));
    }

    /** From the current data frame: what is buffered first, else straight from TCP into {@code b}. */
    private int readData(byte[] b, int off, int len) throws IOException {
        int n;
        if (inbound.hasRemaining()) {
            n = Math.min(Math.min(len, dataLeft), inbound.remaining());
            inbound.get(b, off, n);
        } else {
            n = io.read(b, off, Math.min(len, dataLeft), readTimeoutLeft());
            if (n < 0) {
                if (inputShut) {
                    return -1; // shutdownInput, not the peer, ended TCP's input
                }
                throw new SocketException(peerName() + " ended the connection in the middle of a frame");
            }
        }
        dataLeft -= n;
        return n;
    }

    /**
     * Reads frames until a data frame's bytes are there to read (true), the reads moved (true),
     * or TCP ended at a frame's boundary (false); control frames go to the upgrade. Without
     * {@code block}, returns false as soon as a whole header is not there yet. Without
     * {@code takeMoved}, stops (false) at the peer's MOVED: the pump is the upgrade's own thread,
     * which the move waits for.
     */
    private boolean nextFrame(boolean block, boolean takeMoved) throws IOException {
        while (readChannel == null) {
            if (answer != null && !readAnswer(block)) {
                return false;
            }
            if (endRead) {
                return false;
            }
            if (!frameThere(block)) {
                if (tcpEnded && !inputShut) {
                    throw new SocketException("connection reset: " + peerName() + " ended its TCP connection without "
                            + "closing its socket (did its process die?)");
                }
                return false;
            }
            int header = frameHeader();
            if (header >= 0) {
                inbound.getInt();
                dataLeft = header;
                if (header > 0) {
                    return true; // the pump stops here too: the data is the application's to read first
                }
                continue;
            }
            if (header == MOVED) {
                if (!takeMoved) {
                    return false;
                }
                inbound.getInt();
                readChannel = upgradeOrFail().movedChannel();
                tcpDirectionOver();
                return true;
            }
            if (header == END) {
                inbound.getInt();
                endRead = true;
                endOfTcp(); // an upgrade waiting for a message gets none
                return false;
            }
            if (header != CONTROL) {
                throw new SocketException(peerName() + " sent a frame of type " + header + " on its TCP connection");
            }
            controlArrived(takeControl());
        }
        return true;
    }

    /**
     * Whether the frame at the inbound buffer's position is there: its header, and for a control
     * frame the whole frame (its length checked). False at TCP's end, or, without {@code block},
     * when it is not all there yet. (A boolean, not a header value: a peer may send any int.)
     */
    private boolean frameThere(boolean block) throws IOException {
        if (!fill(Integer.BYTES, block)) {
            return false;
        }
        if (frameHeader() != CONTROL) {
            return true;
        }
        if (!fill(2 * Integer.BYTES, block)) {
            return false;
        }
        int length = inbound.getInt(inbound.position() + Integer.BYTES);
        if (length < 0 || length > MAX_CONTROL) {
            throw new SocketException(peerName() + " sent a control frame of " + length + " bytes");
        }
        return fill(2 * Integer.BYTES + length, block);
    }

    /** The header of the frame {@link #frameThere} found: a data frame's length, or its type. */
    private int frameHeader() {
        return inbound.getInt(inbound.position());
    }

    /** The message of the control frame {@link #frameThere} found whole, taken from the buffer. */
    private byte[] takeControl() {
        int length = inbound.getInt(inbound.position() + Integer.BYTES);
        inbound.position(inbound.position() + 2 * Integer.BYTES);
        byte[] message = new byte[length];
        inbound.get(message);
        return message;
    }

    /** Client: the server's magic and version in front of its first frame. */
    private boolean readAnswer(boolean block) throws IOException {
        if (!fill(answer.length, block)) {
            if (tcpEnded && !inputShut) { // (shutdownInput ends TCP's input here: end of stream)
                throw new SocketException(peerName() + " closed the connection without answering its Aldeia start (is it "
                        + "an Aldeia server socket of the same version?)");
            }
            return false;
        }
        for (byte expected : answer) {
            if (inbound.get() != expected) {
                throw new SocketException(peerName() + " answered its Aldeia start with other bytes: it is not an Aldeia "
                        + "server socket of the same version");
            }
        }
        answer = null;
        return true;
    }

    /**
     * Makes {@code bytes} bytes available at the inbound buffer's position; false at TCP's end
     * (or, without {@code block}, when they are not there yet).
     */
    private boolean fill(int bytes, boolean block) throws IOException {
        if (inbound.capacity() < bytes) { // a control frame, at most MAX_CONTROL and its header
            inbound = ByteBuffer.allocate(bytes).put(inbound).flip();
        }
        while (inbound.remaining() < bytes) {
            if (tcpEnded) {
                endOfTcp();
                return false;
            }
            inbound.compact();
            int n;
            try {
                n = block ? io.read(inbound.array(), inbound.position(), inbound.remaining(), readTimeoutLeft())
                        : tcp.read(inbound);
                if (block && n > 0) {
                    inbound.position(inbound.position() + n);
                }
            } finally {
                inbound.flip();
            }
            if (n < 0) {
                tcpEnded = true;
            } else if (n == 0 && !block) {
                return false;
            }
        }
        return true;
    }

    private void endOfTcp() {
        Upgrade u;
        synchronized (upgradeLock) {
            u = upgrade;
        }
        if (u != null) {
            u.ended();
        }
    }

    /** A control frame: to the upgrade, made now on the server if it is the client's first. */
    private void controlArrived(byte[] message) throws IOException {
        Upgrade u;
        synchronized (upgradeLock) {
            if (upgrade == null && server && !closed) {
                upgrade = starter.start(this);
            }
            u = upgrade;
        }
        if (u == null) {
            throw new SocketException(peerName() + " sent a bootstrap message no upgrade asked for");
        }
        u.control(message);
    }

    private Upgrade upgradeOrFail() throws SocketException {
        synchronized (upgradeLock) {
            if (upgrade == null) {
                throw new SocketException(peerName() + " moved the connection without an upgrade");
            }
            return upgrade;
        }
    }

    @Override
    public int available() throws IOException {
        Channel moved = readChannel;
        if (moved != null) {
            return moved.available();
        }
        if (inputShut || closed || !readLock.tryLock()) {
            return 0; // a reader is there: it takes what arrives
        }
        try {
            if (readChannel == null && dataLeft == 0) {
                nextFrame(false, true); // the next data frame's header, if it has come
            }
            moved = readChannel;
            if (moved != null) {
                return moved.available();
            }
            if (dataLeft == 0) {
                return 0;
            }
            int kernel = inbound.remaining() >= dataLeft ? 0 : tcp.socket().getInputStream().available();
            return (int) Math.min(dataLeft, (long) inbound.remaining() + kernel);
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public long skip(long n) throws IOException {
        byte[] scratch = new byte[(int) Math.min(n, 8192)];
        return Math.max(read(scratch, 0, scratch.length), 0);
    }

    @Override
    public void shutdownInput() throws IOException {
        inputShut = true;
        Channel moved = readChannel;
        if (moved != null) {
            moved.shutdownInput();
        } else if (!closed) {
            tcp.shutdownInput(); // a blocked TCP read returns -1, and inputShut keeps every later read at -1
        }
    }

    // ---- the upgrade's start (client) ----

    /** Client: starts the upgrade at the first call once the connection is old enough. */
    private void maybeUpgrade() throws IOException {
        if (!upgradeDue || System.nanoTime() - upgradeAtNanos < 0) {
            return;
        }
        synchronized (upgradeLock) {
            if (!upgradeDue || closed) {
                return;
            }
            upgradeDue = false;
            upgrade = starter.start(this);
        }
    }

    // ---- the end ----

    /** How long a closed connection still reads its peer's upgrade messages, waiting for its end. */
    private static final long LINGER_MILLIS = 2000;

    /**
     * At a close while reads are on TCP and nobody reads: the peer's upgrade messages, which may
     * still come, would turn the close into a reset (the kernel resets a connection closed with
     * unread bytes, and may drop what the peer has not read yet). So the connection stays open a
     * moment after our FIN, on the upgrades' pool, reading and dropping control frames until the
     * peer's end (at most {@link #LINGER_MILLIS}); unread data ends it at once, with TCP's reset.
     * True if it lingers (it closes TCP and ends the upgrade itself). It waits for each frame in
     * a read bounded by what is left of that time, as a reader with SO_TIMEOUT does, rather than
     * looking every millisecond: up to 2000 wake-ups of a pool thread per closed connection.
     */
    private boolean lingerAfterClose(Upgrade u) {
        boolean messagesMayCome = u != null || server && System.nanoTime() - openedAtNanos >= EARLIEST_UPGRADE_NANOS;
        if (!messagesMayCome || tcpEnded || !readLock.tryLock()) {
            return false; // a reader is blocked: the close must end its read now
        }
        readLock.unlock(); // the socket is closed: no reader comes any more; the pool's thread takes it for its reads
        return PipedUpgrade.runInPool(() -> {
            readLock.lock();
            readTimed = true;
            readDeadlineNanos = System.nanoTime() + LINGER_MILLIS * 1_000_000L;
            try {
                // frameThere(true): false at TCP's end, SocketTimeoutException at the deadline
                while (dataLeft == 0 && frameThere(true)) {
                    int header = frameHeader();
                    if (header == MOVED || header == END) {
                        inbound.getInt();
                    } else if (header == CONTROL) {
                        takeControl(); // dropped: the upgrade is over
                    } else {
                        break; // data nobody will read: reset, as TCP
                    }
                }
            } catch (IOException e) {
                // closing anyway
            } finally {
                readTimed = false;
                readLock.unlock();
                try {
                    closeTcp();
                } catch (IOException e) {
                    // nobody to tell
                }
                if (u != null) {
                    u.abandon();
                }
            }
        });
    }

    /** How long a close waits for a write in progress on TCP before it ends it (see {@link #endTcpOutput}). */
    private static final long WRITER_WAIT_MILLIS = 10;

    /**
     * At a close, on TCP: the server's answer if it has not gone yet (the client checks it before
     * the end of stream), then our FIN, whatever is unread here. False if a write holds the
     * output (blocked by a peer that does not read): the close then closes TCP under it, which
     * ends the write with "Socket closed", as java.net's close does.
     */
    private boolean endTcpOutput() {
        try {
            if (!writeLock.tryLock(WRITER_WAIT_MILLIS, TimeUnit.MILLISECONDS)) {
                return false;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        try {
            if (!outputShut) {
                endOutput();
            }
        } catch (IOException e) {
            // the peer went first: the close goes on
        } finally {
            writeLock.unlock();
        }
        return true;
    }

    /** A TCP direction is over (moved); the second one closes the connection. */
    private void tcpDirectionOver() throws IOException {
        if (writeChannel != null && readChannel != null) {
            closeTcp();
        }
    }

    private synchronized void closeTcp() throws IOException {
        if (!tcpClosed) {
            tcpClosed = true;
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

    /**
     * Ends the channels in use: a moved one (the peer reads its end there), then TCP (where a
     * peer that has not moved reads its end). An upgrade still under way is abandoned.
     */
    private void release(boolean abortive) throws IOException {
        Upgrade u;
        synchronized (upgradeLock) {
            if (closed) {
                return;
            }
            closed = true;
            u = upgrade;
        }
        IOException failure = null;
        for (Channel moved : new Channel[] {writeChannel, readChannel != writeChannel ? readChannel : null}) {
            if (moved == null) {
                continue;
            }
            try {
                if (abortive) {
                    moved.abort();
                } else {
                    moved.close();
                }
            } catch (IOException e) {
                failure = e;
            }
        }
        boolean writerStuck = !abortive && writeChannel == null && !endTcpOutput();
        if (!abortive && !writerStuck && readChannel == null && lingerAfterClose(u)) {
            if (failure != null) {
                throw failure;
            }
            return;
        }
        if (abortive) {
            try {
                tcp.socket().setSoLinger(true, 0);
            } catch (IOException e) {
                // closed already (both directions had moved): nothing left to reset
            }
        }
        try {
            closeTcp();
        } catch (IOException e) {
            if (failure == null) {
                failure = e;
            }
        }
        if (u != null) {
            u.abandon(); // after the moved channel's orderly close: what it made and nobody moved onto goes too
        }
        if (failure != null) {
            throw failure;
        }
    }
}
