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

    /**
     * From this many bytes a copy between the region and a byte[] goes through JNI, whose
     * region copy is HotSpot's Copy::conjoint_jbytes, libc's memmove; below it through the
     * direct view, which the JIT compiles to its own copy stub and which costs no call. In a
     * 1 MiB ping-pong of 64 KiB blocks, pinned, the stub's copies took 38% of each JVM's CPU
     * against 25% for libc's copy of the same bytes in C (perf); through JNI the ping-pong went
     * from 56-57 to 49-51 us one-way (5 runs each).
     */
    static final int NATIVE_COPY_FROM = 16 * 1024;

    /**
     * The region starts on a cache line. malloc gives a large block 16 bytes past a page
     * boundary, and every copy into or out of the region (the writer's, the kernel's send, the
     * reader's) then runs misaligned against its page-aligned other side: a 64 KiB memcpy took
     * 0.85 us from such a source against 0.62 us from a 64-byte aligned one (C, this machine).
     * A ping-pong of 64 KiB + 8 B writes over DECK tcp, pinned, 6 alternating runs each
     * (2026-11-29, a slow phase of this machine): 25.1-27.8 us one-way aligned, 38.0-49.4 us
     * not, the JDK's 23.5-30.1 us.
     */
    static final int ALIGN = 64;

    private final Memory memory;     // owns the allocation, ALIGN - 1 bytes more than the region
    private final Pointer base;      // the region: memory's first ALIGN boundary
    private final int size;
    private final ByteBuffer view;
    private final long mr;
    private final int lkey;

    private RegisteredRegion(Memory memory, Pointer base, int size, long mr, int lkey) {
        this.memory = memory;
        this.base = base;
        this.size = size;
        this.view = base.getByteBuffer(0, size);
        this.mr = mr;
        this.lkey = lkey;
    }

    /** Copies b[off, off + n) to the region at {@code at}; the caller checked the bounds. */
    void put(int at, byte[] b, int off, int n) {
        if (n >= NATIVE_COPY_FROM) {
            base.write(at, b, off, n);
        } else {
            view.put(at, b, off, n);
        }
    }

    /** Copies the region's n bytes at {@code at} to b[off, off + n); the caller checked the bounds. */
    void get(int at, byte[] b, int off, int n) {
        if (n >= NATIVE_COPY_FROM) {
            base.read(at, b, off, n);
        } else {
            view.get(at, b, off, n);
        }
    }

    static RegisteredRegion register(Vapi vapi, long hca, long pd, int size) throws IOException {
        Memory memory = new Memory(size + ALIGN - 1L);
        long allocated = Pointer.nativeValue(memory);
        long start = (allocated + ALIGN - 1) & -ALIGN;
        Pointer base = memory.share(start - allocated, size);
        long[] mr = new long[1];
        int[] lkey = new int[1];
        int ret = vapi.VAPI_register_mr(hca, pd, start, size, mr, lkey);
        if (ret != VapiConstants.VAPI_OK) {
            VapiException e = VapiException.of(vapi, "VAPI_register_mr", ret);
            memory.close();
            throw e;
        }
        return new RegisteredRegion(memory, base, size, mr[0], lkey[0]);
    }

    long address() {
        return Pointer.nativeValue(base);
    }

    int lkey() {
        return lkey;
    }

    int size() {
        return size;
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
        long end = (address() + size) & -PAGE;
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
