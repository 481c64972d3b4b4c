package org.aldeia.core.upgrade;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import java.io.IOException;
import java.net.SocketException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.aldeia.core.spi.Channel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The channel of a socket accept returned before its client confirmed: nothing is sent to the
 * client (a write, a flush, the end of stream of a close) until it confirms, by its CONNECTED or
 * by a byte it sent; a client that never confirms fails the socket; a close that comes first is
 * carried out when the client confirms, without the closer waiting.
 */
@Timeout(30)
class UnconfirmedChannelTest {

    private final Channel inner = mock(Channel.class);
    private final UnconfirmedChannel channel = new UnconfirmedChannel(inner, "127.0.0.1:1234");

    private CompletableFuture<Void> writeAsync() {
        return CompletableFuture.runAsync(() -> {
            try {
                channel.write(new byte[] {1}, 0, 1);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    private static void assertStillWaiting(CompletableFuture<Void> write) throws Exception {
        assertThrows(TimeoutException.class, () -> write.get(200, TimeUnit.MILLISECONDS), "sent before the confirmation");
    }

    @Test
    void aWriteWaitsForTheConfirmation() throws Exception {
        CompletableFuture<Void> write = writeAsync();
        assertStillWaiting(write);
        verify(inner, never()).write(any(), anyInt(), anyInt());
        channel.confirm();
        write.get(5, TimeUnit.SECONDS);
        verify(inner).write(any(), anyInt(), anyInt());
    }

    @Test
    void aByteFromTheClientConfirmsButAnEndOfStreamDoesNot() throws Exception {
        when(inner.read(any(), anyInt(), anyInt())).thenReturn(-1, 1);
        CompletableFuture<Void> write = writeAsync();
        assertEquals(-1, channel.read(new byte[1], 0, 1)); // what shutdownInput also gives
        assertStillWaiting(write);
        assertEquals(1, channel.read(new byte[1], 0, 1));
        write.get(5, TimeUnit.SECONDS);
    }

    @Test
    void aTimedReadGoesToTheChannelBelowAndItsByteConfirms() throws Exception {
        when(inner.timedReads()).thenReturn(true);
        when(inner.read(any(), anyInt(), anyInt(), anyInt())).thenReturn(1);
        CompletableFuture<Void> write = writeAsync();
        assertStillWaiting(write);
        assertTrue(channel.timedReads());
        assertEquals(1, channel.read(new byte[1], 0, 1, 700));
        verify(inner).read(any(), eq(0), eq(1), eq(700));
        write.get(5, TimeUnit.SECONDS);
    }

    @Test
    void aClientThatNeverConfirmsFailsTheSocket() throws Exception {
        CompletableFuture<Void> write = writeAsync();
        assertStillWaiting(write);
        channel.fail(new IOException("the client closed its bootstrap connection"));
        ExecutionException e = assertThrows(ExecutionException.class, () -> write.get(5, TimeUnit.SECONDS));
        assertInstanceOf(IOException.class, e.getCause().getCause());
        verify(inner).abort(); // a blocked read ends too
        assertThrows(IOException.class, channel::flush);
        channel.confirm(); // too late: it stays failed
        assertThrows(IOException.class, () -> channel.write(new byte[1], 0, 1));
        verify(inner, never()).write(any(), anyInt(), anyInt());
    }

    @Test
    void aCloseBeforeTheConfirmationIsCarriedOutWhenItComes() throws Exception {
        CompletableFuture<Void> write = writeAsync();
        assertStillWaiting(write);
        channel.close(); // returns at once
        verify(inner, never()).close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> write.get(5, TimeUnit.SECONDS));
        assertInstanceOf(SocketException.class, e.getCause().getCause(), "a writer waiting in a closed socket");
        channel.confirm();
        verify(inner, times(1)).close();
        verify(inner, never()).write(any(), anyInt(), anyInt());
    }

    @Test
    void aCloseBeforeAFailureReleasesTheChannelOnce() throws Exception {
        channel.abort();
        channel.fail(new IOException("deadline"));
        verify(inner, times(1)).abort();
        verify(inner, never()).close();
        channel.confirm();
        verify(inner, times(1)).abort();
    }

    @Test
    void onceConfirmedEverythingGoesStraightThrough() throws Exception {
        channel.confirm();
        channel.write(new byte[] {1}, 0, 1);
        channel.flush();
        channel.close();
        verify(inner).write(any(), anyInt(), anyInt());
        verify(inner).flush();
        verify(inner).close();
    }
}
