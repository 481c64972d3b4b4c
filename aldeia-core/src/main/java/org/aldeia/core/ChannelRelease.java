package org.aldeia.core;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicBoolean;
import org.aldeia.core.spi.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a socket's channel exactly once: when the socket is closed, or, if the application
 * drops the socket without closing it, when the socket becomes unreachable (thesis 4.4.3:
 * "so does the object's clean-up"). Closing the channel flushes the posted writes first, so
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
    private final AtomicBoolean released = new AtomicBoolean();
    private Cleaner.Cleanable cleanable;

    private ChannelRelease(Channel channel, int socketId) {
        this.channel = channel;
        this.socketId = socketId;
    }

    /** Aldeia's cleaner, for other resources an unreachable socket must give back. */
    static Cleaner cleaner() {
        return Holder.CLEANER;
    }

    /** Arranges for {@code channel} to be closed when {@code owner} becomes unreachable. */
    static ChannelRelease register(Object owner, Channel channel, int socketId) {
        ChannelRelease release = new ChannelRelease(channel, socketId);
        release.cleanable = Holder.CLEANER.register(owner, release);
        return release;
    }

    /** The explicit close: closes the channel now and reports its failure. */
    void release() throws IOException {
        if (released.compareAndSet(false, true)) {
            try {
                channel.close();
            } finally {
                cleanable.clean();
            }
        }
    }

    /** The clean-up of an unreachable socket that was never closed. */
    @Override
    public void run() {
        if (released.compareAndSet(false, true)) {
            LOG.debug("Aldeia socket {} was not closed by the application; closing its channel", socketId);
            try {
                channel.close();
            } catch (IOException | RuntimeException e) {
                LOG.warn("Aldeia socket {} was never closed, and closing it at clean-up failed: {}", socketId,
                        e.toString());
            }
        }
    }
}
