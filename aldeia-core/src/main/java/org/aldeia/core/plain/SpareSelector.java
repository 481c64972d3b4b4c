package org.aldeia.core.plain;

import java.io.IOException;
import java.nio.channels.Selector;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One idle selector per JVM, lent to a plain channel's first wait ({@link PlainChannelIo}), so
 * that a connection that waits once or never (a connection per request: connect, one answer,
 * close) opens and closes no selector of its own. A selector of its own costs seven system calls
 * to open and three to close (an epoll instance, its wake-up eventfd and their registrations):
 * with one lent instead, a TCP-first connect + 1-byte echo + close took 81-88 us instead of
 * 95-110 (connectrate, free placement, medians of 1000). A connection that waits again opens its
 * own, as before, so a long-lived one pays no register and deregister per wait.
 *
 * <p>Only one is kept: a borrower that finds none opens one, and one given back while another
 * is kept is closed. The first plain channel makes it ({@link #prepare}), whether or not it ever
 * waits, so the JVM holds this selector's two descriptors from its first plain connection on;
 * threads waiting at once open more for the time of their waits only. Counts taken after a
 * first connection, between waits (the soak's, the hostile crowd's), stay put.
 */
final class SpareSelector {

    private static final AtomicReference<Selector> SPARE = new AtomicReference<>();
    private static final AtomicBoolean PREPARED = new AtomicBoolean();

    private SpareSelector() {
    }

    /** Makes the spare, once per JVM (a failure leaves it to the first borrower). */
    static void prepare() {
        if (PREPARED.compareAndSet(false, true)) {
            try {
                giveBack(Selector.open());
            } catch (IOException e) {
                // the first wait opens one, or reports why it cannot
            }
        }
    }

    /** The spare selector, or a new one when another thread has it; nothing is registered with it. */
    static Selector borrow() throws IOException {
        Selector spare = SPARE.getAndSet(null);
        return spare != null ? spare : Selector.open();
    }

    /**
     * Takes back a selector {@link #borrow} gave, whose keys were all cancelled and flushed
     * (selectNow), so that it holds no channel open; closes it when a spare is kept already.
     */
    static void giveBack(Selector selector) {
        if (selector.isOpen() && SPARE.compareAndSet(null, selector)) {
            return;
        }
        try {
            selector.close();
        } catch (IOException e) {
            // nothing is registered with it: its descriptors go whatever close reports
        }
    }
}
