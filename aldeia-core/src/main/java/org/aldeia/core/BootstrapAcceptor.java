package org.aldeia.core;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.aldeia.core.bootstrap.BootstrapProtocol;
import org.aldeia.core.bootstrap.Routes;
import org.aldeia.core.bootstrap.ServerBootstrap;
import org.aldeia.core.bootstrap.ServerTickets;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.upgrade.TcpFirstChannel;
import org.aldeia.core.upgrade.UnconfirmedChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes the TCP connections of a server socket's listener and prepares each one for accept,
 * as a kernel prepares TCP's: a client's connect completes once it is prepared, whether or not
 * the application is in accept, and a slow, silent or hostile client never holds up the others.
 *
 * <p>One selector thread runs every client's bootstrap ({@link BootstrapProtocol}) step by step
 * ({@link Arrival}); it says nothing to a client until its HELLO is complete, and until the
 * client has proved the pair's key the client costs a descriptor, a record and one key agreement
 * (on a worker; none when the two processes agreed their key before, and the few HMACs of the
 * reply are then computed on the selector thread) and nothing else. Each step has a deadline
 * ({@code bootstrap_timeout}); at most {@code bootstrap_per_address} unproved clients of one
 * address, and {@link #MAX_UNPROVED} in all, are waited for: the oldest is pushed out for a
 * newcomer (a client of Aldeia proves itself within two round trips, or in its HELLO with a
 * ticket ({@link ServerTickets}), so only the silent, the slow and the strangers are). Creating
 * and connecting an endpoint, the costly steps, happen only for a client that proved itself, on
 * a few worker threads, which end when idle (on this thread for a client its ticket proved: see
 * {@link #here}); the worker writes the INFO and our CONNECTED itself
 * and hands the socket to accept, whose sends wait for the client's CONNECTED
 * ({@link UnconfirmedChannel}). At most {@code backlog} proved clients are being connected or
 * prepared and not accepted; the next ones wait for a slot. Closing frees the port at once; the
 * sockets accept was given still get their client's CONNECTED.
 *
 * <p>Under a bind rule of an installed server socket ({@link Mode#MIXED}), a client whose first
 * bytes are not the magic, or that sends nothing within the first step, or that closes, is a
 * plain TCP client: it is accepted as one, with the bytes read.
 */
final class BootstrapAcceptor implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(BootstrapAcceptor.class);

    /** Clients waited for before their proof, from all addresses together. */
    static final int MAX_UNPROVED = 1024;
    /** Accepted per turn of the loop, so that the clients already there are read between. */
    private static final int ACCEPTS_PER_TURN = 32;
    private static final int MAX_WORKERS = 8;
    /**
     * Work waiting for the workers: a client has one piece at a time, and work for a client that
     * is gone meanwhile is skipped, so this bound is reached only when the workers cannot keep up.
     */
    private static final int WORK_QUEUE = 2 * MAX_UNPROVED;
    private static final long WORKER_IDLE_MILLIS = 2_000;
    /** After a failed accept (out of descriptors), accepting pauses this long. */
    private static final long ACCEPT_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    enum Mode {
        /** An AldeiaServerSocket: Aldeia clients only; any other is closed without a word. */
        ALDEIA,
        /** An installed server socket under a bind rule: Aldeia clients and plain TCP ones. */
        MIXED,
        /** An installed server socket without a bind rule: every client is plain, nothing is read. */
        PLAIN
    }

    /** What accept returns. */
    sealed interface Prepared extends Closeable permits PlainClient, AldeiaClient {}

    /** A plain TCP client, and the bytes read from it to tell it from an Aldeia one. */
    record PlainClient(SocketChannel channel, byte[] firstBytes) implements Prepared {
        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    record AldeiaClient(AldeiaSocket socket) implements Prepared {
        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** Where the accepted Aldeia sockets come from. */
    interface Sockets {
        /** An unconnected socket for a client whose HELLO arrived (with the server's SO_RCVBUF). */
        AldeiaSocket newSocket() throws IOException;

        /** The process's transports, one per route: a client's HELLO names the one it is on. */
        Routes routes() throws IOException;
    }

    /** The limits of a server socket's bootstraps: a step's deadline, clients per address. */
    record Limits(int stepMillis, int perAddress) {
        /** The configuration's bootstrap_timeout and bootstrap_per_address. */
        static Limits of(AldeiaConfiguration configuration) {
            return new Limits(configuration.bootstrapTimeout(), configuration.bootstrapPerAddress());
        }
    }

    private final ServerSocketChannel listener;
    private final String name;
    private final Mode mode;
    private final Limits limits;
    private final long stepNanos;
    private final Sockets sockets;
    private final Selector selector;
    private final AcceptQueue<Prepared> queue;
    private final ThreadPoolExecutor workers;
    private final Thread thread;
    /** Work the workers finished, for the selector thread to go on with. */
    private final Queue<Runnable> finished = new ConcurrentLinkedQueue<>();
    /** The tickets this server socket gave its clients for their next connections. */
    private final ServerTickets tickets = new ServerTickets();
    /** Slots accept freed since the loop last looked. */
    private final AtomicInteger released = new AtomicInteger();
    /**
     * The loop waits for a slot (a client waits for one, or accepting paused for lack of one):
     * only then does a slot that accept frees wake it. Otherwise the loop counts the slot at its
     * next turn; waking it for every accepted connection cost the acceptor thread a wake-up
     * (another CPU's, in the free placement) per connection.
     */
    private volatile boolean wantsSlot;
    private volatile boolean closed;
    /** The loop has ended: workers that finish now release what they made themselves. */
    private volatile boolean loopEnded;
    /** The listener is closed (its port free), by the loop once {@link #closed} is set. */
    private final CountDownLatch listenerClosed = new CountDownLatch(1);

    // ---- the selector thread's own ----
    private int freeSlots;
    private long sequence;
    private long acceptPausedUntil;
    private final Set<Arrival> arrivals = new HashSet<>();
    private final Map<InetAddress, ArrayDeque<Arrival>> unproved = new HashMap<>();
    private int unprovedCount;
    /** arrivals.size(), for tests on other threads. */
    private volatile int preparingCount;
    private final ArrayDeque<Arrival> waitingForSlot = new ArrayDeque<>();

    /**
     * Starts preparing the connections of {@code listener}, a bound channel.
     *
     * @param name for the threads and the log, e.g. "port 8080"
     */
    BootstrapAcceptor(ServerSocketChannel listener, int backlog, String name, Mode mode, Limits limits, Sockets sockets)
            throws IOException {
        this.listener = listener;
        this.name = name;
        this.mode = mode;
        this.limits = limits;
        this.stepNanos = TimeUnit.MILLISECONDS.toNanos(limits.stepMillis());
        this.sockets = sockets;
        this.freeSlots = Math.max(1, backlog);
        this.queue = new AcceptQueue<>(() -> {
            released.incrementAndGet(); // before wantsSlot is read, as the loop sets it before reading this
            if (wantsSlot) {
                selector().wakeup();
            }
        });
        this.selector = Selector.open();
        listener.configureBlocking(false);
        listener.register(selector, SelectionKey.OP_ACCEPT);
        AtomicInteger workerCount = new AtomicInteger();
        this.workers = new ThreadPoolExecutor(MAX_WORKERS, MAX_WORKERS, WORKER_IDLE_MILLIS, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(WORK_QUEUE), work -> {
                    Thread t = new Thread(work, "aldeia-bootstrap-" + name + "-" + workerCount.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        workers.allowCoreThreadTimeOut(true);
        this.thread = new Thread(this::loop, "aldeia-accept-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    private Selector selector() {
        return selector;
    }

    /**
     * The next prepared connection.
     *
     * @param timeoutMillis SO_TIMEOUT: 0 waits for ever
     */
    Prepared accept(int timeoutMillis) throws IOException {
        return queue.take(timeoutMillis);
    }

    // ---- the loop ----

    private void loop() {
        try {
            while (!closed) {
                turn();
                if (acceptPausedUntil != 0 && System.nanoTime() - acceptPausedUntil >= 0) {
                    acceptPausedUntil = 0;
                }
                setAccepting();
            }
            stopAccepting();
            // As a TCP listener's close leaves the connections accept returned alone: those
            // still waiting for their client's CONNECTED get it (or fail at their deadline).
            while (!arrivals.isEmpty()) {
                turn();
            }
        } catch (ClosedSelectorException | IOException e) {
            if (!closed) {
                LOG.warn("Aldeia accept on {} stopped: {}", name, e.toString());
            }
        } finally {
            new ArrayList<>(arrivals).forEach(a -> abandon(a, null));
            loopEnded = true;
            runFinished();
            listenerClosed.countDown();
            AcceptQueue.closeQuietly(listener);
            AcceptQueue.closeQuietly(selector);
        }
    }

    private void turn() throws IOException {
        wantsSlot = !waitingForSlot.isEmpty() || (mode != Mode.ALDEIA && freeSlots <= 0);
        if (wantsSlot && released.get() > 0) {
            selector.selectNow(this::ready); // freed before wantsSlot was set: nobody woke us for it
        } else {
            selector.select(this::ready, nextTimeoutMillis());
        }
        for (Runnable work; (work = finished.poll()) != null; ) {
            work.run();
        }
        freeSlots += released.getAndSet(0);
        resumeWaiting();
        expire();
    }

    /**
     * The server socket closed: the port is released at once (deregistered first, as a
     * registered channel's descriptor is closed only then), and the clients accept was not
     * given are dropped.
     */
    private void stopAccepting() throws IOException {
        SelectionKey key = listener.keyFor(selector);
        if (key != null) {
            key.cancel();
        }
        selector.selectNow();
        listener.close();
        listenerClosed.countDown();
        for (Arrival a : new ArrayList<>(arrivals)) {
            if (!a.delivered) {
                abandon(a, null);
            }
        }
    }

    /** Work the workers finished, once the loop has ended: each one is abandoned. */
    private synchronized void runFinished() {
        for (Runnable work; (work = finished.poll()) != null; ) {
            work.run();
        }
    }

    private long nextTimeoutMillis() {
        long now = System.nanoTime(), next = TimeUnit.SECONDS.toNanos(1);
        for (Arrival a : arrivals) {
            next = Math.min(next, a.deadlineNanos - now);
        }
        if (acceptPausedUntil != 0) {
            next = Math.min(next, acceptPausedUntil - now);
        }
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(next) + 1);
    }

    private void ready(SelectionKey key) {
        if (!key.isValid()) {
            return;
        }
        if (key.channel() == listener) {
            acceptSome();
        } else {
            step((Arrival) key.attachment());
        }
    }

    /**
     * Accepts only while the clients have somewhere to go: a plain client takes a slot at once,
     * so with the slots all taken, an installed server leaves the next clients in the kernel's
     * backlog, as a plain TCP server does. An AldeiaServerSocket goes on taking clients: before
     * their HELLO they cost nothing, and a newcomer may push out a silent one.
     */
    private void setAccepting() {
        SelectionKey key = listener.keyFor(selector);
        boolean accepting = acceptPausedUntil == 0 && (mode == Mode.ALDEIA || freeSlots > 0);
        if (key != null && key.isValid()) {
            key.interestOps(accepting ? SelectionKey.OP_ACCEPT : 0);
        }
    }

    private void acceptSome() {
        for (int i = 0; i < ACCEPTS_PER_TURN && !closed; i++) {
            if (mode != Mode.ALDEIA && freeSlots <= 0) {
                return;
            }
            SocketChannel channel;
            try {
                channel = listener.accept();
            } catch (IOException e) { // e.g. out of descriptors: the clients taken go on meanwhile
                LOG.warn("Aldeia accept on {}: {}", name, e.toString());
                acceptPausedUntil = System.nanoTime() + ACCEPT_PAUSE_NANOS;
                return;
            }
            if (channel == null) {
                return;
            }
            try {
                take(channel);
            } catch (IOException e) {
                AcceptQueue.closeQuietly(channel);
                LOG.debug("Aldeia accept on {}: a client went before it was looked at ({})", name, e.toString());
            }
        }
    }

    private void take(SocketChannel channel) throws IOException {
        channel.configureBlocking(false);
        if (mode == Mode.PLAIN) {
            deliver(new PlainClient(channel, new byte[0]));
            return;
        }
        Arrival a = new Arrival(channel, channel.register(selector, SelectionKey.OP_READ), ++sequence);
        a.key.attach(a);
        a.enter(Arrival.Stage.START, START_AND_LENGTH, stepNanos);
        arrivals.add(a);
        preparingCount = arrivals.size();
        ArrayDeque<Arrival> same = unproved.get(a.remote.getAddress());
        if (same != null && same.size() >= limits.perAddress()) {
            pushOut(same.peekFirst(), "pushed out by newer connections from its address");
        }
        Arrival oldest = unprovedCount >= MAX_UNPROVED ? oldestUnproved() : null;
        if (oldest != null) {
            pushOut(oldest, "pushed out by newer connections");
        }
        // after the push-outs, which may have emptied the address's queue and removed it
        unproved.computeIfAbsent(a.remote.getAddress(), k -> new ArrayDeque<>()).addLast(a);
        unprovedCount++;
        step(a); // its first bytes are often there already
    }

    private Arrival oldestUnproved() {
        Arrival oldest = null;
        for (ArrayDeque<Arrival> same : unproved.values()) {
            Arrival first = same.peekFirst();
            if (first != null && (oldest == null || first.sequence < oldest.sequence)) {
                oldest = first;
            }
        }
        return oldest;
    }

    /** A client that has not sent its HELLO makes room: under a bind rule it may still be a plain one. */
    private void pushOut(Arrival a, String why) {
        if (mode == Mode.MIXED && a.stage == Arrival.Stage.START && a.in.position() == 0) {
            plain(a, new byte[0]);
        } else {
            drop(a, why);
        }
    }

    private void leaveUnproved(Arrival a) {
        ArrayDeque<Arrival> same = unproved.get(a.remote.getAddress());
        if (same != null && same.remove(a)) {
            unprovedCount--;
            if (same.isEmpty()) {
                unproved.remove(a.remote.getAddress());
            }
        }
    }

    private void expire() {
        long now = System.nanoTime();
        for (Arrival a : new ArrayList<>(arrivals)) {
            if (now - a.deadlineNanos < 0 || a.stage == Arrival.Stage.PROVING || a.stage == Arrival.Stage.CREATING
                    || a.stage == Arrival.Stage.CONNECTING) {
                continue;
            }
            if (mode == Mode.MIXED && a.stage == Arrival.Stage.START) {
                plain(a, a.readSoFar()); // silent: a protocol where the server speaks first
            } else if (a.stage.beforeHello) {
                drop(a, "sent no complete bootstrap within " + limits.stepMillis() + " ms (bootstrap_timeout)");
            } else {
                fail(a, new IOException(a.name() + " did not go on with its bootstrap within " + limits.stepMillis()
                        + " ms (" + a.stage + ")"));
            }
        }
    }

    private void resumeWaiting() {
        while (freeSlots > 0 && !waitingForSlot.isEmpty()) {
            Arrival a = waitingForSlot.pollFirst();
            if (arrivals.contains(a)) {
                withSlot(a);
            }
        }
    }

    // ---- the steps of one client ----

    private void step(Arrival a) {
        try {
            switch (a.stage) {
                case START -> start(a);
                case HELLO_LENGTH -> {
                    if (a.readStep()) {
                        helloLength(a, a.in.flip().getInt());
                    }
                }
                case HELLO_BODY -> {
                    if (a.readStep()) {
                        hello(a);
                    }
                }
                case UNROUTED -> {
                    if (a.writeStep()) {
                        a.enter(Arrival.Stage.HELLO_LENGTH, Integer.BYTES, stepNanos);
                        step(a);
                    }
                }
                case REPLYING -> {
                    if (a.writeStep()) {
                        a.enter(Arrival.Stage.PROOF, BootstrapProtocol.PROOF_BYTES, stepNanos);
                        step(a);
                    }
                }
                case PROOF -> {
                    if (a.readStep()) {
                        a.server.checkProof(a.in.array());
                        proved(a);
                    }
                }
                case INFORMING -> {
                    if (a.writeStep()) {
                        connect(a);
                    }
                }
                case CONFIRMING -> {
                    if (a.writeStep()) {
                        a.enter(Arrival.Stage.CONFIRM_WAIT, 1, stepNanos);
                        step(a);
                    }
                }
                case CONFIRM_WAIT -> {
                    if (a.readStep()) {
                        confirmed(a);
                    }
                }
                default -> a.key.interestOps(0); // a worker has it, or it waits for a slot
            }
        } catch (Arrival.EndOfStream e) {
            if (mode == Mode.MIXED && a.stage == Arrival.Stage.START && a.readSoFar().length < Integer.BYTES) {
                plain(a, a.readSoFar()); // a plain client that sent little and closed
            } else if (a.stage.beforeHello) {
                // An Aldeia client that died before its HELLO: start() takes a client for one
                // from the whole magic on. Taken for a plain client when it ended after the magic
                // but before its start's last bytes, it was handed to accept() as one.
                drop(a, null);
            } else {
                fail(a, new IOException(a.name() + " closed the connection in the middle of its bootstrap (" + a.stage + ")"));
            }
        } catch (IOException | RuntimeException e) {
            fail(a, e);
        }
    }

    /**
     * The magic, the version and what follows them (a HELLO's length or TCP_FIRST), read
     * together: every Aldeia client sends them in one write, and one read fewer per connection.
     */
    private static final int START_AND_LENGTH = BootstrapProtocol.START_BYTES + Integer.BYTES;

    /** The magic and version; under a bind rule, the first bytes that differ make a plain client. */
    private void start(Arrival a) throws IOException {
        boolean complete = a.readStep();
        byte[] read = a.readSoFar();
        ByteBuffer expected = BootstrapProtocol.start();
        for (int i = 0; i < Math.min(read.length, Integer.BYTES); i++) {
            if (read[i] != expected.get(i)) {
                if (mode == Mode.MIXED) {
                    plain(a, read);
                } else {
                    drop(a, null); // not an Aldeia client: it hears nothing
                }
                return;
            }
        }
        if (!complete) {
            return;
        }
        ByteBuffer startAndLength = ByteBuffer.wrap(read);
        int version = startAndLength.getInt(Integer.BYTES);
        if (version != BootstrapProtocol.VERSION) {
            drop(a, "speaks bootstrap version " + version + ", this server " + BootstrapProtocol.VERSION);
            return;
        }
        // An Aldeia client: our INFO and CONNECTED go out back to back while the client, busy
        // connecting, sends nothing to carry its ACK; Nagle would hold the CONNECTED for the
        // client's delayed ACK (40 ms on Linux).
        a.channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        helloLength(a, startAndLength.getInt(BootstrapProtocol.START_BYTES));
    }

    /** What follows the start: a HELLO of {@code length} bytes, or TCP_FIRST. */
    private void helloLength(Arrival a, int length) {
        if (length == BootstrapProtocol.TCP_FIRST && !a.rerouted) {
            tcpFirst(a);
            return;
        }
        if (!BootstrapProtocol.validHelloLength(length)) {
            drop(a, "sent a HELLO of " + length + " bytes");
            return;
        }
        a.enter(Arrival.Stage.HELLO_BODY, length, stepNanos);
        step(a);
    }

    /** A TCP-first client: it goes to accept as it is, once it has a slot. */
    private void tcpFirst(Arrival a) {
        a.tcpFirst = true;
        awaitSlot(a);
    }

    /** Goes on with {@code a} once one of the slots is free (at once if one is). */
    private void awaitSlot(Arrival a) {
        a.enter(Arrival.Stage.WAIT_SLOT, 0, stepNanos);
        if (freeSlots > 0) {
            withSlot(a);
        } else {
            waitingForSlot.addLast(a);
        }
    }

    /** Takes a slot for {@code a}: a TCP-first client goes to accept, a proved one gets its endpoint. */
    private void withSlot(Arrival a) {
        freeSlots--;
        a.slotHeld = true;
        if (a.tcpFirst) {
            deliverTcpFirst(a);
        } else {
            create(a);
        }
    }

    /**
     * A TCP-first client with a slot: its socket, carrying the connection on TCP, goes to accept
     * at once, as a plain TCP connection would; our magic and version answer its start in front
     * of the first frame the socket writes. Its upgrade runs on the connection itself
     * ({@link ServerUpgrade}), so it does not need this server socket any more.
     */
    private void deliverTcpFirst(Arrival a) {
        try {
            a.key.cancel();
            AldeiaSocket socket = sockets.newSocket();
            ServerUpgrade.Context context = new ServerUpgrade.Context(sockets, socket, a.local.getAddress(),
                    a.remote.getAddress());
            TcpFirstChannel channel = TcpFirstChannel.server(a.channel, a::name, BootstrapProtocol.start().array(),
                    ServerUpgrade.starter(context, 4L * limits.stepMillis()));
            socket.attachAccepted(channel, socket.connectionSizes(), a.local, a.remote);
            LOG.debug("Aldeia accept on {} from {}: Aldeia client, on TCP first", name, a.name());
            leave(a, true);
            queue.add(new AldeiaClient(socket));
        } catch (IOException | RuntimeException e) {
            fail(a, e);
        }
    }

    /**
     * A whole HELLO: the client stops costing nothing; its pair key is checked and proved. When
     * the key is already agreed (the same two processes connected before), that is a few HMACs,
     * done here at once: a hand-off to a worker and back would cost two thread wake-ups; and a
     * ticket that proves the client skips the challenge. A key still to agree costs an X25519,
     * which goes to a worker, so that strangers sending new keys never hold up this thread.
     */
    private void hello(Arrival a) throws IOException {
        byte[] hello = a.in.array();
        String route = BootstrapProtocol.route(hello);
        Transport transport = sockets.routes().named(route, a.remote.getAddress());
        if (transport == null) {
            unrouted(a, route);
            return;
        }
        a.transport = transport;
        a.server = new ServerBootstrap(a.name(), tickets);
        if (transport.knowsPairKey(BootstrapProtocol.publicKey(hello))) {
            if (a.server.resume(transport, hello)) {
                a.resumed = true;
                proved(a);
                return;
            }
            a.out = a.server.prove(transport, hello);
            written(a, Arrival.Stage.REPLYING);
            return;
        }
        a.enter(Arrival.Stage.PROVING, 0, stepNanos);
        work(a, () -> {
            a.out = a.server.prove(transport, hello);
            return Arrival.Stage.REPLYING;
        });
    }

    /**
     * A HELLO on a route this process has not (the client's fabric, which this host lacks):
     * nothing is agreed or created for it; the client hears this process's routes and may offer
     * one of them in a second HELLO on this connection. A second HELLO on a route this process
     * has not is dropped.
     */
    private void unrouted(Arrival a, String route) throws IOException {
        if (a.rerouted) {
            drop(a, "offered route \"" + route + "\" after being told this server's routes");
            return;
        }
        a.rerouted = true;
        a.out = BootstrapProtocol.unrouted(sockets.routes().names());
        written(a, Arrival.Stage.UNROUTED);
    }

    /** The client proved the pair's key: now it may cost an endpoint, once it has a slot. */
    private void proved(Arrival a) {
        a.proved = true;
        leaveUnproved(a);
        awaitSlot(a);
    }

    /**
     * One worker creates the endpoint, sends the INFO, connects and sends our CONNECTED, each
     * message written by the worker itself as soon as it is made (a fresh connection's send
     * buffer takes these few bytes at once): the client gets each without waiting for this
     * thread to wake up, and the worker goes on to connect while the client connects too. A
     * message the channel did not take whole is finished by this thread, and the connect then
     * follows on a worker ({@link #connect}). An endpoint that connects without the client's help
     * ({@link org.aldeia.core.spi.Endpoint#connectsBeforeAnswer}) connects first, and the INFO and
     * our CONNECTED go in one write.
     */
    private void create(Arrival a) {
        a.enter(Arrival.Stage.CREATING, 0, stepNanos);
        NativeWork creation = () -> {
            a.socket = sockets.newSocket();
            a.sizes = a.socket.connectionSizes();
            a.out = a.server.create(a.transport, a.socket.id(), a.sizes.endpoint(), a.local.getAddress());
            if (a.server.connectsBeforeAnswer()) {
                return connectNow(a, a.out);
            }
            if (!a.writeEarly()) {
                return Arrival.Stage.INFORMING;
            }
            return connectNow(a, null);
        };
        if (a.resumed) {
            here(a, creation);
        } else {
            work(a, creation);
        }
    }

    /** The client has our information and connects too: both connects may need each other. */
    private void connect(Arrival a) {
        a.enter(Arrival.Stage.CONNECTING, 0, stepNanos);
        work(a, () -> connectNow(a, null));
    }

    /**
     * On a worker (or this thread, {@link #here}): connects the endpoint, writes what it can of
     * {@code answer} (the INFO not sent yet, or null) and our CONNECTED and hands the socket to
     * accept at once, as a kernel hands a TCP connection whose handshake is done: the
     * application's accept wakes up while the client connects its side. Until the client's
     * CONNECTED (or its first byte) the socket's sends wait ({@link UnconfirmedChannel}); the
     * client's slot goes with the socket into the queue.
     */
    private Arrival.Stage connectNow(Arrival a, ByteBuffer answer) throws IOException {
        a.server.connect(a.remote.getAddress());
        ByteBuffer connected = ByteBuffer.wrap(new byte[] {BootstrapProtocol.CONNECTED});
        a.out = answer == null ? connected
                : ByteBuffer.allocate(answer.remaining() + 1).put(answer).put(connected).flip();
        a.writeEarly();
        a.unconfirmed = new UnconfirmedChannel(a.server.takeChannel(), a.name());
        a.socket.attachAccepted(a.unconfirmed, a.sizes, a.local, a.remote);
        a.delivered = true;
        queue.add(new AldeiaClient(a.socket));
        return Arrival.Stage.CONFIRMING;
    }

    /** {@code a.out} is made (and maybe written already): {@code stage} writes what is left. */
    private void written(Arrival a, Arrival.Stage stage) {
        a.stage = stage;
        a.deadlineNanos = System.nanoTime() + stepNanos;
        step(a);
    }

    private void confirmed(Arrival a) throws IOException {
        int ack = a.in.get(0);
        if (ack != BootstrapProtocol.CONNECTED) {
            throw new IOException(a.name() + " sent " + ack + " instead of the Aldeia connection confirmation");
        }
        a.unconfirmed.confirm();
        LOG.debug("Aldeia accept on {} from {}: Aldeia client", name, a.name());
        leave(a, true);
        // Step 5: the bootstrap connection is done.
        AcceptQueue.closeQuietly(a.channel);
    }

    /** A prepared client for accept: it holds a slot until accept takes it. */
    private void deliver(Prepared client) {
        freeSlots--;
        queue.add(client);
    }

    /** Runs native work on a worker; the selector thread goes on with the stage it returns, or fails the client. */
    private void work(Arrival a, NativeWork work) {
        try {
            workers.execute(() -> run(a, work));
        } catch (RejectedExecutionException e) {
            fail(a, new IOException("the server is too busy to prepare " + a.name() + " (" + WORK_QUEUE
                    + " preparations waiting)"));
        }
    }

    /**
     * On this thread, for a client its ticket proved: the two processes have connected before,
     * so their transport's path exists and the endpoint's creation and connect are local work
     * of some tens of microseconds, less than a hand-off to a worker and back (two wake-ups).
     */
    private void here(Arrival a, NativeWork work) {
        Arrival.Stage next;
        try {
            next = work.run();
        } catch (IOException | RuntimeException e) {
            fail(a, e);
            return;
        }
        written(a, next);
    }

    /** On a worker: the work, then its outcome handed to the selector thread. */
    private void run(Arrival a, NativeWork work) {
        if (a.abandoned) {
            return; // pushed out or closed while it waited: its work would be for nobody
        }
        Runnable outcome;
        try {
            Arrival.Stage next = work.run();
            outcome = () -> written(a, next);
        } catch (Throwable e) { // an Error too: the client and its slot must be given back
            outcome = () -> fail(a, e);
        }
        Runnable next = outcome;
        finished.add(() -> {
            if (arrivals.contains(a)) {
                next.run();
            } else {
                abandon(a, null); // closed meanwhile
            }
        });
        selector.wakeup();
        if (loopEnded) {
            runFinished();
        }
    }

    /** Work for a worker; returns the stage that writes what it made ({@code a.out}). */
    @FunctionalInterface
    private interface NativeWork {
        Arrival.Stage run() throws IOException;
    }

    // ---- how a client leaves ----

    private void plain(Arrival a, byte[] firstBytes) {
        LOG.debug("Aldeia accept on {} from {}: plain TCP client", name, a.name());
        leave(a, false);
        a.key.cancel();
        deliver(new PlainClient(a.channel, firstBytes));
    }

    /** A client that never got far enough to cost anything: closed; `why` at debug level. */
    private void drop(Arrival a, String why) {
        if (why != null) {
            LOG.debug("Aldeia accept on {} from {}: {}; closed", name, a.name(), why);
        }
        abandon(a, null);
    }

    /**
     * A client that looked like an Aldeia client and failed: once it had proved itself it is
     * logged as a warning, as java.net never hides a failed connection; a stranger's failure
     * (a made-up HELLO, a wrong proof) only at debug level, so that attackers cannot flood the log.
     */
    private void fail(Arrival a, Throwable why) {
        String client = a.name();
        if (a.delivered) {
            LOG.warn("Aldeia accept on {} from {}: the client did not complete the connection accept returned ({})", name,
                    client, why.toString());
        } else if (a.proved) {
            LOG.warn("Aldeia accept on {} from {}: the connection failed before it could be accepted ({})", name, client,
                    why.toString());
        } else {
            LOG.debug("Aldeia accept on {} from {}: {}", name, client, why.toString());
        }
        abandon(a, why);
    }

    private void abandon(Arrival a, Throwable why) {
        a.abandoned = true;
        leave(a, a.delivered); // a delivered socket holds its slot in the accept queue
        if (a.unconfirmed != null) {
            a.unconfirmed.fail(why != null ? why : new IOException("the server socket closed during its bootstrap"));
            queue.withdraw(new AldeiaClient(a.socket));
        }
        if (a.server != null) {
            a.server.abandon();
        }
        AcceptQueue.closeQuietly(a.channel);
    }

    /** The client is no longer being prepared; it gives its slot back unless it is delivered with it. */
    private void leave(Arrival a, boolean keepSlot) {
        if (!arrivals.remove(a)) {
            return;
        }
        preparingCount = arrivals.size();
        leaveUnproved(a);
        waitingForSlot.remove(a);
        if (a.slotHeld && !keepSlot) {
            freeSlots++;
        }
        a.slotHeld = false;
    }

    /**
     * Stops accepting; connections being prepared or not yet accepted are closed, and every
     * thread waiting in {@link #accept} gets a SocketException. Idempotent.
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        selector.wakeup();
        try {
            awaitListenerClosed();
        } finally {
            workers.shutdown();
            queue.close();
        }
    }

    /** The loop closes the listener; the kernel keeps listening until the channel is closed. */
    private void awaitListenerClosed() {
        if (Thread.currentThread() == thread) {
            return;
        }
        try {
            if (!listenerClosed.await(5, TimeUnit.SECONDS)) {
                LOG.warn("Aldeia accept on {}: its loop did not close the listener within 5 s; closed here", name);
                AcceptQueue.closeQuietly(listener);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Connections being prepared (accepted from the kernel, not yet delivered nor closed), for tests. */
    int preparing() {
        return preparingCount;
    }
}
