package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.util.List;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.EndpointSizes;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.spi.TransportProvider;
import org.aldeia.lowerlayer.LowerLayerException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Whatever a provider's layers throw (VAPI's and DECK's exceptions, here {@link LowerLayerException}),
 * the application sees what java.net's sockets throw: a SocketException, the provider's exception
 * its cause and its message unchanged.
 */
class LowerLayerExceptionsTest {

    private static final String FAILURE = "EVAPI_something failed: VAPI_EGEN";

    /** Fails every operation as a provider's native layer would. */
    private static final class FailingChannel implements Channel {
        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            throw new LowerLayerException(FAILURE);
        }

        @Override
        public void flush() throws IOException {
            throw new LowerLayerException(FAILURE);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            throw new LowerLayerException(FAILURE);
        }

        @Override
        public int available() throws IOException {
            throw new LowerLayerException(FAILURE);
        }

        @Override
        public long skip(long n) throws IOException {
            throw new LowerLayerException(FAILURE);
        }

        @Override
        public void shutdownOutput() throws IOException {
            throw new LowerLayerException(FAILURE);
        }

        @Override
        public void shutdownInput() throws IOException {
            throw new LowerLayerException(FAILURE);
        }

        @Override
        public void close() throws IOException {
            throw new LowerLayerException(FAILURE);
        }
    }

    private static AldeiaSocket socketOver(Channel channel) throws IOException {
        AldeiaSocket socket = new AldeiaSocket(TestEnvironments.inMemory());
        InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 1);
        socket.attachAccepted(channel, new BufferSizes(new EndpointSizes(8192, 2, 1 << 16), 1024), loopback, loopback);
        return socket;
    }

    private static void assertSocketExceptionCausedByTheLayerBelow(Executable call) {
        SocketException e = assertThrows(SocketException.class, call);
        assertInstanceOf(LowerLayerException.class, e.getCause());
        assertEquals(FAILURE, e.getMessage());
    }

    @Test
    void streamOperationsAndShutdownsThrowSocketException() throws IOException {
        AldeiaSocket socket = socketOver(new FailingChannel());
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        assertSocketExceptionCausedByTheLayerBelow(() -> in.read(new byte[4]));
        assertSocketExceptionCausedByTheLayerBelow(() -> in.skip(4));
        assertSocketExceptionCausedByTheLayerBelow(in::available);
        assertSocketExceptionCausedByTheLayerBelow(() -> out.write(new byte[4]));
        assertSocketExceptionCausedByTheLayerBelow(out::flush);
        socket.setSoTimeout(5000); // the timed read runs on a helper thread, and reports through it
        assertSocketExceptionCausedByTheLayerBelow(() -> in.read(new byte[4]));
        assertSocketExceptionCausedByTheLayerBelow(socket::shutdownOutput);
        assertSocketExceptionCausedByTheLayerBelow(socket::shutdownInput);
        assertSocketExceptionCausedByTheLayerBelow(socket::close);
    }

    /** A provider whose environment cannot start, as DECK's when its transport fails. */
    private static AldeiaEnvironment environmentThatFailsToStart() {
        TransportProvider broken = new TransportProvider() {
            @Override
            public String socketType() {
                return "SOCKET_BROKEN";
            }

            @Override
            public boolean isAvailable(AldeiaConfiguration configuration) {
                return true;
            }

            @Override
            public Transport open(AldeiaConfiguration configuration) throws IOException {
                throw new LowerLayerException(FAILURE);
            }
        };
        return new AldeiaEnvironment(() -> TestEnvironments.configuration("SOCKET_BROKEN"), () -> List.of(broken),
                false);
    }

    @Test
    void connectAndBindThrowSocketExceptionWhenTheProviderFails() {
        AldeiaSocket socket = new AldeiaSocket(environmentThatFailsToStart());
        assertSocketExceptionCausedByTheLayerBelow(
                () -> socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), 1)));
        assertSocketExceptionCausedByTheLayerBelow(() -> new AldeiaServerSocket(environmentThatFailsToStart(), 0, 50,
                InetAddress.getLoopbackAddress()));
    }
}
