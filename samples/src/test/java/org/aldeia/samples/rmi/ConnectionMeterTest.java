package org.aldeia.samples.rmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The meter over JDK sockets: it counts connections and bytes exactly and counts none of them
 * as Aldeia's, which is what makes {@link RmiSampleTest}'s proof fail if the RMI factories ever
 * handed out plain sockets.
 */
@Timeout(30)
class ConnectionMeterTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Test
    void jdkConnectionsAreCountedWithTheirBytesButNotAsAldeia() throws Exception {
        ConnectionMeter meter = new ConnectionMeter();
        try (ServerSocket server = meter.wrap(port -> new ServerSocket(port, 50, LOOPBACK)).createServerSocket(0)) {
            assertInstanceOf(MeteredServerSocket.class, server);
            assertTrue(server.isBound() && server.getLocalPort() > 0);
            CompletableFuture<Socket> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return server.accept();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            try (Socket client = new Socket(LOOPBACK, server.getLocalPort())) {
                Socket peer = accepted.get(10, TimeUnit.SECONDS);
                try {
                    assertEquals(client.getLocalPort(), peer.getPort());
                    client.getOutputStream().write(new byte[1000]);
                    client.getOutputStream().write(7);
                    InputStream in = peer.getInputStream();
                    new DataInputStream(in).readFully(new byte[990]);
                    assertEquals(5, in.skip(5));
                    assertEquals(0, in.read());
                    OutputStream out = peer.getOutputStream();
                    out.write(new byte[10], 2, 6);
                    out.write(1);
                    new DataInputStream(client.getInputStream()).readFully(new byte[7]);
                    assertEquals(996, meter.bytesRead(), "bytes read and skipped");
                    assertEquals(7, meter.bytesWritten());
                } finally {
                    peer.close();
                }
                assertTrue(peer.isClosed());
                assertThrows(SocketException.class, peer::getInputStream, "a closed socket's stream, as java.net says");
            }
        }
        assertEquals(1, meter.connections());
        assertEquals(0, meter.aldeiaConnections());
        assertEquals("accepted 1 connections (0 AldeiaSocket), read 996 bytes, wrote 7 bytes", meter.summary());
    }
}
