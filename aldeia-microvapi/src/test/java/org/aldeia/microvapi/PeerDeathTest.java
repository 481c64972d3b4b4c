package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.SocketException;
import java.util.Locale;
import org.aldeia.core.AldeiaSocket;
import org.aldeia.microvapi.PeerMain.Command;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A peer JVM that dies mid-stream (SIGKILL: it never closes its socket) must surface as an
 * IOException, neither a hang nor a silent end of stream: -1 would tell a reader that the peer
 * finished sending, and it did not; a writer must not be told its bytes were delivered.
 */
@Timeout(value = 60, threadMode = ThreadMode.SEPARATE_THREAD)
class PeerDeathTest {

    private static final Logger LOG = LoggerFactory.getLogger(PeerDeathTest.class);

    private ChildJvm child;

    /** In the fabric-* surefire executions, both ends run the fabric route (its library must be built). */
    @BeforeEach
    void libraryOfTheConfiguredRoute() throws Exception {
        FabricLibrary.assumeBuiltIfConfigured();
    }

    @AfterEach
    void stopChild() throws Exception {
        if (child != null) {
            child.close();
        }
    }

    @Test
    void readerGetsAnIOExceptionWhenThePeerIsKilledMidStream() throws Exception {
        child = ChildJvm.start(ChildJvm.thisJvmsConfiguration(), PeerMain.class);
        int port = Integer.parseInt(child.awaitLine("PORT "));
        long endless = Long.MAX_VALUE; // the child is still sending when it is killed
        try (AldeiaSocket socket = PeerMain.request(port, Command.SOURCE, 17, endless)) {
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[64 * 1024];
            in.readNBytes(buffer, 0, buffer.length); // the stream is flowing
            child.kill();
            IOException failure = assertThrows(IOException.class, () -> {
                while (in.read(buffer) >= 0) {
                    // drain what arrived before the kill
                }
                fail("read returned -1 although the peer was killed, not shut down");
            });
            LOG.info("the reader of a killed peer got: {}", failure.toString());
        }
    }

    @Test
    void writerGetsAnIOExceptionWhenThePeerIsKilledMidStream() throws Exception {
        child = ChildJvm.start(ChildJvm.thisJvmsConfiguration(), PeerMain.class);
        int port = Integer.parseInt(child.awaitLine("PORT "));
        try (AldeiaSocket socket = PeerMain.request(port, Command.SINK, 18, Long.MAX_VALUE)) {
            OutputStream out = socket.getOutputStream();
            byte[] block = new byte[64 * 1024];
            out.write(block);
            out.flush(); // delivered: the child is reading
            child.kill();
            // java.net code expects a SocketException from a reset peer, as a reader gets one
            SocketException failure = assertThrows(SocketException.class, () -> {
                // flush waits for delivery, which a dead peer can never confirm
                for (long written = 0; written < (1L << 30); written += block.length) {
                    out.write(block);
                    out.flush();
                }
                fail("1 GiB written and flushed to a killed peer without an error");
            });
            LOG.info("the writer to a killed peer got: {}", failure.toString());
            // Aldeia's channels say "connection reset ..."; on the TCP a connection starts on
            // (upgrade_after), the kernel's "Connection reset by peer" or "Broken pipe", as java.net's
            String message = failure.getMessage().toLowerCase(Locale.ROOT);
            assertTrue(message.startsWith("connection reset") || message.startsWith("broken pipe"), failure.toString());
        }
    }
}
