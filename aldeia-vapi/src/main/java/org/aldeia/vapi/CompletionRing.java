package org.aldeia.vapi;

import com.sun.jna.Pointer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.aldeia.vapi.VapiStructs.CqRing;
import org.aldeia.vapi.VapiStructs.Wc;

/**
 * A completion queue the library lets us read in its memory ({@code EVAPI_map_cq}): taking the
 * completions already there costs no native call, as verbs libraries poll their CQs in user
 * space. A flush whose completion has arrived, or a read whose data has, then crosses into C
 * not at all. One consumer at a time: the owning side's lock (the library's own poll calls,
 * made by that same thread, take from the same ring).
 */
final class CompletionRing {

    /** int fields of native memory with the acquire/release modes the ring's protocol needs. */
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    private final ByteBuffer memory;
    private final int mask;

    private CompletionRing(ByteBuffer memory, int capacity) {
        this.memory = memory;
        this.mask = capacity - 1;
    }

    /**
     * Maps {@code cq}; null when the library does not offer it ({@code VAPI_ENOSYS}).
     *
     * @throws VapiException if mapping failed otherwise, or the ring is not what vapi.h says
     */
    static CompletionRing map(Vapi vapi, long hca, long cq) throws VapiException {
        long[] address = new long[1];
        int ret = vapi.EVAPI_map_cq(hca, cq, address);
        if (ret == VapiConstants.VAPI_ENOSYS) {
            return null;
        }
        VapiException.check(vapi, "EVAPI_map_cq", ret);
        Pointer ring = new Pointer(address[0]);
        int capacity = ring.getInt(CqRing.CAP);
        if (capacity <= 0 || Integer.bitCount(capacity) != 1 || address[0] % 64 != 0) {
            throw new VapiException("EVAPI_map_cq", VapiConstants.VAPI_EGEN, null, "the library mapped a ring of "
                    + capacity + " entries at 0x" + Long.toHexString(address[0])
                    + "; vapi.h wants a power of two, aligned to 64 bytes");
        }
        ByteBuffer memory = ring.getByteBuffer(0, CqRing.ENTRIES + (long) capacity * Wc.SIZE)
                .order(ByteOrder.nativeOrder());
        return new CompletionRing(memory, capacity);
    }

    /**
     * Moves up to {@code max} completions into {@code into} (as {@link Wc}, from index 0).
     *
     * @return how many
     */
    int take(ByteBuffer into, int max) {
        int head = memory.getInt(CqRing.HEAD); // ours: only this thread moves it
        int tail = (int) INT.getAcquire(memory, CqRing.TAIL);
        int n = Math.min(tail - head, max);
        for (int i = 0; i < n; i++) {
            int from = CqRing.ENTRIES + ((head + i) & mask) * Wc.SIZE;
            int to = i * Wc.SIZE;
            into.putLong(to, memory.getLong(from));
            into.putLong(to + 8, memory.getLong(from + 8));
            into.putLong(to + 16, memory.getLong(from + 16));
        }
        if (n > 0) {
            INT.setRelease(memory, CqRing.HEAD, head + n);
        }
        return Math.max(n, 0);
    }
}
