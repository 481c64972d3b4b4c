package org.aldeia.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The demo's two-JVM set-up, with the ping-pong server in a child JVM over JDK sockets. */
@Timeout(120)
class ChildJvmTest {

    @Test
    void aServerInAChildJvmAnswersAndEndsCleanly() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        try (ChildJvm server = ChildJvm.start("test server", PingPong.class,
                List.of("server", "--port", String.valueOf(port), "--impl", "jdk"))) {
            String ready = server.awaitLineContaining(MainRunner.READY, Duration.ofSeconds(60));
            assertTrue(ready.endsWith(" " + port), ready);
            try (Socket socket = SocketKind.JDK.connect("127.0.0.1", port)) {
                List<PingPongResult> results = new PingPongClient(socket).run(List.of(10, 5000), 3, 0, 0);
                assertEquals(2, results.size());
            }
            assertEquals(List.of(), server.awaitSuccess(Duration.ofSeconds(30)));
        }
    }

    @Test
    void aChildThatFailsIsReportedWithItsStatus() throws Exception {
        try (ChildJvm child = ChildJvm.start("test child", PingPong.class, List.of("server", "--impl", "jdk"))) {
            IOException e = assertThrows(IOException.class,
                    () -> child.awaitLineContaining(MainRunner.READY, Duration.ofSeconds(60)));
            assertTrue(e.getMessage().contains("ended (status " + MainRunner.USAGE + ")"), e.getMessage());
        }
    }
}
