package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import org.aldeia.vapi.VapiStructs.CqRing;
import org.aldeia.vapi.VapiStructs.Wc;
import org.junit.jupiter.api.Test;

/** The mapped CQ ring as vapi.h draws it, written here as the library would write it. */
class CompletionRingTest {

    private static final int CAP = 4;

    /** A 64-byte aligned ring of CAP entries inside {@code memory}. */
    private static Pointer ring(Memory memory) {
        long aligned = (Pointer.nativeValue(memory) + 63) & ~63L;
        Pointer ring = new Pointer(aligned);
        ring.setMemory(0, CqRing.ENTRIES + (long) CAP * Wc.SIZE, (byte) 0);
        ring.setInt(CqRing.CAP, CAP);
        return ring;
    }

    /** What the library does for completion k: the entry, then tail. */
    private static void produce(Pointer ring, int k, long id, int byteLen) {
        Wc.write(ring.share(CqRing.ENTRIES), k % CAP, id, VapiConstants.VAPI_SUCCESS, VapiConstants.VAPI_RECEIVE, byteLen);
        ring.setInt(CqRing.TAIL, k + 1);
    }

    private static Vapi mapping(Pointer ring) {
        Vapi vapi = mock(Vapi.class);
        doAnswer(call -> {
            ((long[]) call.getArgument(2))[0] = Pointer.nativeValue(ring);
            return VapiConstants.VAPI_OK;
        }).when(vapi).EVAPI_map_cq(anyLong(), anyLong(), any());
        return vapi;
    }

    @Test
    void takesWhatTheLibraryPublishedInOrderAcrossTheWrap() throws Exception {
        try (Memory memory = new Memory(CqRing.ENTRIES + CAP * Wc.SIZE + 64);
                Memory out = new Memory(CAP * Wc.SIZE)) {
            Pointer ring = ring(memory);
            CompletionRing mapped = CompletionRing.map(mapping(ring), 1, 2);
            ByteBuffer into = VapiStructs.view(out);
            assertEquals(0, mapped.take(into, CAP));
            int produced = 0;
            int taken = 0;
            for (int round = 0; round < 5; round++) {
                for (int i = 0; i < 3; i++, produced++) {
                    produce(ring, produced, 100 + produced, produced * 10);
                }
                int n = mapped.take(into, 2); // no more than asked for
                n += mapped.take(into.slice(2 * Wc.SIZE, Wc.SIZE).order(into.order()), 2);
                assertEquals(3, n);
                for (int i = 0; i < 3; i++, taken++) {
                    assertEquals(100 + taken, Wc.id(into, i));
                    assertEquals(taken * 10, Wc.byteLen(into, i));
                }
                assertEquals(taken, ring.getInt(CqRing.HEAD), "head tells the library what it may reuse");
            }
        }
    }

    @Test
    void aLibraryThatDoesNotMapLeavesTheCallsToBeUsed() throws Exception {
        Vapi vapi = mock(Vapi.class);
        doAnswer(call -> VapiConstants.VAPI_ENOSYS).when(vapi).EVAPI_map_cq(anyLong(), anyLong(), any());
        assertNull(CompletionRing.map(vapi, 1, 2));
    }

    @Test
    void aRingThatIsNotWhatVapiHSaysIsRefused() throws Exception {
        try (Memory memory = new Memory(CqRing.ENTRIES + CAP * Wc.SIZE + 64)) {
            Pointer ring = ring(memory);
            ring.setInt(CqRing.CAP, 3);
            VapiException e = assertThrows(VapiException.class, () -> CompletionRing.map(mapping(ring), 1, 2));
            assertEquals("EVAPI_map_cq", e.function());
        }
    }
}
