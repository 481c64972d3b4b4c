package org.aldeia.vapi;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.aldeia.core.spi.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connected queue pair as a byte stream: the thesis's "VAPI adapter" (4.4.3). One thread may
 * write while another reads; each side has its own lock ({@link SendPath}, {@link ReceivePath}).
 */
public final class QueuePairChannel implements Channel {
    private static final Logger LOG = LoggerFactory.getLogger(QueuePairChannel.class);

    private final QueuePair pair;
    private final SendPath send;
    private final ReceivePath receive;
    private final AtomicBoolean closing = new AtomicBoolean();
    private volatile boolean closed;

    private QueuePairChannel(QueuePair pair, int blockSize) throws VapiException {
        this.pair = pair;
        this.send = new SendPath(pair, blockSize, this::isClosed);
        this.receive = new ReceivePath(pair, this::isClosed);
    }

    /**
     * Wraps a queue pair already moved to RTS and posts its receive buffers. On failure the
     * queue pair is left to the caller.
     *
     * @param blockSize largest block sent: the path MTU, at most the peer's receive buffers
     */
    static QueuePairChannel open(QueuePair pair, int blockSize) throws IOException {
        QueuePairChannel channel = new QueuePairChannel(pair, blockSize);
        try {
            channel.receive.postAll();
        } catch (IOException | RuntimeException e) {
            channel.send.release();
            channel.receive.release();
            throw e;
        }
        if (pair.trimmable()) {
            RingTrimmer.register(channel.send);
        }
        return channel;
    }

    private boolean isClosed() {
        return closed;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        send.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
        send.flush();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        return receive.read(b, off, len);
    }

    @Override
    public int read(byte[] b, int off, int len, int timeoutMillis) throws IOException {
        return receive.read(b, off, len, timeoutMillis);
    }

    @Override
    public boolean timedReads() {
        return true;
    }

    @Override
    public int available() throws IOException {
        return receive.available();
    }

    @Override
    public long skip(long n) throws IOException {
        return receive.skip(n);
    }

    @Override
    public void shutdownOutput() throws IOException {
        send.shutdownOutput();
    }

    @Override
    public void shutdownInput() {
        receive.shutdownInput();
    }

    /**
     * Sends end-of-stream unless the output is shut down already (a broken peer is not an
     * error here), then destroys the queue pair, which completes outstanding requests with a
     * flush error and wakes blocked threads; they throw "Socket closed". Once they have left
     * native code the completion queues, registrations and memory are released.
     */
    @Override
    public void close() throws IOException {
        close(false);
    }

    /**
     * Destroys the queue pair without the end of stream: the library tells the peer that the
     * connection was reset (a queue pair destroyed before its end of stream went).
     */
    @Override
    public void abort() throws IOException {
        close(true);
    }

    private void close(boolean abortive) throws IOException {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        try {
            if (!abortive) {
                send.shutdownForClose();
            }
        } catch (IOException e) {
            LOG.debug("end-of-stream not delivered while closing queue pair {}: {}", pair.qpNum(), e.getMessage());
        }
        closed = true;
        try {
            pair.destroyQp();
        } catch (VapiException e) {
            LOG.warn("closing queue pair {}: {}", pair.qpNum(), e.getMessage());
        }
        send.release();
        receive.release();
        pair.release();
    }

    @Override
    public String toString() {
        return "QueuePairChannel[qp " + Integer.toUnsignedString(pair.qpNum()) + (closed ? ", closed]" : "]");
    }
}
