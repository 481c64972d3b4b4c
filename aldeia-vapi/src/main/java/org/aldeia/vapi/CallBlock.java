package org.aldeia.vapi;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import org.aldeia.vapi.VapiStructs.Call;

/**
 * The calling thread's block for vapi.h's one-argument calls ({@code EVAPI_call_t},
 * {@link Call}). A JNA direct call costs by its arguments: on this project's machine 60 ns with
 * one, 97 with three, 116 with four ({@code EVAPI_post_sr_list}); every message makes a post
 * at its writer and a wait at its reader, so {@link VapiDirect} passes those two (and the
 * re-post of receive buffers) as one block's address. One block per thread: the library reads
 * it only during the call, and a thread makes one call at a time, whichever library it calls.
 */
final class CallBlock {

    private static final ThreadLocal<CallBlock> MINE = ThreadLocal.withInitial(CallBlock::new);

    private final Memory memory = new Memory(Call.SIZE);   // freed with the block, after its thread
    private final ByteBuffer fields = VapiStructs.view(memory);
    private final long address = Pointer.nativeValue(memory);

    private CallBlock() {
    }

    /** The calling thread's block, filled with a post's arguments; its address. */
    static long post(long hca, long qp, int num, long list) {
        return MINE.get().fill(hca, qp, list, num);
    }

    /** The calling thread's block, filled with a wait's arguments; its address. */
    static long waitCq(long hca, long cq, int timeoutUsec) {
        return MINE.get().fill(hca, cq, 0, timeoutUsec);
    }

    private long fill(long hca, long handle, long list, int count) {
        fields.putLong(Call.HCA, hca);
        fields.putLong(Call.HANDLE, handle);
        fields.putLong(Call.LIST, list);
        fields.putInt(Call.COUNT, count);
        return address;
    }
}
