package org.aldeia.deck;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A DECK mailbox (deck_mbox_t): either created here to receive, or cloned to send to a mailbox
 * created by some process of the run. Posts and retrieves may come from several threads, as the
 * C library allows. Closing a created mailbox wakes threads waiting in {@link #retrieve} with a
 * {@link DeckException} (DECK_ECLOSED).
 */
public final class Mailbox implements AutoCloseable {

    private static final int DECK_MBOX_CREATED = 1;
    /* Offsets in deck_mbox_t (deck.h): kind, node, index, name[64], impl. */
    private static final long NODE_OFFSET = 4;
    private static final long NAME_OFFSET = 12;

    /* Freed by JNA once unreachable, never explicitly: a thread blocked in retrieve keeps this
     * object, hence the structure, alive while close() wakes it. */
    private final Memory struct;
    private final AtomicBoolean closed = new AtomicBoolean();

    private Mailbox(Memory struct) {
        this.struct = struct;
    }

    /** Creates the receiving mailbox {@code name}, unique in the whole run. */
    public static Mailbox create(String name) throws DeckException {
        Memory struct = newStruct();
        DeckNative.check("deck_mbox_create", DeckNative.deck_mbox_create(struct, name));
        return new Mailbox(struct);
    }

    /** A sending handle to the mailbox {@code name}; waits (bounded) for its owner to create it. */
    public static Mailbox clone(String name) throws DeckException {
        Memory struct = newStruct();
        DeckNative.check("deck_mbox_clone", DeckNative.deck_mbox_clone(struct, name));
        return new Mailbox(struct);
    }

    /**
     * A sending handle to the mailbox {@code name} of process {@code node}, asking that process
     * only: a process that stops or dies never delays the clone of another's mailbox.
     */
    public static Mailbox cloneAt(int node, String name) throws DeckException {
        Memory struct = newStruct();
        DeckNative.check("deck_mbox_clone_at", DeckNative.deck_mbox_clone_at(struct, node, name));
        return new Mailbox(struct);
    }

    /** Sends the packed part of {@code message}; on return the message may be reused. */
    public void post(Message message) throws DeckException {
        DeckNative.check("deck_mbox_post", DeckNative.deck_mbox_post(open(), message.open()));
    }

    /** Waits for the next message into {@code message} (created mailboxes only). */
    public void retrieve(Message message) throws DeckException {
        DeckNative.check("deck_mbox_retrv", DeckNative.deck_mbox_retrv(open(), message.open()));
    }

    /**
     * Waits at most {@code timeoutMs} for the next message ({@code < 0}: for ever, 0: only look).
     *
     * @return false if none arrived in time
     */
    public boolean retrieve(Message message, int timeoutMs) throws DeckException {
        int rc = DeckNative.deck_mbox_retrv_timed(open(), message.open(), timeoutMs);
        if (rc == DeckNative.DECK_ETIMEDOUT) {
            return false;
        }
        DeckNative.check("deck_mbox_retrv_timed", rc);
        return true;
    }

    /**
     * Declares that only process {@code node} posts here: a post from any other process is
     * refused (it ends the connection it came on), and once {@code node} is gone and the queue
     * is empty, retrieves fail with DECK_EPEER instead of waiting for ever.
     */
    public void watch(int node) throws DeckException {
        DeckNative.check("deck_mbox_watch", DeckNative.deck_mbox_watch(open(), node));
    }

    /**
     * The longest message this (created) mailbox admits; a longer one is refused before
     * anything is allocated for it, and ends the connection it came on.
     */
    public void limit(long maxLength) throws DeckException {
        DeckNative.check("deck_mbox_limit", DeckNative.deck_mbox_limit(open(), maxLength));
    }

    public String name() {
        return open().getString(NAME_OFFSET);
    }

    /** The process that created (owns) the mailbox. */
    public int node() {
        return open().getInt(NODE_OFFSET);
    }

    /** True for a receiving (created) mailbox, false for a sending (cloned) one. */
    public boolean isCreated() {
        return open().getInt(0) == DECK_MBOX_CREATED;
    }

    /** Destroys the native mailbox; further use throws IllegalStateException. Idempotent. */
    @Override
    public void close() throws DeckException {
        if (closed.compareAndSet(false, true)) {
            DeckNative.check("deck_mbox_destroy", DeckNative.deck_mbox_destroy(struct));
        }
    }

    private Pointer open() {
        if (closed.get()) {
            throw new IllegalStateException("mailbox is closed");
        }
        return struct;
    }

    private static Memory newStruct() {
        DeckNative.ensureLoaded();
        Memory struct = new Memory(DeckNative.deck_sizeof_mbox());
        struct.clear();
        return struct;
    }
}
