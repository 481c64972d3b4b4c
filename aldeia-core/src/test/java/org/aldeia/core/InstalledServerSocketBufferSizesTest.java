package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.config.SocketRules;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Under {@link Aldeia#install()}, java.net.ServerSocket's SO_RCVBUF reaches the Aldeia sockets
 * it accepts, as it does for java.net's accepted sockets (mtu 1000 in these tests).
 */
@Timeout(60)
class InstalledServerSocketBufferSizesTest extends InMemoryEnvironmentTest {


    /** java.net.ServerSocket over the installed impl, under the default bind rule. */
    private final class InstalledServer extends ServerSocket {
        private volatile InstalledSocketImpl lastAccepted;

        InstalledServer() throws IOException {
            super(new InstalledServerSocketImpl(() -> environment, SocketRules.defaults()));
        }

        @Override
        public Socket accept() throws IOException {
            InstalledSocketImpl impl = new InstalledSocketImpl(() -> environment, SocketRules.defaults());
            Socket socket = new Socket(impl) {};
            implAccept(socket);
            lastAccepted = impl;
            return socket;
        }
    }

    private Socket acceptAldeiaClient(ServerSocket server) throws Exception {
        CompletableFuture<Socket> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return server.accept();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        try (AldeiaSocket client = new AldeiaSocket(environment)) {
            client.connect(server.getLocalSocketAddress(), 5000);
            return accepted.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void acceptedAldeiaSocketsGetTheServerSocketsReceiveBufferSize() throws Exception {
        try (InstalledServer server = new InstalledServer()) {
            server.setReceiveBufferSize(500_000);
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (Socket accepted = acceptAldeiaClient(server)) {
                assertTrue(server.lastAccepted.isAldeia());
                assertEquals(500_000, accepted.getReceiveBufferSize(), "the window it inherited");
                assertEquals(TestEnvironments.SEND_REGION, accepted.getSendBufferSize(), "SO_SNDBUF is not inherited");
            }
            server.setOption(StandardSocketOptions.SO_RCVBUF, 6500);
            try (Socket accepted = acceptAldeiaClient(server)) {
                assertEquals(BufferSizes.MIN_RECEIVE_WINDOW, accepted.getReceiveBufferSize(),
                        "6500 bytes are raised to the smallest window");
            }
        }
    }

    @Test
    void withoutSoRcvbufAcceptedAldeiaSocketsGetTheConfigurationsWindow() throws Exception {
        try (InstalledServer server = new InstalledServer()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (Socket accepted = acceptAldeiaClient(server)) {
                assertEquals(AldeiaConfiguration.defaults().receiveWindow(), accepted.getReceiveBufferSize());
            }
        }
    }
}
