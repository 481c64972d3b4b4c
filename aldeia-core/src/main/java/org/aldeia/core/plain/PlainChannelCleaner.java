package org.aldeia.core.plain;

import java.io.Closeable;
import java.io.IOException;
import java.lang.ref.Cleaner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes the plain TCP channels (and listeners) of sockets and server sockets dropped without
 * close, as the JDK's own sockets are closed once unreachable. Its thread is not
 * {@code org.aldeia.core.ChannelRelease}'s: closing an Aldeia channel may wait for its peer to take the data,
 * and that must not keep plain channels from being closed.
 */
public final class PlainChannelCleaner {

    private static final Logger LOG = LoggerFactory.getLogger(PlainChannelCleaner.class);

    private static final Cleaner CLEANER = Cleaner.create(task -> {
        Thread thread = new Thread(task, "aldeia-plain-cleaner");
        thread.setDaemon(true);
        return thread;
    });

    private PlainChannelCleaner() {}

    /**
     * Closes {@code resource} once {@code owner} is unreachable. The resource must not refer to
     * the owner, or the owner would never be.
     */
    public static void closeWhenUnreachable(Object owner, Closeable resource) {
        CLEANER.register(owner, () -> {
            try {
                resource.close();
            } catch (IOException e) {
                LOG.debug("closing what an unreachable socket left open: {}", e.toString());
            }
        });
    }
}
