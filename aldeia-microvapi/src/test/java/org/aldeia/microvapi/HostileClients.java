package org.aldeia.microvapi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Outsiders' TCP connections to a port, all driven by one thread with a selector, so that a
 * thousand of them cost this side little CPU (real attackers would be on other machines): each
 * sends its payload at once, or one byte every {@link #TRICKLE_MILLIS} (trickling), then waits,
 * reading and dropping what the server says (counted per kind: {@link #heard}), until the server
 * closes it or this is closed. With {@code reopen}, a connection the server closed is replaced
 * {@link #REOPEN_MILLIS} later, so the pressure stays on.
 */
final class HostileClients implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HostileClients.class);
    static final long TRICKLE_MILLIS = 500;
    static final long REOPEN_MILLIS = 1000;
    private static final long MAX_WAIT_MILLIS = 50;

    /** One kind of connection: what it sends and how. */
    record Kind(String name, Supplier<byte[]> payload, boolean trickle) {
    }

    private record Closed(Kind kind, InetAddress from, long dueNanos) {
    }

    private static final class Connection {
        final Kind kind;
        final InetAddress from;
        final SocketChannel channel;
        final ByteBuffer out;
        long nextByteNanos;
        long received;

        Connection(Kind kind, InetAddress from, InetSocketAddress target) throws IOException {
            this.kind = kind;
            this.from = from;
            this.channel = SocketChannel.open();
            channel.setOption(StandardSocketOptions.SO_LINGER, 0); // our close resets: no TIME_WAIT pile-up
            channel.bind(new InetSocketAddress(from, 0));
            channel.configureBlocking(false);
            channel.connect(target); // finished by the driver: a thousand open in a few milliseconds
            this.out = ByteBuffer.wrap(kind.payload().get());
        }
    }

    private final InetSocketAddress target;
    private final boolean reopen;
    private final Selector selector;
    private final ConcurrentLinkedQueue<Connection> toRegister = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<Closed> toReopen = new ArrayDeque<>();   // the driver's
    private final List<Connection> trickling = new ArrayList<>();     // the driver's
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger opened = new AtomicInteger();
    private final AtomicInteger closedByServer = new AtomicInteger();
    private final Map<String, Heard> heard = new ConcurrentHashMap<>();
    private final Thread driver;
    private volatile boolean stopped;

    HostileClients(InetSocketAddress target, boolean reopen) throws IOException {
        this.target = target;
        this.reopen = reopen;
        this.selector = Selector.open();
        this.driver = new Thread(this::drive, "hostile-clients");
        driver.setDaemon(true);
        driver.start();
    }

    /** Opens {@code count} connections of {@code kind} from {@code from} (an address of this host). */
    HostileClients open(Kind kind, int count, InetAddress from) throws IOException {
        for (int i = 0; i < count; i++) {
            toRegister.add(new Connection(kind, from, target));
            open.incrementAndGet();
            opened.incrementAndGet();
        }
        selector.wakeup();
        return this;
    }

    /** Connections still open on this side. */
    int open() {
        return open.get();
    }

    int opened() {
        return opened.get();
    }

    int closedByServer() {
        return closedByServer.get();
    }

    /**
     * What the server said to the connections of one kind: how many heard anything at all, and
     * the most bytes one of them heard.
     */
    record Heard(int connections, long mostBytes) {
        static final Heard NOTHING = new Heard(0, 0);

        Heard merge(Heard other) {
            return new Heard(connections + other.connections, Math.max(mostBytes, other.mostBytes));
        }
    }

    /** What the server said to the connections of the kind named {@code kind} so far. */
    Heard heard(String kind) {
        return heard.getOrDefault(kind, Heard.NOTHING);
    }

    private void drive() {
        ByteBuffer sink = ByteBuffer.allocate(4096);
        try {
            while (!stopped) {
                register();
                selector.select(MAX_WAIT_MILLIS);
                for (SelectionKey key : selector.selectedKeys()) {
                    Connection c = (Connection) key.attachment();
                    if (!serve(c, key, sink)) {
                        gone(c, key);
                    }
                }
                selector.selectedKeys().clear();
                trickle();
                while (!toReopen.isEmpty() && System.nanoTime() - toReopen.peekFirst().dueNanos() >= 0) {
                    Closed again = toReopen.pollFirst();
                    open(again.kind(), 1, again.from());
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            if (!stopped) {
                LOG.warn("hostile clients stopped: {}", e.toString());
            }
        }
    }

    private void register() throws IOException {
        for (Connection c; (c = toRegister.poll()) != null; ) {
            c.channel.register(selector, SelectionKey.OP_CONNECT, c);
        }
    }

    /** One event of one connection: false once the server has closed it. */
    private boolean serve(Connection c, SelectionKey key, ByteBuffer sink) {
        try {
            if (key.isConnectable()) {
                if (!c.channel.finishConnect()) {
                    return true;
                }
                if (c.kind.trickle()) {
                    trickling.add(c);
                } else {
                    c.channel.write(c.out);
                }
            } else if (key.isWritable()) {
                c.channel.write(c.out);
            } else if (key.isReadable()) {
                sink.clear();
                int n = c.channel.read(sink);
                if (n < 0) {
                    return false;
                }
                if (n > 0) {
                    long before = c.received;
                    c.received += n;
                    // a connection counts once, when it first hears something
                    heard.merge(c.kind.name(), new Heard(before == 0 ? 1 : 0, c.received), Heard::merge);
                }
            }
            key.interestOps(SelectionKey.OP_READ | (!c.kind.trickle() && c.out.hasRemaining() ? SelectionKey.OP_WRITE : 0));
            return true;
        } catch (IOException e) {
            return false; // refused or reset by the server
        }
    }

    /** One byte of each trickling connection whose time has come. */
    private void trickle() {
        long now = System.nanoTime();
        for (Connection c : new ArrayList<>(trickling)) {
            if (!c.channel.isOpen() || !c.out.hasRemaining() || now - c.nextByteNanos < 0) {
                continue;
            }
            try {
                ByteBuffer one = c.out.duplicate().limit(c.out.position() + 1);
                c.out.position(c.out.position() + c.channel.write(one));
                c.nextByteNanos = now + TimeUnit.MILLISECONDS.toNanos(TRICKLE_MILLIS);
            } catch (IOException e) {
                gone(c, c.channel.keyFor(selector));
            }
        }
    }

    private void gone(Connection c, SelectionKey key) {
        if (key != null) {
            key.cancel();
        }
        closeQuietly(c.channel);
        trickling.remove(c);
        open.decrementAndGet();
        closedByServer.incrementAndGet();
        if (reopen && !stopped) {
            toReopen.addLast(new Closed(c.kind, c.from, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(REOPEN_MILLIS)));
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // it is gone either way
        }
    }

    /** Stops the driver and closes every connection still open. */
    @Override
    public void close() throws InterruptedException, IOException {
        stopped = true;
        selector.wakeup();
        driver.join(5000);
        for (SelectionKey key : selector.keys()) {
            closeQuietly((SocketChannel) key.channel());
        }
        for (Connection c; (c = toRegister.poll()) != null; ) {
            closeQuietly(c.channel);
        }
        selector.close();
        open.set(0);
    }
}
