package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.atLeastOnce;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mockingDetails;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.net.SocketException;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.aldeia.core.spi.Channel;
import org.aldeia.vapi.Fixtures.ChannelPair;
import org.aldeia.vapi.FakeVapi.Posted;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;

class QueuePairChannelSendTest {

    private static byte[] random(int len, long seed) {
        byte[] b = new byte[len];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Reads until end-of-stream. */
    static byte[] readAll(Channel c) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[777];
        for (int n; (n = c.read(buf, 0, buf.length)) != -1; ) {
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }

    @Test
    void aWriteIsPostedInPortionsAsItIsCopiedEachEndingSignalled() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 256 * 1024, 16)) {
            clearInvocations(p.vapi);
            p.a.write(random(100 * 1024, 1), 0, 100 * 1024);
            ArgumentCaptor<Integer> counts = ArgumentCaptor.forClass(Integer.class);
            verify(p.vapi, times(2)).EVAPI_post_sr_list(anyLong(), anyLong(), counts.capture(), any());
            int perPortion = SendPath.DEFAULT_POST_PORTION / 1024;
            assertEquals(List.of(perPortion, 100 - perPortion), counts.getAllValues());
            List<Posted> posted = p.fake.posted;
            assertEquals(100, posted.size());
            for (int i = 0; i < 100; i++) {
                assertEquals(1024, posted.get(i).len());
                assertEquals(i == perPortion - 1 || i == 99, posted.get(i).signalled(), "block " + i);
            }
        }
    }

    @Test
    void portionsAreWhatTheLibrarySaysItMovesAsOneTransfer() throws IOException {
        int block = 64 * 1024;
        try (ChannelPair p = new ChannelPair(block, 1024 * 1024, 16, 4 * block)) {
            clearInvocations(p.vapi);
            p.a.write(random(1024 * 1024 + 8, 3), 0, 1024 * 1024 + 8);
            ArgumentCaptor<Integer> counts = ArgumentCaptor.forClass(Integer.class);
            verify(p.vapi, atLeastOnce()).EVAPI_post_sr_list(anyLong(), anyLong(), counts.capture(), any());
            assertEquals(List.of(4, 4, 4, 5), counts.getAllValues(), "four portions, the tail with the last");
            List<Posted> posted = p.fake.posted;
            for (int i = 0; i < posted.size(); i++) {
                assertEquals(i % 4 == 3 && i < 12 || i == 16, posted.get(i).signalled(), "block " + i);
            }
        }
    }

    @Test
    void aShortTailGoesWithThePortionBeforeIt() throws IOException {
        int portion = SendPath.DEFAULT_POST_PORTION;
        try (ChannelPair p = new ChannelPair(portion, 4 * portion, 16)) {
            for (int tail : new int[] {8, SendPath.POST_TAIL, SendPath.POST_TAIL + 1}) {
                p.a.flush();
                clearInvocations(p.vapi);
                p.a.write(new byte[portion + tail], 0, portion + tail);
                ArgumentCaptor<Integer> counts = ArgumentCaptor.forClass(Integer.class);
                verify(p.vapi, atLeastOnce()).EVAPI_post_sr_list(anyLong(), anyLong(), counts.capture(), any());
                assertEquals(tail <= SendPath.POST_TAIL ? List.of(2) : List.of(1, 1), counts.getAllValues(),
                        "a write of a portion and " + tail + " bytes");
            }
        }
    }

    @Test
    void nativeCallsPerWriteGrowByOnePerPortionNotPerBlock() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 1024 * 1024, 16)) {
            int[] sizes = {1, 60 * 1024, 200 * 1024, 600 * 1024};
            int[] calls = new int[sizes.length];
            for (int i = 0; i < sizes.length; i++) {
                p.a.flush();
                clearInvocations(p.vapi);
                p.a.write(new byte[sizes[i]], 0, sizes[i]);
                calls[i] = mockingDetails(p.vapi).getInvocations().size();
            }
            assertEquals(1, calls[0], "one post while the ring is mostly free");
            assertEquals(1, calls[1], "one post for 60 blocks");
            assertEquals(4, calls[2], "a post per 64 KiB portion for 200 blocks");
            assertEquals(10 + 1, calls[3], "a post per portion, and one non-blocking poll once half the ring is in flight");
        }
    }

    @Test
    void blocksAreMtuSizedWithTheRemainderLast() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 16 * 1024, 4)) {
            p.a.write(new byte[3 * 1024 + 1], 0, 3 * 1024 + 1);
            assertEquals(List.of(1024, 1024, 1024, 1), p.fake.posted.stream().map(Posted::len).toList());
        }
    }

    @Test
    void descriptorRingWrapSplitsThePostInTwo() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 4 * 1024, 4)) {
            p.a.write(new byte[3 * 1024], 0, 3 * 1024);
            p.a.flush();
            clearInvocations(p.vapi);
            p.a.write(new byte[3 * 1024], 0, 3 * 1024);   // slots 3, then 0 and 1
            ArgumentCaptor<Integer> counts = ArgumentCaptor.forClass(Integer.class);
            verify(p.vapi, times(2)).EVAPI_post_sr_list(anyLong(), anyLong(), counts.capture(), any());
            assertEquals(List.of(1, 2), counts.getAllValues());
        }
    }

    @Test
    void writeLargerThanFreeRingBlocksUntilACompletionThenResumes() throws Exception {
        try (ChannelPair p = new ChannelPair(1024, 4 * 1024, 8)) {
            p.fake.holdSendCompletions = true;
            byte[] data = random(6 * 1024 + 10, 2);
            CountDownLatch written = new CountDownLatch(1);
            AtomicReference<Throwable> error = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    p.a.write(data, 0, data.length);
                } catch (Throwable t) {
                    error.set(t);
                }
                written.countDown();
            });
            writer.start();
            assertFalse(written.await(500, TimeUnit.MILLISECONDS), "the write must block on a full ring");
            assertEquals(4, p.fake.posted.size(), "one region's worth posted before blocking");
            assertTrue(p.fake.posted.get(3).signalled(), "a portion before blocking ends signalled");
            p.fake.releaseHeldCompletions();
            assertTrue(written.await(5, TimeUnit.SECONDS));
            writer.join();
            assertEquals(null, error.get());
            p.a.shutdownOutput();
            assertArrayEquals(data, readAll(p.b));
        }
    }

    @Test
    void flushWaitsForSignalledCompletions() throws Exception {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            p.fake.holdSendCompletions = true;
            p.a.write(new byte[100], 0, 100);
            CountDownLatch flushed = new CountDownLatch(1);
            Thread flusher = new Thread(() -> {
                try {
                    p.a.flush();
                    flushed.countDown();
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            flusher.start();
            assertFalse(flushed.await(400, TimeUnit.MILLISECONDS));
            p.fake.releaseHeldCompletions();
            assertTrue(flushed.await(5, TimeUnit.SECONDS));
            flusher.join();
        }
    }

    @Test
    void zeroLengthWritePostsNothing() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            clearInvocations(p.vapi);
            p.a.write(new byte[4], 2, 0);
            verify(p.vapi, never()).EVAPI_post_sr_list(anyLong(), anyLong(), anyInt(), any());
            assertThrows(IndexOutOfBoundsException.class, () -> p.a.write(new byte[4], 3, 2));
        }
    }

    @Test
    void streamSurvivesManyWrapsWithRandomSizes() throws IOException {
        try (ChannelPair p = new ChannelPair(512, 5000, 4)) {
            Random rnd = new Random(3);
            ByteArrayOutputStream sent = new ByteArrayOutputStream();
            for (int i = 0; i < 300; i++) {
                byte[] chunk = random(rnd.nextInt(3000), i);
                p.a.write(chunk, 0, chunk.length);
                sent.write(chunk);
            }
            p.a.shutdownOutput();
            assertTrue(p.fake.posted.stream().allMatch(x -> x.len() <= 512));
            assertArrayEquals(sent.toByteArray(), readAll(p.b));
        }
    }

    @Test
    void sendToAPeerThatWentAwayFailsNamingIt() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            p.b.close();
            // the failed completion shows in the write's own poll, or at the latest in flush
            IOException e = assertThrows(IOException.class, () -> {
                p.a.write(new byte[10], 0, 10);
                p.a.flush();
            });
            assertTrue(e.getMessage().contains("peer went away"), e.getMessage());
            assertThrows(SocketException.class, () -> p.a.write(new byte[1], 0, 1), "the stream stays broken");
        }
    }

    @Test
    void writeAfterShutdownOutputOrCloseFails() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            p.a.shutdownOutput();
            p.a.shutdownOutput(); // idempotent: one end-of-stream
            assertEquals(1, p.fake.posted.size());
            assertEquals(0, p.fake.posted.get(0).len());
            assertTrue(p.fake.posted.get(0).signalled());
            assertThrows(SocketException.class, () -> p.a.write(new byte[1], 0, 1));
            p.a.close();
            p.a.close();
            SocketException e = assertThrows(SocketException.class, () -> p.a.flush());
            assertEquals("Socket closed", e.getMessage());
        }
    }

    /**
     * A close while the ring trimmer holds the send path's lock for a moment still ends the
     * stream in order: it waits for the lock and posts its end of stream, where it used to give
     * up at once and destroy the queue pair without one (the peer then read a reset).
     */
    @Test
    void aCloseWhileTheTrimmerHoldsTheLockStillSendsEndOfStream() throws Exception {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            Field sendField = QueuePairChannel.class.getDeclaredField("send");
            sendField.setAccessible(true);
            Field lockField = SendPath.class.getDeclaredField("lock");
            lockField.setAccessible(true);
            ReentrantLock lock = (ReentrantLock) lockField.get(sendField.get(p.a));
            CountDownLatch held = new CountDownLatch(1);
            Thread trimmer = new Thread(() -> {
                lock.lock();
                try {
                    held.countDown();
                    Thread.sleep(SendPath.CLOSE_LOCK_WAIT_MS / 5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    lock.unlock();
                }
            }, "test-trimmer");
            trimmer.start();
            assertTrue(held.await(5, TimeUnit.SECONDS));
            p.a.close();
            trimmer.join();
            assertEquals(1, p.fake.posted.size(), "the end of stream was posted");
            assertEquals(0, p.fake.posted.get(0).len());
        }
    }

    /**
     * The close of another thread lands between a write's look at the channel and its post: the
     * library refuses the post (the queue pair is gone), and the writer gets java.net's
     * "Socket closed", not the library's VAPI_EINVAL_QP_HNDL.
     */
    @Test
    void aPostRefusedBecauseAnotherThreadClosedTheChannelIsSocketClosed() throws Exception {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            doAnswer(post -> {
                Thread closer = new Thread(() -> {
                    try {
                        p.a.close();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }, "test-closer");
                closer.setDaemon(true);
                closer.start();
                // the mock records VAPI_destroy_qp before the fake runs it: wait for the fake's own
                // word, or this post could take the fake's monitor first and succeed
                while (!p.fake.destroyed(p.qpNumA)) {
                    Thread.sleep(1);
                }
                return p.fake.EVAPI_post_sr_list(post.getArgument(0), post.getArgument(1), post.getArgument(2),
                        post.getArgument(3));
            }).when(p.vapi).EVAPI_post_sr_list(anyLong(), anyLong(), anyInt(), any());
            SocketException e = assertThrows(SocketException.class, () -> p.a.write(new byte[10], 0, 10));
            assertEquals("Socket closed", e.getMessage());
            assertTrue(e.getCause() instanceof VapiException, String.valueOf(e.getCause()));
            assertTrue(e.getCause().getMessage().contains("VAPI_EINVAL_QP_HNDL"), e.getCause().getMessage());
        }
    }
}
