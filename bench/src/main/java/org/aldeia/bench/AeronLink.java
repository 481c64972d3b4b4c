package org.aldeia.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.Header;

/**
 * A {@link MessageLink} over Aeron IPC: one publication each way on {@code aeron:ipc}, both JVMs
 * using the media driver embedded in the server JVM (its directory is the rendezvous).
 *
 * <p>These machines have 2 cores, so neither the driver nor the polling threads busy-spin: all
 * idle with a {@link BackoffIdleStrategy} (a few spins, then yields, then parks of 1..100 µs).
 * That costs Aeron some latency against a dedicated-core setup; the table says so.
 */
final class AeronLink implements MessageLink {

    /** Term length of the IPC log buffers: Aeron's largest message is term length / 8 = 2 MiB. */
    static final int TERM_LENGTH = 16 * 1024 * 1024;
    private static final String CHANNEL = "aeron:ipc";
    private static final int CLIENT_TO_SERVER = 1001;
    private static final int SERVER_TO_CLIENT = 1002;
    private static final Duration CONNECT_LIMIT = Duration.ofSeconds(30);

    private final MediaDriver driver;
    private final Aeron aeron;
    private final ExclusivePublication publication;
    private final Subscription subscription;
    private final IdleStrategy idle = idleStrategy();
    private final UnsafeBuffer sendBuffer = new UnsafeBuffer(new byte[0]);
    private final FragmentAssembler assembler = new FragmentAssembler(this::onMessage);
    private byte[] target;
    private int received;
    private String receiveError;

    private AeronLink(MediaDriver driver, Aeron aeron, int publishOn, int subscribeTo) throws IOException {
        this.driver = driver;
        this.aeron = aeron;
        this.publication = aeron.addExclusivePublication(CHANNEL, publishOn);
        this.subscription = aeron.addSubscription(CHANNEL, subscribeTo);
    }

    /** Starts the embedded media driver in {@code directory} and the server's publication pair. */
    static AeronLink startServer(Path directory) throws IOException {
        MediaDriver.Context context = new MediaDriver.Context()
                .aeronDirectoryName(directory.toString())
                .threadingMode(ThreadingMode.SHARED)
                .sharedIdleStrategy(idleStrategy())
                .ipcTermBufferLength(TERM_LENGTH)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true);
        MediaDriver driver = MediaDriver.launch(context);
        try {
            Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(directory.toString()));
            return new AeronLink(driver, aeron, SERVER_TO_CLIENT, CLIENT_TO_SERVER);
        } catch (RuntimeException e) {
            driver.close();
            throw new IOException("Aeron: starting a client of the embedded driver in " + directory + " failed: " + e, e);
        }
    }

    /** Connects to the server JVM's media driver in {@code directory}. */
    static AeronLink connectClient(Path directory) throws IOException {
        try {
            Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(directory.toString()));
            return new AeronLink(null, aeron, CLIENT_TO_SERVER, SERVER_TO_CLIENT);
        } catch (RuntimeException e) {
            throw new IOException("Aeron: connecting to the media driver in " + directory + " failed: " + e, e);
        }
    }

    /** Waits until the peer's subscription and publication are both there. */
    void awaitPeer() throws IOException {
        long deadline = System.nanoTime() + CONNECT_LIMIT.toNanos();
        idle.reset();
        while (!publication.isConnected() || !subscription.isConnected()) {
            if (System.nanoTime() > deadline) {
                throw new IOException("Aeron: the peer did not connect on " + CHANNEL + " within "
                        + CONNECT_LIMIT.toSeconds() + " s");
            }
            idle.idle();
        }
    }

    @Override
    public void send(byte[] frame, int type, int payloadLength) throws IOException {
        BenchProtocol.writeHeader(frame, type, payloadLength);
        sendBuffer.wrap(frame, 0, BenchProtocol.HEADER_BYTES + payloadLength);
        idle.reset();
        for (long result = publication.offer(sendBuffer); result < 0; result = publication.offer(sendBuffer)) {
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED
                    || result == Publication.NOT_CONNECTED) {
                throw new IOException("Aeron: offer of a " + payloadLength + "-byte message failed: "
                        + Publication.errorString(result) + " (the peer is gone?)");
            }
            idle.idle(); // BACK_PRESSURED or ADMIN_ACTION: the receiver has not caught up yet
        }
    }

    /** Nothing to do: an offered message is already in the shared log buffer. */
    @Override
    public void flush() {
    }

    @Override
    public int receive(byte[] frame) throws IOException {
        target = frame;
        received = -1;
        receiveError = null;
        idle.reset();
        // Fragment limit 1: a poll completes at most one message, so none is read ahead.
        while (received < 0 && receiveError == null) {
            int fragments = subscription.poll(assembler, 1);
            if (fragments == 0 && !subscription.isConnected()) {
                throw new IOException("Aeron: the peer's publication went away while waiting for a message");
            }
            idle.idle(fragments);
        }
        if (receiveError != null) {
            throw new IOException("Aeron: " + receiveError);
        }
        int length = BenchProtocol.length(frame);
        if (length != received - BenchProtocol.HEADER_BYTES) {
            throw new IOException("Aeron: a " + received + "-byte message announces a " + length + "-byte payload");
        }
        return length;
    }

    private void onMessage(DirectBuffer buffer, int offset, int length, Header header) {
        if (length > target.length) {
            receiveError = "a " + length + "-byte message does not fit the " + target.length + "-byte frame";
            return;
        }
        buffer.getBytes(offset, target, 0, length);
        received = length;
    }

    /**
     * Closes this side; the server first gives the client a few seconds to close its side, so
     * the driver does not vanish under a client that is still shutting down.
     */
    @Override
    public void close() {
        if (driver != null) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            idle.reset();
            while (subscription.isConnected() && System.nanoTime() < deadline) {
                idle.idle();
            }
        }
        aeron.close();
        if (driver != null) {
            driver.close();
        }
    }

    private static IdleStrategy idleStrategy() {
        return new BackoffIdleStrategy(100, 100, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(100));
    }
}
