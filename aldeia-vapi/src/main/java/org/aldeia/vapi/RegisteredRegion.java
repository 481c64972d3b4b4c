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

    /** madvise(2): the kernel may take the pages; they read as zeros when next touched. */
    private interface Libc extends com.sun.jna.Library {
        int MADV_DONTNEED = 4;
        Libc INSTANCE = com.sun.jna.Native.load(com.sun.jna.Platform.C_LIBRARY_NAME, Libc.class);

        int madvise(Pointer address, long length, int advice);
    }

    private static final long PAGE = 4096;

    /**
     * Returns the pages of the region beyond its first {@code keep} bytes to the kernel (their
     * contents are lost). Only for memory no request uses, and only with a library that copies
     * on post: a real HCA would go on reading the old pages.
     */
    void discardBeyond(long keep) {
        long start = (address() + keep + PAGE - 1) & -PAGE;
        long end = (address() + memory.size()) & -PAGE;
        if (end > start) {
            Libc.INSTANCE.madvise(new Pointer(start), end - start, Libc.MADV_DONTNEED);
        }
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
