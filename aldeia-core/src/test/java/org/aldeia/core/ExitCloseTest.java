package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.AldeiaEnvironmentTest.FakeProvider;
import org.aldeia.core.spi.Channel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the JVM's exit does with sockets the application left open: their data reaches the peer
 * followed by end of stream, and only then is the transport closed (a transport closed under
 * open channels fails, as VAPI's HCA release does); a peer that never takes the data does not
 * hold the exit.
 */
@Timeout(30)
class ExitCloseTest {

    @Test
    void socketsLeftOpenDeliverTheirDataAndEndOfStreamBeforeTheTransportCloses() throws Exception {
        AldeiaEnvironment exiting = TestEnvironments.inMemory();
        AldeiaEnvironment peer = TestEnvironments.inMemory(); // the other JVM
        AldeiaSocket server;
        AldeiaSocket client = new AldeiaSocket(exiting);
        try (AldeiaServerSocket listener = TestEnvironments.listen(peer)) {
            CompletableFuture<AldeiaSocket> accepted = TestEnvironments.acceptAsync(listener);
            client.connect(listener.getLocalSocketAddress(), 5000);
            server = accepted.get(10, TimeUnit.SECONDS);
        }
        client.getOutputStream().write(new byte[] {1, 2, 3}); // posted, never flushed nor closed

        exiting.closeAtExit(5_000);

        InputStream in = server.getInputStream();
        assertEquals(1, in.read());
        assertEquals(2, in.read());
        assertEquals(3, in.read());
        assertEquals(-1, in.read(), "the client's channel was closed at exit");
        IOException closed = assertThrows(IOException.class, () -> TestEnvironments.connect(exiting));
        assertTrue(String.valueOf(closed.getMessage()).contains("closed"), closed.toString());
        server.close();
        peer.close();
    }

    @Test
    void aChannelThatCannotDeliverDoesNotHoldTheExitAndTheTransportIsLeftOpen() throws Exception {
        FakeProvider provider = new FakeProvider("SOCKET_FAKE", true, null);
        AldeiaEnvironment environment = startedOn(provider);
        CountDownLatch never = new CountDownLatch(1);
        Object socket = new Object();
        environment.track(socket, stuckChannel(never), 0);

        long start = System.nanoTime();
        environment.closeAtExit(200);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertTrue(millis >= 200 && millis < 5_000, "waited " + millis + " ms");
        assertEquals(0, provider.closed.get(), "the transport stays under the channel still closing");
        never.countDown();
    }

    @Test
    void withNothingLeftOpenTheTransportClosesAtOnce() throws Exception {
        FakeProvider provider = new FakeProvider("SOCKET_FAKE", true, null);
        startedOn(provider).closeAtExit(5_000);
        assertEquals(1, provider.closed.get());
    }

    private static AldeiaEnvironment startedOn(FakeProvider provider) throws IOException {
        AldeiaEnvironment environment = new AldeiaEnvironment(() -> TestEnvironments.configuration(provider.type),
                () -> List.of(provider), false);
        environment.transport();
        return environment;
    }

    /** A channel whose close waits for a peer that never takes the data. */
    private static Channel stuckChannel(CountDownLatch release) throws IOException {
        Channel channel = mock(Channel.class);
        doAnswer(invocation -> release.await(1, TimeUnit.MINUTES)).when(channel).close();
        return channel;
    }
}
