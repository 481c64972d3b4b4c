package org.aldeia.deck;

import com.sun.jna.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where libdeck's log lines go (deck_set_log): SLF4J, logger {@code org.aldeia.deck.DeckLog},
 * at WARN. libdeck logs only what no caller is there to be told: a connection it ended because
 * its peer broke the protocol, a stranger's failed handshake. It limits them to 20 a second.
 */
final class DeckLog {

    private static final Logger LOG = LoggerFactory.getLogger(DeckLog.class);

    /** deck_log_fn of deck.h. */
    interface Line extends Callback {
        void invoke(String line);
    }

    /** Registered once; a static field, so the native side's pointer never dangles. */
    static final Line LINE = line -> LOG.warn("{}", line);

    private DeckLog() {
    }
}
