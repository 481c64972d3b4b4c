package org.aldeia.vapi;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import org.aldeia.vapi.VapiStructs.Call;

/**
 * {@link Vapi} over JNA direct mapping: the functions are {@code static native} methods of
 * {@link Functions}, bound with {@link Native#register(Class, NativeLibrary)} (direct calls skip
 * the reflection and argument boxing of interface mapping; they matter on the per-write path).
 *
 * <p>A class's natives can be bound to one library only: {@link #bind} binds on the first call
 * and refuses another library afterwards. A JVM that runs a second VAPI library binds it
 * through a copy of this class ({@link VapiDirectCopies}), which {@link VapiLibrary} makes.
 */
public final class VapiDirect implements Vapi {

    private static NativeLibrary boundLibrary;
    private static VapiDirect instance;

    /**
     * Each thread's call block for this library (a copy of this class per library: each binds
     * its own), bound when the thread first posts or waits.
     */
    private static final ThreadLocal<CallBlock> CALLS = ThreadLocal.withInitial(() -> {
        CallBlock block = new CallBlock();
        Functions.EVAPI_bind_call_block(block.address());   // VAPI_OK: binding cannot fail
        return block;
    });

    private final String libraryName;

    private VapiDirect(String libraryName) {
        this.libraryName = libraryName;
    }

    /**
     * Binds vapi.h to {@code library}, once per JVM.
     *
     * @return the binding; the same object for the same library
     * @throws IllegalStateException if another VAPI library is already bound
     * @throws UnsatisfiedLinkError if the library lacks a vapi.h function
     */
    public static synchronized VapiDirect bind(NativeLibrary library) {
        if (boundLibrary == null) {
            Native.register(Functions.class, library);
            boundLibrary = library;
            instance = new VapiDirect(library.getName());
            return instance;
        }
        if (boundLibrary.equals(library)) {
            return instance;
        }
        throw new IllegalStateException("this JVM already uses the VAPI library "
                + boundLibrary.getName() + " (" + boundLibrary.getFile() + "); it cannot also use "
                + library.getName() + " through this copy of the class (VapiLibrary binds each library once)");
    }

    /** The name of the bound library, e.g. {@code microvapi}. */
    public String libraryName() {
        return libraryName;
    }

    @Override
    public String toString() {
        return "VAPI over lib" + libraryName + ".so";
    }

    @Override
    public String VAPI_strerror(int ret) {
        return Functions.VAPI_strerror(ret);
    }

    @Override
    public String EVAPI_last_error() {
        return Functions.EVAPI_last_error();
    }

    @Override
    public int EVAPI_get_hca_hndl(String hcaId, long[] hca) {
        return Functions.EVAPI_get_hca_hndl(hcaId, hca);
    }

    @Override
    public int EVAPI_release_hca_hndl(long hca) {
        return Functions.EVAPI_release_hca_hndl(hca);
    }

    @Override
    public int VAPI_query_hca_port_prop(long hca, byte port, Pointer prop) {
        return Functions.VAPI_query_hca_port_prop(hca, port, prop);
    }

    @Override
    public int VAPI_alloc_pd(long hca, long[] pd) {
        return Functions.VAPI_alloc_pd(hca, pd);
    }

    @Override
    public int VAPI_dealloc_pd(long hca, long pd) {
        return Functions.VAPI_dealloc_pd(hca, pd);
    }

    @Override
    public int VAPI_create_cq(long hca, int minEntries, long[] cq, int[] numEntries) {
        return Functions.VAPI_create_cq(hca, minEntries, cq, numEntries);
    }

    @Override
    public int VAPI_destroy_cq(long hca, long cq) {
        return Functions.VAPI_destroy_cq(hca, cq);
    }

    @Override
    public int VAPI_create_qp(long hca, Pointer attr, long[] qp, Pointer prop) {
        return Functions.VAPI_create_qp(hca, attr, qp, prop);
    }

