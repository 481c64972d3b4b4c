package org.aldeia.core.memory;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** The receive side of an in-memory channel: delivered blocks, read as a byte stream. */
final class ByteInbox {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<byte[]> blocks = new ArrayDeque<>();
    private int headOffset;
    private int available;
    private boolean ended;
    private boolean closed;

    void deliver(byte[] block) {
        lock.lock();
        try {
            blocks.add(block);
            available += block.length;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The peer shut its output: reads return -1 after the last byte. */
    void end() {
        lock.lock();
        try {
            ended = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** This side closed: blocked and later reads fail. */
    void close() {
        lock.lock();
        try {
            closed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        lock.lock();
        try {
            awaitData();
            if (available == 0) {
                return -1;
            }
            int copied = 0;
            while (copied < len && !blocks.isEmpty()) {
                byte[] head = blocks.peek();
                int n = Math.min(len - copied, head.length - headOffset);
                System.arraycopy(head, headOffset, b, off + copied, n);
                copied += n;
                consume(head, n);
            }
            return copied;
        } finally {
            lock.unlock();
        }
    }

    long skip(long n) throws IOException {
        lock.lock();
        try {
            awaitData();
            long skipped = 0;
            while (skipped < n && !blocks.isEmpty()) {
                byte[] head = blocks.peek();
                int step = (int) Math.min(n - skipped, head.length - headOffset);
                skipped += step;
                consume(head, step);
            }
            return skipped;
        } finally {
            lock.unlock();
        }
    }

    int available() throws IOException {
        lock.lock();
        try {
            if (closed) {
                throw new IOException("in-memory channel closed");
            }
            return available;
        } finally {
            lock.unlock();
        }
    }

    private void awaitData() throws IOException {
        try {
            while (available == 0 && !ended && !closed) {
                changed.await();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted in read");
        }
        if (closed) {
            throw new IOException("in-memory channel closed");
        }
    }

    private void consume(byte[] head, int n) {
        headOffset += n;
        available -= n;
        if (headOffset == head.length) {
            blocks.poll();
            headOffset = 0;
        }
    }
}
