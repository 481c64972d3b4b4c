package org.aldeia.core;

import java.io.IOException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.spi.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client connection's move from TCP to its route's channel ({@link TcpFirstChannel}): the
 * bootstrap of thesis Fig. 4.4 run over a second TCP connection to the same server port, its
 * start naming the first connection by the token only the two ends know
 * ({@link BootstrapProtocol#UPGRADE}). It runs on a pool of its own, so the application's
 * thread never waits for it: data goes on over TCP meanwhile. A failed upgrade leaves the
 * connection on TCP, where it stays.
 */
final class ClientUpgrade implements TcpFirstChannel.Upgrade {

    private static final Logger LOG = LoggerFactory.getLogger(ClientUpgrade.class);
    /** Upgrades waiting for a thread; more at once fail and leave their connections on TCP. */
    private static final int QUEUED = 1024;

    private static final class Pool {
        static final ThreadPoolExecutor EXECUTOR = new ThreadPoolExecutor(2, 2, 2, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(QUEUED), task -> {
                    Thread thread = new Thread(task, "aldeia-upgrade");
                    thread.setDaemon(true);
                    return thread;
                });

        static {
            EXECUTOR.allowCoreThreadTimeOut(true);
        }
    }

    /** The bootstrap: returns the connected channel of the route, or throws why there is none. */
    @FunctionalInterface
    interface Bootstrap {
        Channel run() throws IOException;
    }

    private final Object lock = new Object();
    private final long waitMillis;
    private volatile boolean finished;
    private volatile Channel channel;
    /** The connection closed without waiting for this: a channel that comes later is closed at once. */
    private boolean abandoned;

    private ClientUpgrade(long waitMillis) {
        this.waitMillis = waitMillis;
    }

    /**
     * Starts the upgrade of {@code tcpFirst} by {@code bootstrap}, unless it has one or is closed.
     *
     * @param waitMillis how long a reader at the server's FIN or a close waits for it to finish:
     *     more than the bootstrap's own bounds
     */
    static void start(TcpFirstChannel tcpFirst, Bootstrap bootstrap, long waitMillis) {
        ClientUpgrade upgrade = new ClientUpgrade(waitMillis);
        if (!tcpFirst.offer(upgrade)) {
            return;
        }
        try {
            Pool.EXECUTOR.execute(() -> upgrade.run(tcpFirst, bootstrap));
        } catch (RejectedExecutionException e) {
            LOG.debug("Aldeia connection to {}: {} upgrades waiting already; it stays on TCP", tcpFirst.peerName(),
                    QUEUED);
            upgrade.finish(null);
        }
    }

    private void run(TcpFirstChannel tcpFirst, Bootstrap bootstrap) {
        Channel moved;
        try {
            moved = bootstrap.run();
        } catch (IOException | RuntimeException e) {
            LOG.info("Aldeia connection to {}: no upgrade, it stays on TCP ({})", tcpFirst.peerName(), e.toString());
            finish(null);
            return;
        }
        if (!finish(moved)) {
            quietlyClose(moved);
            return;
        }
        try {
            tcpFirst.completed(moved);
        } catch (IOException | RuntimeException e) {
            LOG.debug("Aldeia connection to {}: a shutdown could not follow it to its channel ({})", tcpFirst.peerName(),
                    e.toString());
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
    public Channel done() {
        return finished ? channel : null;
    }

    /** The server moves only after our CONNECTED, so while ours is pending its FIN is a close. */
    @Override
    public Channel afterTcpEnd() {
        return awaitFinished() ? channel : null;
    }

    @Override
    public void release(boolean abortive) throws IOException {
        if (!awaitFinished()) {
            return;
        }
        Channel moved = channel;
        if (moved == null) {
            return;
        }
        if (abortive) {
            moved.abort();
        } else {
            moved.close();
        }
    }

    /** True once finished; false if it did not within the bound (then it is abandoned). */
    private boolean awaitFinished() {
        if (finished) {
            return true;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        boolean interrupted = false;
        synchronized (lock) {
            try {
                while (!finished) {
                    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                    if (left <= 0) {
                        abandoned = true;
                        return false;
                    }
                    try {
                        lock.wait(left);
                    } catch (InterruptedException e) {
                        interrupted = true; // java.net's reads and closes are not interruptible either
                    }
                }
                return true;
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private static void quietlyClose(Channel channel) {
        try {
            channel.close();
        } catch (IOException | RuntimeException e) {
            // nobody to tell: the connection closed before its upgrade finished
        }
    }
}