    @Override
    public int VAPI_modify_qp(long hca, long qp, Pointer attr) {
        return Functions.VAPI_modify_qp(hca, qp, attr);
    }

    @Override
    public int VAPI_destroy_qp(long hca, long qp) {
        return Functions.VAPI_destroy_qp(hca, qp);
    }

    @Override
    public int VAPI_register_mr(long hca, long pd, long addr, long size, long[] mr, int[] lkey) {
        return Functions.VAPI_register_mr(hca, pd, addr, size, mr, lkey);
    }

    @Override
    public int VAPI_deregister_mr(long hca, long mr) {
        return Functions.VAPI_deregister_mr(hca, mr);
    }

    @Override
    public int VAPI_post_sr(long hca, long qp, Pointer sr) {
        return Functions.VAPI_post_sr(hca, qp, Pointer.nativeValue(sr));
    }

    @Override
    public int EVAPI_post_sr_list(long hca, long qp, int num, Pointer list) {
        CALLS.get().post(hca, qp, num, Pointer.nativeValue(list));
        return Functions.EVAPI_post_sr_bound();
    }

    @Override
    public int VAPI_post_rr(long hca, long qp, Pointer rr) {
        return Functions.VAPI_post_rr(hca, qp, Pointer.nativeValue(rr));
    }

    @Override
    public int EVAPI_post_rr_list(long hca, long qp, int num, Pointer list) {
        CALLS.get().post(hca, qp, num, Pointer.nativeValue(list));
        return Functions.EVAPI_post_rr_bound();
    }

    @Override
    public int VAPI_poll_cq(long hca, long cq, Pointer wc) {
        return Functions.VAPI_poll_cq(hca, cq, wc);
    }

    @Override
    public int EVAPI_query_qp_error(long hca, long qp, byte[] buf, int len) {
        return Functions.EVAPI_query_qp_error(hca, qp, buf, len);
    }

    @Override
    public int EVAPI_query_qp_post_bytes(long hca, long qp, int[] bytes) {
        return Functions.EVAPI_query_qp_post_bytes(hca, qp, bytes);
    }

    @Override
    public int EVAPI_query_hca_fabric(long hca, byte[] buf, int len) {
        return Functions.EVAPI_query_hca_fabric(hca, buf, len);
    }

    @Override
    public int EVAPI_query_qp_address(long hca, long qp, byte[] buf, int[] len) {
        return Functions.EVAPI_query_qp_address(hca, qp, buf, len);
    }

    @Override
    public int EVAPI_set_qp_dest_address(long hca, long qp, byte[] addr, int len) {
        return Functions.EVAPI_set_qp_dest_address(hca, qp, addr, len);
    }

    @Override
    public int EVAPI_poll_cq_many(long hca, long cq, int max, Pointer wcs, int[] count) {
        return Functions.EVAPI_poll_cq_many(hca, cq, max, wcs, count);
    }

    @Override
    public int EVAPI_poll_cq_block(long hca, long cq, int timeoutUsec, Pointer wc) {
        return Functions.EVAPI_poll_cq_block(hca, cq, timeoutUsec, wc);
    }

    @Override
    public int EVAPI_map_cq(long hca, long cq, long[] ring) {
        return Functions.EVAPI_map_cq(hca, cq, ring);
    }

    @Override
    public int EVAPI_wait_cq(long hca, long cq, int timeoutUsec) {
        CALLS.get().waitCq(hca, cq, timeoutUsec);
        return Functions.EVAPI_wait_cq_bound();
    }

    /**
     * A thread's block for vapi.h's calls without arguments ({@code EVAPI_call_t}, {@link Call}).
     * A JNA direct call costs by its arguments: on this project's machine 45 ns with none, 60 with
     * one, 97 with three, 116 with four ({@code EVAPI_post_sr_list}); every message makes a post at
     * its writer and a wait at its reader, so this class binds a block to each thread that
     * makes them (once per library: {@code EVAPI_bind_call_block}), writes each call's arguments
     * into it and calls without any. The library reads the block only during a call, and a thread
     * makes one call at a time. Nested, so that a copy of this class for another library
     * ({@link VapiDirectCopies}, another class loader) has its own and may use it.
     */
    private static final class CallBlock {

