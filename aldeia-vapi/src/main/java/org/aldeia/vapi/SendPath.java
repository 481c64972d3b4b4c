package org.aldeia.vapi;

import static org.aldeia.vapi.VapiConstants.VAPI_SEND;
import static org.aldeia.vapi.VapiConstants.VAPI_SIGNALED;
import static org.aldeia.vapi.VapiConstants.VAPI_SUCCESS;
import static org.aldeia.vapi.VapiConstants.VAPI_UNSIGNALED;

import com.sun.jna.Memory;
import java.io.IOException;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.aldeia.vapi.VapiStructs.Desc;
import org.aldeia.vapi.VapiStructs.Wc;

/**
 * The send side of a queue-pair channel (thesis Figs. 4.9–4.11), with the thesis's per-block
 * native calls batched: a write copies all its blocks into the registered ring
 * ({@link RegisteredRegion#put}: no native call below a big block), fills their descriptors,
 * signals only the last one and posts them with one {@code EVAPI_post_sr_list} (two when the
 * descriptor ring wraps), then, once half the ring is in flight, takes whatever completed with
 * one non-blocking poll. It blocks only when the ring is full.
 *
 * <p>A write is posted in portions as it is copied (what the library moves as one transfer,
 * see {@link #DEFAULT_POST_PORTION}), each ending with a signalled block; one larger than the free part of
 * the ring waits for a completion when the ring is full. Its native calls grow by one per
 * portion, never per block.
 */
final class SendPath {

    /**
     * A write is posted as it is copied, in portions of one message's worth for the library
     * below ({@code EVAPI_query_qp_post_bytes}: MicroVAPI coalesces 64 KiB into one DECK message
     * over shared memory, 256 KiB over tcp), so that the peer takes the first portion in while
     * this thread copies the next. Copying a whole 1 MiB write before posting any of it left the
     * reader idle meanwhile and handed the rest to MicroVAPI's send thread (a wake-up); measured
     * with ./aldeia bench, 1 MiB one-way: 94 -> 62 µs pinned, 103 -> 85 µs free. A post per
     * portion costs one native call, well under the copy of the portion. Over tcp a larger
     * portion is one larger frame and system call: the kernel's send path costs per call, and
     * the JDK writes 128 KiB per call. This many bytes when the library does not say.
     */
    static final int DEFAULT_POST_PORTION = 64 * 1024;

    /**
     * A write's rest of at most this many bytes goes with the portion before it: a program that
     * writes a 64 KiB payload behind its own frame header would otherwise post its last few
     * bytes alone, a second DECK message and system call per write (streaming such 64 KiB + 8 B
     * writes over DECK tcp ran at 0.55x the JDK's, against 0.85x for plain 64 KiB writes).
     * MicroVAPI carries a 64 KiB block and a tail this long in one message (MV_COALESCE_TAIL).
     */
    static final int POST_TAIL = 512;

    private final Vapi vapi;
    private final long hca;
    private final long qp;
    private final RegisteredRegion sendRegion;
    private final long regionAddress;
    private final int lkey;
    private final SendRing ring;
    private final int postPortion;     // bytes posted together (see DEFAULT_POST_PORTION)
    private final Memory descriptors;
    private final ByteBuffer descriptorView;
    private final CompletionQueue completions;
    private final BooleanSupplier closed;
    private final ReentrantLock lock = new ReentrantLock();
    /** How long close waits for a thread holding the lock before it aborts instead (a writer blocked on a full window). */
    static final long CLOSE_LOCK_WAIT_MS = 50;

    private boolean outputShut;
    private volatile boolean released;   // read by RingTrimmer without the lock
    private int touched;           // the region's bytes written since it was last trimmed
    /*
     * Writes so far, and their number at RingTrimmer's last visit: a ring that took none since is
     * idle. A count rather than the time of the last write: System.nanoTime() on every write
     * was a clock read (20 ns here) on the path of every message.
     */
    private long writes;
    private long writesAtVisit = -1;
    private IOException failure; // a send failed: the stream is broken for good

    SendPath(QueuePair pair, int blockSize, BooleanSupplier closed) throws VapiException {
        this.vapi = pair.vapi();
        this.hca = pair.hca();
        this.qp = pair.qp();
        this.sendRegion = pair.sendRegion();
        this.regionAddress = pair.sendRegion().address();
        this.lkey = pair.sendRegion().lkey();
        this.ring = new SendRing(pair.sendRegion().size(), blockSize, pair.sendSlots());
        this.postPortion = Math.max(blockSize, pair.postBytes(DEFAULT_POST_PORTION));
        this.descriptors = new Memory((long) ring.slots() * Desc.SIZE);
        this.descriptorView = VapiStructs.view(descriptors);
        // a poll can return at most one completion per slot, plus the end-of-stream request
        this.completions = new CompletionQueue(vapi, hca, pair.sendCq(), pair.sendCqRing(), ring.slots() + 1, closed);
        this.closed = closed;
    }

    void write(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        lock.lock();
        try {
            ensureWritable();
            int done = 0;
            while (done < len) {
                long first = ring.nextId();
                int count = 0;
                int portionStart = done;
                for (int n; done < len && (done - portionStart < postPortion || len - done <= POST_TAIL)
                        && (n = ring.nextBlockLength(len - done)) > 0; done += n, count++) {
                    int at = ring.head();
                    sendRegion.put(at, b, off + done, n);
                    touched = Math.max(touched, at + n);
                    long id = ring.claim(n);
                    Desc.write(descriptorView, ring.slotOf(id), id, VAPI_SEND, VAPI_UNSIGNALED,
                            regionAddress + at, n, lkey);
                }
                if (count == 0) {
                    take(completions.await()); // ring full: wait until the peer took something
                } else {
                    post(first, count);
                    if (ring.halfFull()) {
                        take(completions.poll()); // free what completed before room runs out
                    }
                }
            }
        } finally {
            writes++;
            lock.unlock();
        }
    }

