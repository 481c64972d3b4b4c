package org.aldeia.core;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.aldeia.core.spi.Channel;

/**
 * A read that honours SO_TIMEOUT on a channel that cannot bound its own waits ({@link
 * Channel#timedReads()} false; Aldeia's queue pairs and TCP-first connections can): a read that
 * would block is handed to a helper thread and the caller waits for it at most the timeout.
 * When the wait times out the read stays pending: its bytes are served by the next read, so a
 * timeout never loses or reorders data. Only reads that would block with a timeout set take
 * this path; the helper threads are pooled and die after a minute idle.
 */
final class PendingRead {

    private static final class Holder {
        static final ExecutorService READERS = Executors.newCachedThreadPool(task -> {
            Thread thread = new Thread(task, "aldeia-timed-read");
            thread.setDaemon(true);
            return thread;
        });
    }

    private final byte[] buffer;
    private final CompletableFuture<Integer> result = new CompletableFuture<>();
    private int position;

    private PendingRead(int size) {
        buffer = new byte[size];
    }

    /** Starts a channel read of up to {@code size} bytes on a helper thread. */
    static PendingRead start(Channel channel, int size) {
        PendingRead read = new PendingRead(size);
        Holder.READERS.execute(() -> {
            try {
                read.result.complete(channel.read(read.buffer, 0, size));
            } catch (Throwable e) {
                read.result.completeExceptionally(e);
            }
        });
        return read;
    }

    /**
     * Waits up to {@code timeoutMillis} (0: forever) for the read, then copies up to
     * {@code len} of its bytes.
     *
     * @return bytes copied, or -1 at end of stream
     * @throws SocketTimeoutException if the read is still pending; it stays pending
     */
    int take(byte[] b, int off, int len, int timeoutMillis) throws IOException {
        int count = await(timeoutMillis);
        if (count < 0) {
            return -1;
        }
        int n = Math.min(len, count - position);
        System.arraycopy(buffer, position, b, off, n);
        position += n;
        return n;
    }

    /** Whether every byte of this read was taken (or it ended the stream, or failed). */
    boolean finished() {
        if (!result.isDone()) {
            return false;
        }
        if (result.isCompletedExceptionally()) {
            return true; // getNow would throw the read's failure, which take already reported
        }
        int count = result.join();
        return count < 0 || position == count;
    }

    /** Bytes this read holds that were not taken yet, without waiting. */
    int available() {
        Integer count = result.isDone() && !result.isCompletedExceptionally() ? result.getNow(null) : null;
        return count == null || count < 0 ? 0 : count - position;
    }

    private int await(int timeoutMillis) throws IOException {
        try {
            return timeoutMillis == 0 ? result.get() : result.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new SocketTimeoutException("Read timed out");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a read");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            throw new IOException("Aldeia read failed: " + cause, cause);
        }
    }
}
