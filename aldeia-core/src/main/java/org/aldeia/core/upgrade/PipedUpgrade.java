package org.aldeia.core.upgrade;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.SocketException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.spi.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One side of a TCP-first connection's upgrade ({@link TcpFirstChannel}): the bootstrap of
 * thesis Fig. 4.4 run over the connection's control frames on a pool thread, so neither
 * application thread waits for it; data goes on over TCP meanwhile. Once its channel may be
 * written (its side's bootstrap returns: the client's {@code ClientBootstrap#upgrade}, the
 * server's {@code ServerUpgrade}), the writes move. A failed upgrade leaves the connection on
 * TCP, where it stays.
 */
public final class PipedUpgrade implements TcpFirstChannel.Upgrade {

    /**
     * One side's bootstrap over the pipe's streams; returns the channel once it may be written
     * (the client: the server's CONNECTED is in and ours sent; the server: the client's is in).
     */
    @FunctionalInterface
    public interface Bootstrap {
        Channel run(TcpFirstChannel connection, InputStream in, OutputStream out) throws IOException;
    }

    private static final Logger LOG = LoggerFactory.getLogger(PipedUpgrade.class);
    /**
     * Upgrades under way at once; more fail and leave their connections on TCP. A thread each:
     * the two sides of a connection within one JVM wait for each other, so a fixed few threads
     * could all wait for sides that have none.
     */
    private static final int AT_ONCE = 64;

    private static final class Pool {
        static final ThreadPoolExecutor EXECUTOR = new ThreadPoolExecutor(0, AT_ONCE, 2, TimeUnit.SECONDS,
                new SynchronousQueue<>(), task -> {
                    Thread thread = new Thread(task, "aldeia-upgrade");
                    thread.setDaemon(true);
                    return thread;
                });
    }

    private final TcpFirstChannel connection;
    private final ControlPipe pipe;
    private final Bootstrap bootstrap;
    private final long waitMillis;
    private final Object lock = new Object();
    private boolean finished;
    private Channel channel;
    /** The connection closed: a channel that comes later is closed at once. */
    private boolean abandoned;

    private PipedUpgrade(TcpFirstChannel connection, Bootstrap bootstrap, long waitMillis) {
        this.connection = connection;
        this.pipe = new ControlPipe(connection);
        this.bootstrap = bootstrap;
        this.waitMillis = waitMillis;
    }

    /**
     * What starts one side's upgrade of a connection (the client's once it is old enough, the
     * server's at the client's first control frame).
     *
     * @param waitMillis how long a reader at the peer's MOVED waits for this side: more than the bootstrap's bounds
     */
    public static TcpFirstChannel.UpgradeStarter starter(Bootstrap bootstrap, long waitMillis) {
        return connection -> new PipedUpgrade(connection, bootstrap, waitMillis).start();
    }

    /** Runs {@code task} on the upgrades' pool; false if it is full. */
    static boolean runInPool(Runnable task) {
        try {
            Pool.EXECUTOR.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** Runs the bootstrap on the pool; returns this, as the connection's upgrade. */
    private PipedUpgrade start() {
        try {
            Pool.EXECUTOR.execute(this::run);
        } catch (RejectedExecutionException e) {
            LOG.debug("Aldeia connection with {}: {} upgrades under way already; it stays on TCP",
                    connection.peerName(), AT_ONCE);
            finish(null);
        }
        return this;
    }

    private void run() {
        Channel moved;
        try {
            moved = bootstrap.run(connection, pipe.in((int) Math.min(Integer.MAX_VALUE, waitMillis / 4)), pipe.out());
        } catch (IOException | RuntimeException e) {
            if (pipe.ended()) { // the connection ended first: nothing went wrong
                LOG.debug("Aldeia connection with {}: ended during its upgrade ({})", connection.peerName(), e.toString());
            } else {
                LOG.info("Aldeia connection with {}: no upgrade, it stays on TCP ({})", connection.peerName(),
                        e.toString());
            }
            finish(null);
            return;
        }
        if (!finish(moved)) {
            closeQuietly(moved);
            return;
        }
        try {
            connection.moveWrites(moved); // false: our output ended on TCP, the peer has read its end there
        } catch (IOException e) {
            LOG.debug("Aldeia connection with {}: its writes could not move ({})", connection.peerName(), e.toString());
        }
    }

    /** The outcome: {@code moved} (null: none); false if the connection no longer waits for it. */
    private boolean finish(Channel moved) {
        synchronized (lock) {
            if (abandoned) {
                return false;
            }
            channel = moved;
            finished = true;
            lock.notifyAll();
            return true;
        }
    }

    @Override
    public void control(byte[] message) throws IOException {
        pipe.deliver(message);
    }

    @Override
    public void ended() {
        pipe.end();
    }

    /** The peer moves only after this side's bootstrap has said its last word, so the channel comes. */
    @Override
    public Channel movedChannel() throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        boolean interrupted = false;
        try {
            synchronized (lock) {
                while (!finished) {
                    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                    if (left <= 0) {
                        break;
                    }
                    try {
                        lock.wait(left);
                    } catch (InterruptedException e) {
                        interrupted = true; // java.net's reads are not interruptible either
                    }
                }
                if (channel == null) {
                    throw new SocketException("Connection reset: " + connection.peerName()
                            + " moved to an Aldeia channel this side does not have");
                }
                return channel;
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void abandon() {
        Channel made;
        synchronized (lock) {
            abandoned = true;
            made = channel;
        }
        pipe.end();
        if (made != null) {
            closeQuietly(made); // idempotent: the connection closed it first if it had moved onto it
        }
    }

    static void closeQuietly(Channel channel) {
        try {
            channel.close();
        } catch (IOException | RuntimeException e) {
            // nobody to tell: the connection closed before its upgrade finished
        }
    }
}
