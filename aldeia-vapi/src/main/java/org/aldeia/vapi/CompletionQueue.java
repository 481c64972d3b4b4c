package org.aldeia.vapi;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.io.IOException;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

/**
 * Polling one completion queue into a reusable array of work completions, read through
 * {@link #view()} with {@link VapiStructs.Wc}. One thread at a time (the side's lock).
 *
 * <p>When the library maps the CQ ({@link CompletionRing}) completions already there are taken
 * without a native call, and a wait is one call that takes nothing ({@code EVAPI_wait_cq});
 * otherwise every poll is a call.
 */
final class CompletionQueue {

    /**
     * A blocking poll returns at least this often, so a thread notices {@code close()} from
     * another thread even if the library did not wake it when the queue pair was destroyed.
     */
    static final int WAIT_SLICE_USEC = 200_000;

    private final Vapi vapi;
    private final long hca;
    private final long cq;
    private final int capacity;
    private final Memory wcs;
    private final Pointer afterFirst;
    private final ByteBuffer view;
    private final int[] count = new int[1];
    private final BooleanSupplier closed;
    private final CompletionRing ring;   // null: the library does not map CQs

    /** @param ring the CQ mapped ({@link QueuePair}), or null to poll it with calls */
    CompletionQueue(Vapi vapi, long hca, long cq, CompletionRing ring, int capacity, BooleanSupplier closed) {
        this.vapi = vapi;
        this.hca = hca;
        this.cq = cq;
        this.capacity = capacity;
        this.wcs = new Memory((long) capacity * VapiStructs.Wc.SIZE);
        this.afterFirst = wcs.share(VapiStructs.Wc.SIZE);
        this.view = VapiStructs.view(wcs);
        this.closed = closed;
        this.ring = ring;
    }

    /** The completions the last poll returned, from index 0. */
    ByteBuffer view() {
        return view;
    }

    /**
     * Blocks until at least one completion is there, then takes every other one ready.
     *
     * @return how many completions {@link #view()} holds, at least 1
     * @throws SocketException "Socket closed" once the channel is closed
     */
    int await() throws IOException {
        return await(() -> false);
    }

    /**
     * As {@link #await()}, but returns 0 once {@code giveUp} is true (the input was shut down):
     * it is looked at before each wait slice, so within {@link #WAIT_SLICE_USEC}. The library
     * has no call that ends a poller's wait early without destroying the queue pair: a poller
     * of a queue pair's own receive CQ waits inside the mailbox's retrieve, which only a
     * message (or the destroyer's wake-up token) ends.
     */
    int await(BooleanSupplier giveUp) throws IOException {
        return await(giveUp, 0);
    }

