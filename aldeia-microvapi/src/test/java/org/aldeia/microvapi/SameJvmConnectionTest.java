package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.aldeia.core.AldeiaServerSocket;
import org.aldeia.core.AldeiaSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * A server and its client in one JVM, as in-process tests and single-JVM applications do:
 * both ends share one DECK process, which must not be introduced to itself.
 */
@Timeout(value = 60, threadMode = ThreadMode.SEPARATE_THREAD)
class SameJvmConnectionTest {

    @Test
    void aSocketConnectedToItsOwnJvmCarriesStreamsBothWays() throws Exception {
        long total = 4 << 20;
        try (AldeiaServerSocket server = new AldeiaServerSocket(0)) {
            CompletableFuture<Socket> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return server.accept();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try (AldeiaSocket client = new AldeiaSocket("127.0.0.1", server.getLocalPort());
                    Socket peer = accepted.get(30, TimeUnit.SECONDS)) {
                CompletableFuture<Void> far = CompletableFuture.runAsync(() -> {
                    try {
                        StreamCheck.exchange(peer, 2, total);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                StreamCheck.exchange(client, 2, total);
                far.get(30, TimeUnit.SECONDS);
                assertEquals(AldeiaSocket.class, peer.getClass());
            }
        }
    }
}
