package org.aldeia.vapi;

import static org.aldeia.vapi.QueuePairChannelSendTest.readAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.atLeast;
import static org.mockito.Mockito.clearInvocations;
import static org.mockito.Mockito.doReturn;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.aldeia.vapi.Fixtures.ChannelPair;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentCaptor;

class QueuePairChannelReceiveTest {

    private static byte[] bytes(int len, int first) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = (byte) (first + i);
        }
        return b;
    }

    @Test
    void oneReadTakesEveryCompletedBufferInOrder() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            for (int i = 0; i < 3; i++) {
                p.a.write(bytes(100, i * 100), 0, 100);
            }
            byte[] buf = new byte[1000];
            assertEquals(300, p.b.read(buf, 0, buf.length));
            assertArrayEquals(bytes(300, 0), Arrays.copyOf(buf, 300));
        }
    }

    @Test
    void partialReadKeepsTheRestAsAvailable() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            p.a.write(bytes(1000, 0), 0, 1000);
            byte[] buf = new byte[1000];
            assertEquals(10, p.b.read(buf, 0, 10));
            assertEquals(990, p.b.available());
            assertEquals(5, p.b.skip(5));
            assertEquals(985, p.b.read(buf, 15, 985));
            assertArrayEquals(bytes(10, 0), Arrays.copyOf(buf, 10));
            assertArrayEquals(bytes(985, 15), Arrays.copyOfRange(buf, 15, 1000));
            assertEquals(0, p.b.available());
        }
    }

    @Test
    void availableTakesArrivedCompletionsWithoutBlocking() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            assertEquals(0, p.b.available());
            p.a.write(bytes(1500, 0), 0, 1500);
            assertEquals(1500, p.b.available());
        }
    }

    @Test
    void endOfStreamReadsAsMinusOneAfterTheData() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            p.a.write(bytes(50, 0), 0, 50);
            p.a.shutdownOutput();
            byte[] buf = new byte[100];
            assertEquals(50, p.b.read(buf, 0, 100));
            assertEquals(-1, p.b.read(buf, 0, 100));
            assertEquals(-1, p.b.read(buf, 0, 1));
            assertEquals(0, p.b.skip(10));
            assertEquals(0, p.b.read(buf, 0, 0), "len 0 reads 0 even at end-of-stream");
            assertThrows(IndexOutOfBoundsException.class, () -> p.b.read(buf, 90, 11));
            assertThrows(IndexOutOfBoundsException.class, () -> p.b.read(buf, -1, 1));
        }
    }

    /** Four of p.b's eight buffers read empty, with their re-post refused; into buf. */
    private static void readHalfWithRepostRefused(ChannelPair p, byte[] buf) throws IOException {
        doReturn(VapiConstants.VAPI_EINVAL_QP_STATE).when(p.vapi).EVAPI_post_rr_list(anyLong(), anyLong(),
                anyInt(), any());
        p.a.write(bytes(4 * 1024, 0), 0, 4 * 1024);
        assertEquals(4 * 1024, p.b.read(buf, 0, 4 * 1024), "four buffers emptied: their re-post is refused");
        assertArrayEquals(bytes(4 * 1024, 0), Arrays.copyOf(buf, 4 * 1024));
    }

    @Test
    void aRefusedRepostStillReadsWhatArrivedThenEndOfStream() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            byte[] buf = new byte[4 * 1024];
            readHalfWithRepostRefused(p, buf);
            p.a.write(bytes(10, 7), 0, 10);
            p.a.shutdownOutput();
            assertEquals(10, p.b.read(buf, 0, buf.length), "what came into the buffers still posted");
            assertArrayEquals(bytes(10, 7), Arrays.copyOf(buf, 10));
            assertEquals(-1, p.b.read(buf, 0, buf.length));
        }
    }

    @Test
    void aRefusedRepostFailsTheReadOnceNothingArrived() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            byte[] buf = new byte[4 * 1024];
            readHalfWithRepostRefused(p, buf);
            IOException e = assertThrows(IOException.class, () -> p.b.read(buf, 0, buf.length));
            assertTrue(e.getMessage().contains("EVAPI_post_rr_list"), e.getMessage());
        }
    }

    @Test
    void errorCompletionFailsTheReadAfterEarlierBytes() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            p.a.write(bytes(20, 0), 0, 20);
            p.fake.inject(p.fake.receiveCqOf(p.qpNumB), 3, VapiConstants.VAPI_REM_ABORT_ERR,
                    VapiConstants.VAPI_RECEIVE, 0);
            byte[] buf = new byte[100];
            assertEquals(20, p.b.read(buf, 0, 100));
            IOException e = assertThrows(IOException.class, () -> p.b.read(buf, 0, 100));
            assertTrue(e.getMessage().contains("VAPI_REM_ABORT_ERR") && e.getMessage().contains("peer went away"),
                    e.getMessage());
        }
    }

    @Test
    void errorCompletionCarriesWhatTheLibrarySaysOfTheQueuePair() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 8)) {
            String why = "receiving from mailbox mv-rq-1 failed: shared segment /dev/shm/deck-0/t-0-2: a sequence gap";
            p.fake.failQueuePair(p.qpNumB, why);
            p.fake.inject(p.fake.receiveCqOf(p.qpNumB), 3, VapiConstants.VAPI_GENERAL_ERR,
                    VapiConstants.VAPI_RECEIVE, 0);
            IOException e = assertThrows(IOException.class, () -> p.b.read(new byte[10], 0, 10));
            assertTrue(e.getMessage().endsWith("(the transfer failed): " + why), e.getMessage());
        }
    }

    @Test
    void completionForAnUnknownBufferIsAnError() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 4)) {
            p.fake.inject(p.fake.receiveCqOf(p.qpNumB), 99, VapiConstants.VAPI_SUCCESS,
                    VapiConstants.VAPI_RECEIVE, 10);
            IOException e = assertThrows(IOException.class, () -> p.b.read(new byte[10], 0, 10));
            assertTrue(e.getMessage().contains("buffer 99"), e.getMessage());
        }
    }

    @Test
    void consumedBuffersAreRepostedInOneCall() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 64 * 1024, 2)) {
            byte[] data = bytes(5 * 1024, 7);      // five blocks, only two receives posted
            p.a.write(data, 0, data.length);
            assertEquals(0, p.fake.postedReceives(p.qpNumB));
            clearInvocations(p.vapi);
            byte[] buf = new byte[2048];
            assertEquals(2048, p.b.read(buf, 0, 2048));
            ArgumentCaptor<Integer> counts = ArgumentCaptor.forClass(Integer.class);
            verify(p.vapi).EVAPI_post_rr_list(anyLong(), anyLong(), counts.capture(), any());
            assertEquals(2, counts.getValue(), "both emptied buffers in one post");
            p.a.shutdownOutput();
            byte[] rest = readAll(p.b);
            assertArrayEquals(Arrays.copyOfRange(data, 2048, data.length), rest);
        }
    }

    @Test
    void emptiedBuffersAreRepostedTogetherOnceHalfOfThemAreEmpty() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 4)) {
            for (int i = 0; i < 3; i++) {
                p.a.write(bytes(100, i), 0, 100); // one buffer each
            }
            clearInvocations(p.vapi);
            assertEquals(99, p.b.read(new byte[99], 0, 99));
            assertEquals(1, p.b.read(new byte[1], 0, 1)); // buffer 0 empty: 1 of 4, under half
            verify(p.vapi, never()).EVAPI_post_rr_list(anyLong(), anyLong(), anyInt(), any());
            assertEquals(100, p.b.read(new byte[100], 0, 100)); // buffer 1 empty: half of them
            verify(p.vapi).EVAPI_post_rr_list(anyLong(), anyLong(), eq(2), any());
        }
    }

    @Test
    void aTimedReadTimesOutInItsOwnThreadAndTheBytesThatComeLaterAreReadNext() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 4)) {
            assertTrue(p.b.timedReads());
            long start = System.nanoTime();
            SocketTimeoutException timeout = assertThrows(SocketTimeoutException.class,
                    () -> p.b.read(new byte[10], 0, 10, 150));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(140), "timed out too early");
            assertEquals("Read timed out", timeout.getMessage());
            p.a.write(bytes(6, 0), 0, 6);
            byte[] buf = new byte[10];
            assertEquals(6, p.b.read(buf, 0, 10, 5_000));
            assertArrayEquals(bytes(6, 0), Arrays.copyOf(buf, 6));
        }
    }

    @Test
    void readBlocksUntilDataArrives() throws Exception {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 4)) {
            AtomicReference<Integer> got = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            Thread reader = new Thread(() -> {
                try {
                    got.set(p.b.read(new byte[10], 0, 10));
                } catch (IOException e) {
                    got.set(-2);
                }
                done.countDown();
            });
            reader.start();
            assertFalse(done.await(300, TimeUnit.MILLISECONDS));
            p.a.write(bytes(4, 0), 0, 4);
            assertTrue(done.await(5, TimeUnit.SECONDS));
            assertEquals(4, got.get());
            verify(p.vapi, atLeast(1)).EVAPI_poll_cq_block(anyLong(), anyLong(), anyInt(), any());
        }
    }

    @Test
    void closeWakesABlockedReaderAndThePeerSeesEndOfStream() throws Exception {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 4)) {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            Thread reader = new Thread(() -> {
                try {
                    p.b.read(new byte[10], 0, 10);
                } catch (Throwable t) {
                    thrown.set(t);
                }
                done.countDown();
            });
            reader.start();
            assertFalse(done.await(200, TimeUnit.MILLISECONDS));
            p.b.close();
            assertTrue(done.await(5, TimeUnit.SECONDS));
            assertTrue(thrown.get() instanceof SocketException, String.valueOf(thrown.get()));
            assertEquals("Socket closed", thrown.get().getMessage());
            assertEquals(-1, p.a.read(new byte[10], 0, 10), "close sent end-of-stream");
            assertThrows(SocketException.class, () -> p.b.available());
            verify(p.vapi).VAPI_destroy_qp(anyLong(), anyLong());
            verify(p.vapi, atLeast(2)).VAPI_deregister_mr(anyLong(), anyLong());
        }
    }

    @Test
    void shutdownInputEndsABlockedReadWithEndOfStreamAndEveryLaterOne() throws Exception {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 4)) {
            AtomicReference<Object> got = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            Thread reader = new Thread(() -> {
                try {
                    got.set(p.b.read(new byte[10], 0, 10));
                } catch (Throwable t) {
                    got.set(t);
                }
                done.countDown();
            });
            reader.start();
            assertFalse(done.await(300, TimeUnit.MILLISECONDS));
            p.b.shutdownInput();
            // within a wait slice of the completion queue, with room for a slow machine
            assertTrue(done.await(CompletionQueue.WAIT_SLICE_USEC / 1000 + 1000, TimeUnit.MILLISECONDS));
            assertEquals(-1, got.get());
            p.a.write(bytes(4, 0), 0, 4);
            p.a.flush();
            assertEquals(-1, p.b.read(new byte[10], 0, 10), "bytes after shutdownInput are never read");
        }
    }

    /** A failing vapi.h call under a stream operation reaches the caller as java.net's exception. */
    @Test
    void aFailedPollIsASocketExceptionCarryingTheLibrarysAccount() throws IOException {
        try (ChannelPair p = new ChannelPair(1024, 8 * 1024, 4)) {
            doReturn(VapiConstants.VAPI_EGEN).when(p.vapi).EVAPI_poll_cq_many(anyLong(), anyLong(), anyInt(), any(), any());
            SocketException e = assertThrows(SocketException.class, () -> p.b.available());
            assertTrue(e.getCause() instanceof VapiException, String.valueOf(e.getCause()));
            assertTrue(e.getMessage().contains("EVAPI_poll_cq_many"), e.getMessage());
        }
    }
}
