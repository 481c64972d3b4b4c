package org.aldeia.core.plain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Waits of a plain channel, on the spare selector (the first wait of a direction) and on the
 * connection's own (the next ones): data wakes them, a close from another thread ends them and
 * really closes the channel, an interrupt neither ends the read nor closes the channel, and
 * connections that wait once leave no selector behind.
 */
class PlainChannelIoTest {

    private ServerSocketChannel listener;

    @BeforeEach
    void listen() throws IOException {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    }

    @AfterEach
    void stop() throws IOException {
        listener.close();
    }

    /** A connected pair: the PlainChannelIo side and the peer's blocking channel. */
    private record Pair(PlainChannelIo io, SocketChannel peer) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            io.close();
            peer.close();
        }
    }

    private Pair connect() throws IOException {
        SocketChannel client = SocketChannel.open();
        PlainChannelIo io = new PlainChannelIo(client);
        io.connect((InetSocketAddress) listener.getLocalAddress(), 5000);
        return new Pair(io, listener.accept());
    }

    private static CompletableFuture<Integer> readLater(PlainChannelIo io, byte[] into) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return io.read(into, 0, into.length, 0);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void firstAndLaterWaitsWakeForData() throws Exception {
        try (Pair pair = connect()) {
            for (int round = 0; round < 3; round++) {   // round 0 waits on the spare, then on its own
                byte[] got = new byte[3];
                CompletableFuture<Integer> read = readLater(pair.io(), got);
                Thread.sleep(50);
                assertFalse(read.isDone(), "a read returned before any data was sent");
                pair.peer().write(ByteBuffer.wrap(new byte[] {1, 2, (byte) round}));
                assertEquals(3, read.get(5, TimeUnit.SECONDS));
                assertArrayEquals(new byte[] {1, 2, (byte) round}, got);
            }
        }
    }

    @Test
    void closeEndsAFirstWaitAndClosesTheChannel() throws Exception {
        closeEndsAWait(0);
    }

    @Test
    void closeEndsALaterWaitAndClosesTheChannel() throws Exception {
        closeEndsAWait(2);
    }

    private void closeEndsAWait(int waitsBefore) throws Exception {
        try (Pair pair = connect()) {
            for (int i = 0; i < waitsBefore; i++) {
                CompletableFuture<Integer> read = readLater(pair.io(), new byte[1]);
                Thread.sleep(20);
                pair.peer().write(ByteBuffer.wrap(new byte[] {7}));
                assertEquals(1, read.get(5, TimeUnit.SECONDS));
            }
            CompletableFuture<Integer> waiting = readLater(pair.io(), new byte[1]);
            Thread.sleep(50);
            pair.io().close();
            Throwable ended = assertThrows(Exception.class, () -> waiting.get(5, TimeUnit.SECONDS));
            assertTrue(ended.getCause().getCause() instanceof SocketException, ended.toString());
            // really closed: the peer reads its end of stream
            pair.peer().socket().setSoTimeout(5000);
            assertEquals(-1, pair.peer().socket().getInputStream().read());
        }
    }

    @Test
    void anInterruptNeitherEndsTheFirstWaitNorClosesTheChannel() throws Exception {
        try (Pair pair = connect()) {
            byte[] got = new byte[1];
            CompletableFuture<Boolean> interruptedAfter = new CompletableFuture<>();
            Thread reader = new Thread(() -> {
                try {
                    pair.io().read(got, 0, 1, 0);
                    interruptedAfter.complete(Thread.currentThread().isInterrupted());
                } catch (IOException e) {
                    interruptedAfter.completeExceptionally(e);
                }
            });
            reader.start();
            Thread.sleep(50);
            reader.interrupt();
            Thread.sleep(50);
            assertFalse(interruptedAfter.isDone(), "the interrupt ended the read");
            pair.peer().write(ByteBuffer.wrap(new byte[] {9}));
            assertTrue(interruptedAfter.get(5, TimeUnit.SECONDS), "the interrupt status was not set again");
            assertEquals(9, got[0]);
        }
    }

    @Test
    void connectionsThatWaitOnceLeaveNoSelectorBehind() throws Exception {
        try (Pair warm = connect()) {   // the spare exists from the first wait on
            CompletableFuture<Integer> read = readLater(warm.io(), new byte[1]);
            Thread.sleep(20);
            warm.peer().write(ByteBuffer.wrap(new byte[] {1}));
            read.get(5, TimeUnit.SECONDS);
        }
        long before = openDescriptors();
        for (int i = 0; i < 100; i++) {
            try (Pair pair = connect()) {
                CompletableFuture<Integer> read = readLater(pair.io(), new byte[1]);
                pair.peer().write(ByteBuffer.wrap(new byte[] {1}));
                assertEquals(1, read.get(5, TimeUnit.SECONDS));
            }
        }
        long after = openDescriptors();
        // 100 selectors left open would be 200 descriptors; a few come and go with the pool threads
        assertTrue(after - before < 10, "descriptors went from " + before + " to " + after);
    }

    private static long openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }
}
