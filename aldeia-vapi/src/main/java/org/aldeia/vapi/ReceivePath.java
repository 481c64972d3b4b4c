package org.aldeia.vapi;

import static org.aldeia.vapi.VapiConstants.VAPI_RECEIVE;
import static org.aldeia.vapi.VapiConstants.VAPI_SIGNALED;
import static org.aldeia.vapi.VapiConstants.VAPI_SUCCESS;

import com.sun.jna.Memory;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.aldeia.vapi.VapiStructs.Desc;
import org.aldeia.vapi.VapiStructs.Wc;

/**
 * The receive side of a queue-pair channel (thesis Figs. 4.12–4.14). The thesis posted one
 * MTU receive per read and waited for it, so a sender could find no receive posted and every
 * read cost a post and a block. Here K MTU-sized buffers are posted at connect and stay
 * posted: a read serves bytes already held; only when none are held it blocks for a
 * completion and then takes every completion ready in one poll; buffers it emptied are
 * re-posted with one {@code EVAPI_post_rr_list} once they are half of all buffers. At most
 * three native calls per read, none for a read served from bytes already held.
 *
 * <p>A receive of zero bytes is the peer's end-of-stream.
 */
final class ReceivePath {

    private final Vapi vapi;
    private final long hca;
    private final long qp;
    private final RegisteredRegion region;
    private final long regionAddress;
    private final int lkey;
    private final int bufferSize;
    private final int buffers;
    private final int repostBatch;       // emptied buffers re-posted together
    private final Memory requests;       // scratch list of receive descriptors to (re)post
    private final ByteBuffer requestView;
    private final CompletionQueue completions;
    private final ReceivedBlocks blocks;
    private final BooleanSupplier closed;
    private final ReentrantLock lock = new ReentrantLock();

    private volatile int available;      // blocks.held(), readable without the lock
    private volatile boolean inputShut;  // Socket.shutdownInput: reads return -1 from now on
    private boolean endOfStream;
    private IOException failure;         // reported once the bytes before it were read
    private IOException repostFailure;   // a refused re-post: reported once what arrived was read

    ReceivePath(QueuePair pair, BooleanSupplier closed) {
        this.vapi = pair.vapi();
        this.hca = pair.hca();
        this.qp = pair.qp();
        this.region = pair.receiveRegion();
        this.regionAddress = pair.receiveRegion().address();
        this.lkey = pair.receiveRegion().lkey();
        this.bufferSize = pair.mtu();
        this.buffers = pair.receiveBuffers();
        this.repostBatch = Math.max(1, buffers / 2);
        this.requests = new Memory((long) buffers * Desc.SIZE);
        this.requestView = VapiStructs.view(requests);
        this.completions = new CompletionQueue(vapi, hca, pair.receiveCq(), pair.receiveCqRing(), buffers, closed);
        this.blocks = new ReceivedBlocks(buffers);
        this.closed = closed;
    }

    /** Posts every receive buffer; called once, at connect. */
    void postAll() throws IOException {
        lock.lock();
        try {
            for (int i = 0; i < buffers; i++) {
                writeRequest(i, i);
            }
            postRequests(buffers);
        } finally {
            lock.unlock();
        }
    }