    /** Posts requests {@code first .. first+count-1}, the last one signalled. */
    private void post(long first, int count) throws IOException {
        Desc.setCompType(descriptorView, ring.slotOf(first + count - 1), VAPI_SIGNALED);
        int slot = ring.slotOf(first);
        int untilEnd = Math.min(count, ring.slots() - slot);
        postList(slot, untilEnd);
        if (untilEnd < count) {
            postList(0, count - untilEnd); // the descriptor ring wrapped
        }
    }

    private void postList(int slot, int count) throws IOException {
        int ret = vapi.EVAPI_post_sr_list(hca, qp, count, descriptors.share((long) slot * Desc.SIZE));
        checkPosted("EVAPI_post_sr_list", ret);
    }

    /**
     * A refused post breaks the stream. A queue pair out of its connected state means the peer
     * went away (the library moved it to ERR): the writer gets the same "connection reset" a
     * reader gets, as java.net code expects, with the library's account as the cause. A post
     * refused because another thread's close destroyed the queue pair after this write looked
     * (VAPI_EINVAL_QP_HNDL) is that close: "Socket closed", as java.net says.
     */
    private void checkPosted(String function, int ret) throws IOException {
        if (ret == VapiConstants.VAPI_OK) {
            return;
        }
        VapiException cause = VapiException.of(vapi, function, ret);
        if (ret != VapiConstants.VAPI_EINVAL_QP_STATE) {
            throw fail(CompletionQueue.failed(cause, closed.getAsBoolean()));
        }
        SocketException reset = new SocketException("connection reset: the queue pair is no longer "
                + "connected (" + cause.getMessage() + ")");
        reset.initCause(cause);
        throw fail(reset);
    }

    void flush() throws IOException {
        lock.lock();
        try {
            ensureOpen();
            awaitIdle();
        } finally {
            lock.unlock();
        }
    }

    /** Flushes, then posts the zero-length signalled send that is end-of-stream, and waits for it. */
    void shutdownOutput() throws IOException {
        lock.lock();
        try {
            if (outputShut) {
                return;
            }
            ensureOpen();
            awaitIdle();
            long id = ring.claim(0);
            int slot = ring.slotOf(id);
            Desc.write(descriptorView, slot, id, VAPI_SEND, VAPI_SIGNALED, regionAddress, 0, lkey);
            checkPosted("VAPI_post_sr", vapi.VAPI_post_sr(hca, qp, descriptors.share((long) slot * Desc.SIZE)));
            outputShut = true;
            awaitIdle();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The graceful part of close: shut the output down unless it is, or the stream is broken,
     * or another thread is inside a write (then close aborts it instead of waiting behind it).
     * It waits up to {@link #CLOSE_LOCK_WAIT_MS} for the lock: {@link RingTrimmer} holds it for
     * microseconds on every idle socket, and a close that found it there sent no end of stream,
     * so the peer read a reset instead (ManySocketsTest, 10 000 closes, failed in CI once).
     */
    void shutdownForClose() throws IOException {
        try {
            if (!lock.tryLock(CLOSE_LOCK_WAIT_MS, TimeUnit.MILLISECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();   /* an interrupted close aborts */
            return;
        }
        try {
            if (!outputShut && failure == null) {
                shutdownOutput();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Waits until the thread inside (if any) has left, then frees the native memory. */
    void release() {
        lock.lock();
        try {
            released = true;
            completions.free();
            descriptors.close();
        } finally {
            lock.unlock();
        }
    }

    boolean isReleased() {
        return released;
    }

    /**
     * For {@link RingTrimmer}, at each of its visits: once nothing is in flight and nothing was
     * written since its last visit, gives the ring's pages beyond {@code keep} back to the kernel.
     * Never waits: a writer inside keeps the ring as it is.
     */
    void trimIfIdle(int keep) {
        if (!lock.tryLock()) {
            return;
        }
        try {
            if (!released && touched > keep && ring.idle() && writes == writesAtVisit) {
                sendRegion.discardBeyond(keep);
                touched = keep;
            }
            writesAtVisit = writes;
        } finally {
            lock.unlock();
        }
    }

    private void awaitIdle() throws IOException {
        while (!ring.idle()) {
            take(completions.await());
        }
    }

    /** Frees the ring up to each signalled completion; an error completion breaks the stream. */
    private void take(int count) throws IOException {
        ByteBuffer wcs = completions.view();
        for (int i = 0; i < count; i++) {
            int status = Wc.status(wcs, i);
            if (status != VAPI_SUCCESS) {
                throw fail(CompletionQueue.failure("a send", status, closed.getAsBoolean(), vapi, hca, qp));
            }
            long id = Wc.id(wcs, i);
            if (!ring.isInFlight(id)) {
                throw fail(new IOException("the VAPI library completed send request " + id
                        + ", which is not in flight"));
            }
            ring.release(id);
        }
    }

    private IOException fail(IOException e) {
        if (failure == null && !(e instanceof SocketException && closed.getAsBoolean())) {
            failure = e;
        }
        return e;
    }

    private void ensureOpen() throws IOException {
        if (closed.getAsBoolean()) {
            throw CompletionQueue.closedException();
        }
        if (failure != null) {
            throw new SocketException(failure.getMessage());
        }
    }

    private void ensureWritable() throws IOException {
        ensureOpen();
        if (outputShut) {
            throw new SocketException("Socket output is shutdown");
        }
    }
}
