package org.aldeia.core.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The bootstrap's key pairs: agreement both ways, public keys that agree nothing, a bounded memory. */
class PeerKeysTest {

    @Test
    void twoProcessesAgreeTheSamePairKeyAndAThirdAnother() throws IOException {
        PeerKeys a = new PeerKeys(), b = new PeerKeys(), c = new PeerKeys();
        byte[] ab = a.agree(b.publicKey(), "b");
        assertArrayEquals(ab, b.agree(a.publicKey(), "a"));
        assertEquals(32, ab.length);
        assertFalse(Arrays.equals(ab, a.agree(c.publicKey(), "c")));
        assertTrue(a.isOwn(a.publicKey()));
        assertFalse(a.isOwn(b.publicKey()));
    }

    @Test
    void knowsAPeerOnlyOnceItsPairKeyIsAgreed() throws IOException {
        PeerKeys a = new PeerKeys(), b = new PeerKeys();
        assertFalse(a.knows(b.publicKey()));
        a.agree(b.publicKey(), "b");
        assertTrue(a.knows(b.publicKey()));
        assertFalse(b.knows(a.publicKey()), "b agreed nothing yet");
        assertFalse(a.knows(new byte[31]));
        assertFalse(a.knows(null));
    }

    @Test
    void aPublicKeyOfTheWrongSizeOrOfSmallOrderIsRefusedNamingThePeer() throws IOException {
        PeerKeys a = new PeerKeys();
        IOException shortKey = assertThrows(IOException.class, () -> a.agree(new byte[31], "the stranger"));
        assertTrue(shortKey.getMessage().contains("the stranger") && shortKey.getMessage().contains("31 bytes"),
                shortKey.getMessage());
        // u = 0 and u = 1 are points of small order: X25519 with them gives the all-zero secret
        byte[] one = new byte[32];
        one[0] = 1;
        for (byte[] smallOrder : List.of(new byte[32], one)) {
            IOException e = assertThrows(IOException.class, () -> a.agree(smallOrder, "the stranger"));
            assertTrue(e.getMessage().contains("the stranger"), e.getMessage());
        }
    }

    @Test
    void strangersWithNewPublicKeysCannotGrowTheMemoryOfAgreedKeys() throws IOException {
        PeerKeys a = new PeerKeys();
        List<PeerKeys> peers = new ArrayList<>();
        for (int i = 0; i < PeerKeys.REMEMBERED + 20; i++) {
            PeerKeys peer = new PeerKeys();
            peers.add(peer);
            a.agree(peer.publicKey(), "peer " + i);
        }
        assertEquals(PeerKeys.REMEMBERED, a.remembered());
        // the first was forgotten; it agrees the same key again
        PeerKeys first = peers.get(0);
        assertArrayEquals(first.agree(a.publicKey(), "a"), a.agree(first.publicKey(), "peer 0"));
        assertEquals(PeerKeys.REMEMBERED, a.remembered());
    }
}