    int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        return len == 0 ? 0 : transfer(b, off, len, 0);
    }

    /** As {@link #read(byte[], int, int)}, waiting at most {@code timeoutMillis} (> 0) for the first byte. */
    int read(byte[] b, int off, int len, int timeoutMillis) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        return len == 0 ? 0 : transfer(b, off, len, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
    }

    long skip(long n) throws IOException {
        if (n <= 0) {
            return 0;
        }
        int skipped = transfer(null, 0, (int) Math.min(n, Integer.MAX_VALUE), 0);
        return Math.max(skipped, 0);
    }

    /** Bytes held locally; takes completions already there first, without blocking. */
    int available() throws IOException {
        if (closed.getAsBoolean()) {
            throw CompletionQueue.closedException();
        }
        if (lock.tryLock()) { // a reader blocked in read holds the lock: then nothing is held
            try {
                if (!closed.getAsBoolean() && !endOfStream && failure == null) {
                    take(completions.pollArrived());
                }
            } finally {
                lock.unlock();
            }
        }
        return available;
    }

    /**
     * Socket.shutdownInput: every read from now on returns -1, and so does one blocked now,
     * within a wait slice of its completion queue (see {@link CompletionQueue#await}). Bytes
     * held or arriving later are never read, as the JDK discards them.
     */
    void shutdownInput() {
        inputShut = true;
    }

    /** Waits until the thread inside (if any) has left, then frees the native memory. */
    void release() {
        lock.lock();
        try {
            completions.free();
            requests.close();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Copies (or, with {@code b} null, discards) up to {@code len} bytes; -1 at end-of-stream.
     * With {@code deadlineNanos} (System.nanoTime; 0: none) a wait that passes it with nothing
     * held throws SocketTimeoutException, and what arrives later is read next time.
     */
    private int transfer(byte[] b, int off, int len, long deadlineNanos) throws IOException {
        lock.lock();
        try {
            if (closed.getAsBoolean()) {
                throw CompletionQueue.closedException();
            }
            while (blocks.held() == 0 && !endOfStream && failure == null && !inputShut) {
                if (repostFailure != null) {
                    take(arrivedOrFail());
                    continue;
                }
                int arrived = completions.await(() -> inputShut, deadlineNanos);
                if (arrived == 0 && !inputShut) {
                    throw new SocketTimeoutException("Read timed out");
                }
                take(arrived);
            }
            if (inputShut) {
                return -1;
            }
            if (blocks.held() == 0) {
                if (endOfStream) {
                    return -1;
                }
                throw new SocketException(failure.getMessage());
            }
            int copied = 0;
            while (copied < len && blocks.held() > 0) {
                int n = Math.min(len - copied, blocks.headRemaining());
                if (b != null) {
                    region.get(blocks.headBuffer() * bufferSize + blocks.headOffset(), b, off + copied, n);
                }
                blocks.consume(n);
                copied += n;
            }
            repostConsumed();
            return copied;
        } finally {
            available = blocks.held();
            lock.unlock();
        }
    }

    /**
     * Re-posts the buffers emptied so far, in one call, once they are half of all buffers: a
     * small read then costs no native call here. While it waits, a reader holds no block, so
     * every buffer not awaiting re-post (more than half) is posted: the peer never finds the
     * receiver without one. A failure here is kept for a later read rather than thrown, so
     * the bytes this read copied are not lost, nor what arrived behind them.
     */
    private void repostConsumed() {
        int count = blocks.consumedCount();
        if (endOfStream || failure != null || repostFailure != null) {
            blocks.clearConsumed(); // nothing follows end-of-stream or a failure
            return;
        }
        if (count == 0 || count < repostBatch) {
            return;
        }
        for (int i = 0; i < count; i++) {
            writeRequest(i, blocks.consumed(i));
        }
        blocks.clearConsumed();
        try {
            postRequests(count);
        } catch (IOException e) {
            repostFailure = e;
        }
    }

    /**
     * After a refused re-post: the completions that have arrived, without waiting (the peer's
     * last bytes and its end of stream, when it left and its going failed the queue pair); when
     * there are none, the refusal becomes the failure. Taken for the failure at once, it hid an
     * end of stream already in the CQ (FabricStreamTest over libfabric tcp).
     */
    private int arrivedOrFail() throws SocketException {
        int n = completions.pollArrived();
        if (n == 0) {
            failure = repostFailure;
        }
        return n;
    }

    private void writeRequest(int index, int buffer) {
        Desc.write(requestView, index, buffer, VAPI_RECEIVE, VAPI_SIGNALED,
                regionAddress + (long) buffer * bufferSize, bufferSize, lkey);
    }

    private void postRequests(int count) throws IOException {
        int ret = vapi.EVAPI_post_rr_list(hca, qp, count, requests);
        if (ret != VapiConstants.VAPI_OK) {
            throw CompletionQueue.failed(VapiException.of(vapi, "EVAPI_post_rr_list", ret), closed.getAsBoolean());
        }
    }

    /**
     * Queues the data of {@code count} completions in arrival order. End-of-stream and errors
     * are remembered, not thrown, so bytes received before them are read first.
     */
    private void take(int count) {
        ByteBuffer wcs = completions.view();
        for (int i = 0; i < count && !endOfStream && failure == null; i++) {
            int status = Wc.status(wcs, i);
            long id = Wc.id(wcs, i);
            int bytes = Wc.byteLen(wcs, i);
            if (status != VAPI_SUCCESS) {
                failure = CompletionQueue.failure("a receive", status, closed.getAsBoolean(), vapi, hca, qp);
            } else if (id < 0 || id >= buffers || bytes < 0 || bytes > bufferSize) {
                failure = new IOException("the VAPI library completed a receive into buffer " + id
                        + " with " + Integer.toUnsignedString(bytes) + " bytes; there are " + buffers
                        + " buffers of " + bufferSize + " bytes");
            } else if (bytes == 0) {
                endOfStream = true;
            } else {
                blocks.add((int) id, bytes);
            }
        }
        available = blocks.held();
    }
}
