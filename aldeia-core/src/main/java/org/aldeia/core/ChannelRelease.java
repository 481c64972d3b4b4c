package org.aldeia.core;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.aldeia.core.spi.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a socket's channel exactly once: when the socket is closed, or, if the application
 * drops the socket without closing it, when the socket becomes unreachable (thesis 4.4.3:
 * "so does the object's clean-up"), or when the JVM exits with the socket still open. Closing the channel flushes the posted writes first, so
 * data written without flush or close still reaches the peer, followed by end of stream.
 *
 * <p>This object must not reference the socket or its streams, or the socket would never
 * become unreachable. It runs on Aldeia's own cleaner thread because a flush may block until
 * the peer has received everything, which must not stall the JDK's common cleaner.
 */
final class ChannelRelease implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(ChannelRelease.class);

    private static final class Holder {
        static final Cleaner CLEANER = Cleaner.create(task -> {
            Thread thread = new Thread(task, "aldeia-cleaner");
            thread.setDaemon(true);
            return thread;
        });
    }

    private final Channel channel;
    private final int socketId;
    /** The environment's channels not yet released, which it closes first at JVM exit. */
    private final Set<ChannelRelease> open;
    private final AtomicBoolean released = new AtomicBoolean();
    /** Counted down once the channel's close has returned, whoever ran it. */
    private final CountDownLatch closed = new CountDownLatch(1);
    private Cleaner.Cleanable cleanable;

    private ChannelRelease(Channel channel, int socketId, Set<ChannelRelease> open) {
        this.channel = channel;
        this.socketId = socketId;
        this.open = open;
    }

    /**
     * Arranges for {@code channel} to be closed when {@code owner} becomes unreachable, and
     * keeps it in {@code open} until it is released.
     */
    static ChannelRelease register(Object owner, Channel channel, int socketId, Set<ChannelRelease> open) {
        ChannelRelease release = new ChannelRelease(channel, socketId, open);
        open.add(release);
        release.cleanable = Holder.CLEANER.register(owner, release);
        return release;
    }

    /**
     * The explicit close: closes the channel now and reports its failure.
     *
     * @param abortive SO_LINGER was 0: the peer gets a reset instead of the end of stream
     */
    void release(boolean abortive) throws IOException {
        if (released.compareAndSet(false, true)) {
            try {
                if (abortive) {
                    channel.abort();
                } else {
                    channel.close();
                }
            } finally {
                open.remove(this);
                closed.countDown();
                cleanable.clean();
            }
        }
    }

    /** The clean-up of an unreachable socket that was never closed. */
    @Override
    public void run() {
        releaseUnclosed("clean-up");
    }

    /**
     * The close at JVM exit of a socket the application left open; returns once the channel is
     * closed, also when another thread (the application's, at the same moment) is closing it,
     * because the transport may only be closed after its channels.
     */
    void releaseAtExit() {
        releaseUnclosed("JVM exit");
        try {
            closed.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void releaseUnclosed(String when) {
        if (released.compareAndSet(false, true)) {
            LOG.debug("Aldeia socket {} was not closed by the application; closing its channel at {}", socketId, when);
            try {
                channel.close();
            } catch (IOException | RuntimeException e) {
                LOG.warn("Aldeia socket {} was never closed, and closing it at {} failed: {}", socketId, when,
                        e.toString());
            } finally {
                open.remove(this);
                closed.countDown();
            }
        }
    }
}