    /**
     * As {@link #await(BooleanSupplier)}, but also returns 0 once {@code deadlineNanos}
     * (System.nanoTime; 0: none) has passed with nothing there: a read with SO_TIMEOUT.
     */
    int await(BooleanSupplier giveUp, long deadlineNanos) throws IOException {
        while (true) {
            if (closed.getAsBoolean()) {
                throw closedException();
            }
            if (giveUp.getAsBoolean()) {
                return 0;
            }
            int slice = WAIT_SLICE_USEC;
            if (deadlineNanos != 0) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    return pollArrived(); // what came by the deadline still counts
                }
                slice = (int) Math.max(1, Math.min(slice, left / 1000));
            }
            if (ring != null) {
                int n = ring.take(view, capacity);
                if (n > 0) {
                    return n;
                }
                int ret = vapi.EVAPI_wait_cq(hca, cq, slice);
                if (ret != VapiConstants.VAPI_OK && ret != VapiConstants.VAPI_ETIMEDOUT) {
                    throw failed(VapiException.of(vapi, "EVAPI_wait_cq", ret), closed.getAsBoolean());
                }
                continue;
            }
            int ret = vapi.EVAPI_poll_cq_block(hca, cq, slice, wcs);
            if (ret == VapiConstants.VAPI_OK) {
                return capacity == 1 ? 1 : 1 + pollInto(afterFirst, capacity - 1);
            }
            if (ret != VapiConstants.VAPI_ETIMEDOUT && ret != VapiConstants.VAPI_CQ_EMPTY) {
                throw failed(VapiException.of(vapi, "EVAPI_poll_cq_block", ret), closed.getAsBoolean());
            }
        }
    }

    /**
     * Non-blocking: takes the completions ready; returns how many (possibly 0). From a mapped
     * CQ only those already in the ring (no call): for send completions, which the threads that
     * post produce.
     */
    int poll() throws SocketException {
        return ring != null ? ring.take(view, capacity) : pollInto(wcs, capacity);
    }

    /**
     * As {@link #poll()}, but when the ring is empty it asks the library, whose poll also moves
     * what has arrived (for receive completions: a message not yet retrieved).
     */
    int pollArrived() throws SocketException {
        int n = ring != null ? ring.take(view, capacity) : 0;
        return n > 0 ? n : pollInto(wcs, capacity);
    }

    private int pollInto(Pointer into, int max) throws SocketException {
        count[0] = 0;
        int ret = vapi.EVAPI_poll_cq_many(hca, cq, max, into, count);
        if (ret != VapiConstants.VAPI_OK && ret != VapiConstants.VAPI_CQ_EMPTY) {
            throw failed(VapiException.of(vapi, "EVAPI_poll_cq_many", ret), closed.getAsBoolean());
        }
        return ret == VapiConstants.VAPI_OK ? Math.min(count[0], max) : 0;
    }

    void free() {
        wcs.close();
    }

    static SocketException closedException() {
        return new SocketException("Socket closed");
    }

    /**
     * What a stream operation throws when a vapi.h call failed under it: java.net's exception,
     * with the library's account as its cause (the application sees no VapiException, as with
     * the JDK's sockets). A call refused because another thread closed the channel meanwhile
     * (its queue pair is gone) is that close: "Socket closed".
     */
    static SocketException failed(VapiException cause, boolean channelClosed) {
        SocketException e = channelClosed ? closedException() : new SocketException(cause.getMessage());
        e.initCause(cause);
        return e;
    }

    /** What a failed completion means for the user, e.g. "the peer went away". */
    static String meaning(int status) {
        switch (status) {
            case VapiConstants.VAPI_REM_ABORT_ERR: return "the peer went away";
            case VapiConstants.VAPI_WR_FLUSH_ERR: return "the queue pair was shut down";
            case VapiConstants.VAPI_LOC_LEN_ERR: return "a message was larger than the receive buffer";
            default: return "the transfer failed";
        }
    }

    /**
     * The exception for a completion with error {@code status} on queue pair {@code qp}: its
     * message ends with what the library says of the queue pair's error (which mailbox or
     * shared segment failed, and how), when it says anything.
     */
    static IOException failure(String what, int status, boolean channelClosed, Vapi vapi, long hca, long qp) {
        if (channelClosed) {
            return closedException();
        }
        String why = queuePairError(vapi, hca, qp);
        return new SocketException("connection reset: " + what + " completed with "
                + VapiConstants.statusName(status) + " (" + meaning(status) + ")" + (why.isEmpty() ? "" : ": " + why));
    }

    private static final int ERROR_TEXT_BYTES = 512;

    /** EVAPI_query_qp_error's text; empty when there is none or the query itself fails. */
    static String queuePairError(Vapi vapi, long hca, long qp) {
        byte[] text = new byte[ERROR_TEXT_BYTES];
        if (vapi.EVAPI_query_qp_error(hca, qp, text, text.length) != VapiConstants.VAPI_OK) {
            return "";
        }
        int end = 0;
        while (end < text.length && text[end] != 0) {
            end++;
        }
        return new String(text, 0, end, StandardCharsets.UTF_8);
    }
}