        private final Memory memory = new Memory(Call.SIZE);   // freed with the block, after its thread
        private final ByteBuffer fields = VapiStructs.view(memory);

        /** The block's address, for binding it. */
        long address() {
            return Pointer.nativeValue(memory);
        }

        /** Holds a post's arguments. */
        void post(long hca, long qp, int num, long list) {
            fill(hca, qp, list, num);
        }

        /** Holds a wait's arguments. */
        void waitCq(long hca, long cq, int timeoutUsec) {
            fill(hca, cq, 0, timeoutUsec);
        }

        private void fill(long hca, long handle, long list, int count) {
            fields.putLong(Call.HCA, hca);
            fields.putLong(Call.HANDLE, handle);
            fields.putLong(Call.LIST, list);
            fields.putInt(Call.COUNT, count);
        }
    }

    /**
     * The natives, named exactly as in vapi.h so JNA finds the symbols. The calls of every
     * write and read take only primitives: a structure's address goes as a {@code long}
     * (pointers are 64 bits on every platform Aldeia builds for), which JNA passes without
     * converting an object (measured: about 85 ns per call against 130 with a Pointer). The
     * posts and the wait, made for every message, take none: their arguments are in the
     * thread's bound call block ({@link CallBlock}), since each argument costs 15-20 ns.
     */
    private static final class Functions {
        static native String VAPI_strerror(int ret);
        static native String EVAPI_last_error();
        static native int EVAPI_get_hca_hndl(String hcaId, long[] hca);
        static native int EVAPI_release_hca_hndl(long hca);
        static native int VAPI_query_hca_port_prop(long hca, byte port, Pointer prop);
        static native int VAPI_alloc_pd(long hca, long[] pd);
        static native int VAPI_dealloc_pd(long hca, long pd);
        static native int VAPI_create_cq(long hca, int minEntries, long[] cq, int[] numEntries);
        static native int VAPI_destroy_cq(long hca, long cq);
        static native int VAPI_create_qp(long hca, Pointer attr, long[] qp, Pointer prop);
        static native int VAPI_modify_qp(long hca, long qp, Pointer attr);
        static native int VAPI_destroy_qp(long hca, long qp);
        static native int EVAPI_query_qp_error(long hca, long qp, byte[] buf, int len);
        static native int EVAPI_query_qp_post_bytes(long hca, long qp, int[] bytes);
        static native int EVAPI_query_hca_fabric(long hca, byte[] buf, int len);
        static native int EVAPI_query_qp_address(long hca, long qp, byte[] buf, int[] len);
        static native int EVAPI_set_qp_dest_address(long hca, long qp, byte[] addr, int len);
        static native int VAPI_register_mr(long hca, long pd, long addr, long size, long[] mr, int[] lkey);
        static native int VAPI_deregister_mr(long hca, long mr);
        static native int VAPI_post_sr(long hca, long qp, long sr);
        static native int EVAPI_post_sr_bound();
        static native int VAPI_post_rr(long hca, long qp, long rr);
        static native int EVAPI_post_rr_bound();
        static native int VAPI_poll_cq(long hca, long cq, Pointer wc);
        static native int EVAPI_poll_cq_many(long hca, long cq, int max, Pointer wcs, int[] count);
        static native int EVAPI_poll_cq_block(long hca, long cq, int timeoutUsec, Pointer wc);
        static native int EVAPI_map_cq(long hca, long cq, long[] ring);
        static native int EVAPI_wait_cq_bound();
        static native int EVAPI_bind_call_block(long call);

        private Functions() {
        }
    }
}
