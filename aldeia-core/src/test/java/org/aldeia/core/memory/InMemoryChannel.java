package org.aldeia.core.memory;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.aldeia.core.spi.Channel;

/**
 * An in-memory channel with the SPI's semantics: write copies into MTU-sized blocks of a
 * bounded send queue and returns; a courier thread delivers them to the peer's inbox in
 * order (so, as with a real transport, data arrives without flush, later); flush waits until
 * every block was delivered.
 */
final class InMemoryChannel implements Channel {

    private final ByteInbox inbox;
    private final ByteInbox peer;
    private final int mtu;
    private final int sendCapacity;
    private final Runnable onClose;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<byte[]> outgoing = new ArrayDeque<>();
    private long queuedBytes;
    private boolean outputShut;
    private boolean closed;
    private final Thread courier;

    InMemoryChannel(ByteInbox inbox, ByteInbox peer, int mtu, int sendCapacity, Runnable onClose) {
        this.inbox = inbox;
        this.peer = peer;
        this.mtu = mtu;
        this.sendCapacity = sendCapacity;
        this.onClose = onClose;
        courier = new Thread(this::deliverLoop, "memory-courier");
        courier.setDaemon(true);
        courier.start();
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        lock.lock();
        try {
            for (int done = 0; done < len; ) {
                int n = Math.min(mtu, len - done);
                while (queuedBytes + n > sendCapacity && !closed) {
                    awaitChange();
                }
                checkWritable();
                outgoing.add(Arrays.copyOfRange(b, off + done, off + done + n));
                queuedBytes += n;
                done += n;
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void flush() throws IOException {
        lock.lock();
        try {
            while (queuedBytes > 0 && !closed) {
                awaitChange();
            }
            if (closed && queuedBytes > 0) {
                throw new IOException("in-memory channel closed before everything was delivered");
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        return inbox.read(b, off, len);
    }

    @Override
    public int available() throws IOException {
        return inbox.available();
    }

    @Override
    public long skip(long n) throws IOException {
        return inbox.skip(n);
    }

    @Override
    public void shutdownOutput() throws IOException {
        flush();
        lock.lock();
        try {
            if (outputShut) {
                return;
            }
            outputShut = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        peer.end();
    }

    @Override
    public void shutdownInput() {
        inbox.end();
    }

    @Override
    public void close() throws IOException {
        lock.lock();
        try {
            if (closed) {
                return;
            }
        } finally {
            lock.unlock();
        }
        try {
            shutdownOutput();
        } finally {
            lock.lock();
            try {
                closed = true;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
            inbox.close();
            onClose.run();
            try {
                courier.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void deliverLoop() {
        while (true) {
            byte[] block;
            lock.lock();
            try {
                while (outgoing.isEmpty() && !outputShut && !closed) {
                    changed.awaitUninterruptibly();
                }
                if (outgoing.isEmpty()) {
                    return;
                }
                block = outgoing.peek();
            } finally {
                lock.unlock();
            }
            peer.deliver(block);
            lock.lock();
            try {
                outgoing.poll();
                queuedBytes -= block.length;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    private void checkWritable() throws IOException {
        if (closed) {
            throw new IOException("in-memory channel closed");
        }
        if (outputShut) {
            throw new IOException("in-memory channel output is shut down");
        }
    }

    private void awaitChange() throws IOException {
        try {
            changed.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted");
        }
    }
}
