package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class SendRingTest {

    /** Claims blocks for a write of {@code len} bytes as the send path does; returns their sizes. */
    private static int[] cut(SendRing ring, int len) {
        int[] sizes = new int[64];
        int count = 0;
        for (int done = 0, n; done < len && (n = ring.nextBlockLength(len - done)) > 0; done += n) {
            ring.claim(n);
            sizes[count++] = n;
        }
        return Arrays.copyOf(sizes, count);
    }

    @Test
    void cutsWritesIntoMtuBlocksExactlyAtMultiples() {
        SendRing ring = new SendRing(16 * 1024, 1024, 16);
        assertEquals(3, cut(ring, 3 * 1024).length);
        assertEquals(1024, cut(ring, 1024)[0]);
        int[] sizes = cut(ring, 2 * 1024 + 1);
        assertEquals(3, sizes.length);
        assertEquals(1, sizes[2]);
        assertEquals(6 * 1024 + 1, 16 * 1024 - ring.freeBytes());
        assertEquals(7, ring.inFlight());
    }

    @Test
    void blockStopsAtRegionEndAndNextStartsAtZero() {
        SendRing ring = new SendRing(4096, 1024, 8);
        cut(ring, 3000);                  // blocks 1024,1024,952 -> head 3000
        ring.release(0);                  // frees the first 1024 bytes only
        assertEquals(3000, ring.head());
        int[] sizes = cut(ring, 2000);    // 1024 and 72 up to the end, then 904 from offset 0
        assertEquals(1024, sizes[0]);
        assertEquals(72, sizes[1]);
        assertEquals(904, sizes[2]);
        assertEquals(904, ring.head());
        assertEquals(4096 - 1976 - 2000, ring.freeBytes());
    }

    @Test
    void fullRegionGivesZeroUntilAReleaseAndReleaseFreesEveryEarlierRequest() {
        SendRing ring = new SendRing(4096, 1024, 8);
        assertEquals(4, cut(ring, 5000).length);
        assertEquals(0, ring.nextBlockLength(100));
        assertEquals(0, ring.freeBytes());
        assertEquals(3, ring.release(2));  // one signalled completion frees ids 0..2
        assertEquals(3 * 1024, ring.freeBytes());
        assertEquals(1, ring.inFlight());
        assertEquals(1, ring.release(3));
        assertTrue(ring.idle());
        assertEquals(0, ring.head(), "an idle ring starts again at offset 0");
    }

    @Test
    void descriptorSlotsRunOutBeforeTheRegionWithSmallBlocksAndWrap() {
        SendRing ring = new SendRing(4096, 1024, 4);
        for (int i = 0; i < 4; i++) {
            ring.claim(ring.nextBlockLength(1));
        }
        assertEquals(0, ring.freeSlots());
        assertEquals(0, ring.nextBlockLength(1), "no slot although 4092 bytes are free");
        ring.release(1);
        long id = ring.claim(ring.nextBlockLength(1));
        assertEquals(4, id);
        assertEquals(0, ring.slotOf(id), "slot numbers wrap around the descriptor ring");
        assertEquals(1, ring.slotOf(ring.claim(1)));
    }

    @Test
    void rejectsReleaseOfRequestNotInFlightAndOverfullClaim() {
        SendRing ring = new SendRing(2048, 1024, 2);
        cut(ring, 2048);
        assertThrows(IllegalArgumentException.class, () -> ring.release(2));
        ring.release(0);
        assertThrows(IllegalArgumentException.class, () -> ring.release(0));
        assertFalse(ring.isInFlight(0));
        assertTrue(ring.isInFlight(1));
        assertThrows(IllegalStateException.class, () -> ring.claim(2000));
        assertThrows(IllegalArgumentException.class, () -> new SendRing(512, 1024, 1));
    }

    @Test
    void zeroLengthRequestTakesASlotButNoBytes() {
        SendRing ring = new SendRing(2048, 1024, 2);
        long id = ring.claim(0);
        assertEquals(1, ring.inFlight());
        assertEquals(2048, ring.freeBytes());
        ring.release(id);
        assertTrue(ring.idle());
    }
}
