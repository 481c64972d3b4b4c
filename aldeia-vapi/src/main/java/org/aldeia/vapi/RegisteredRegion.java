package org.aldeia.vapi;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Native memory registered with the HCA once, for the life of a socket (registration is costly
 * and privileged, so it is never done per message).
 */
final class RegisteredRegion {

    private final Memory memory;
    private final long mr;
    private final int lkey;

    private RegisteredRegion(Memory memory, long mr, int lkey) {
        this.memory = memory;
        this.mr = mr;
        this.lkey = lkey;
    }

    static RegisteredRegion register(Vapi vapi, long hca, long pd, int size) throws IOException {
        Memory memory = new Memory(size);
        long[] mr = new long[1];
        int[] lkey = new int[1];
        int ret = vapi.VAPI_register_mr(hca, pd, Pointer.nativeValue(memory), size, mr, lkey);
        if (ret != VapiConstants.VAPI_OK) {
            VapiException e = VapiException.of(vapi, "VAPI_register_mr", ret);
            memory.close();
            throw e;
        }
        return new RegisteredRegion(memory, mr[0], lkey[0]);
    }

    long address() {
        return Pointer.nativeValue(memory);
    }

    int lkey() {
        return lkey;
    }

    int size() {
        return (int) memory.size();
    }

    /** A direct view of the region, so copies in and out are not JNI calls. */
    ByteBuffer view() {
        return memory.getByteBuffer(0, memory.size());
    }

    /** Deregisters and frees; the caller guarantees no request still uses the region. */
    void release(Vapi vapi, long hca) throws VapiException {
        try {
            VapiException.check(vapi, "VAPI_deregister_mr", vapi.VAPI_deregister_mr(hca, mr));
        } finally {
            memory.close();
        }
    }
}
