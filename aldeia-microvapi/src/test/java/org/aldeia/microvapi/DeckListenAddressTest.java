package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * deck_listen_address: a server whose clients reach its application port at one address (here
 * 127.0.0.1) listens for DECK tcp at the configured one (127.0.0.2, another loopback address)
 * and nowhere else, and its clients, told so in the bootstrap, stream to it there.
 */
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class DeckListenAddressTest {

    @Test
    void theDeckPortOpensOnTheConfiguredAddressAndClientsReachItThere(@TempDir Path dir) throws Exception {
        Path server = Files.writeString(dir.resolve("server.conf"), "deck_transport = tcp\ndeck_listen_address = 127.0.0.2\n");
        // the DECK port opens at the bootstrap, which the client makes at connect here
        Path client = Files.writeString(dir.resolve("client.conf"), "deck_transport = tcp\nupgrade_after = 0\n");
        try (ChildJvm s = ChildJvm.start(List.of("-Daldeia.configuration=" + server), PeerMain.class)) {
            int port = Integer.parseInt(s.awaitLine("PORT "));
            try (ChildJvm c = ChildJvm.start(List.of("-Daldeia.configuration=" + client), VictimClientMain.class,
                    Integer.toString(port), "11")) {
                c.awaitLine("STREAMING");
                Set<InetSocketAddress> deck = ProcessResources.listeningAddresses(s.pid()).stream()
                        .filter(a -> a.getPort() != port).collect(Collectors.toSet());
                assertEquals(1, deck.size(), "DECK ports of the server: " + deck);
                assertEquals(InetAddress.getByName("127.0.0.2"), deck.iterator().next().getAddress());
                c.send("STOP");
                String end = c.awaitLine("STREAM ");
                assertTrue(end.startsWith("OK "), end + "; server: " + s.describe());
            }
        }
    }
}
