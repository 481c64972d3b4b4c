package org.aldeia.vapi;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

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
        return Functions.EVAPI_post_sr_call(CallBlock.post(hca, qp, num, Pointer.nativeValue(list)));
    }

    @Override
    public int VAPI_post_rr(long hca, long qp, Pointer rr) {
        return Functions.VAPI_post_rr(hca, qp, Pointer.nativeValue(rr));
    }

    @Override
    public int EVAPI_post_rr_list(long hca, long qp, int num, Pointer list) {
        return Functions.EVAPI_post_rr_call(CallBlock.post(hca, qp, num, Pointer.nativeValue(list)));
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
        return Functions.EVAPI_wait_cq_call(CallBlock.waitCq(hca, cq, timeoutUsec));
    }

    /**
     * The natives, named exactly as in vapi.h so JNA finds the symbols. The calls of every
     * write and read take only primitives: a structure's address goes as a {@code long}
     * (pointers are 64 bits on every platform Aldeia builds for), which JNA passes without
     * converting an object (measured: about 85 ns per call against 130 with a Pointer). The
     * posts and the wait, made for every message, take one argument: their call block
     * ({@link CallBlock}), since each further argument costs 15-20 ns more.
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
        static native int EVAPI_post_sr_call(long call);
        static native int VAPI_post_rr(long hca, long qp, long rr);
        static native int EVAPI_post_rr_call(long call);
        static native int VAPI_poll_cq(long hca, long cq, Pointer wc);
        static native int EVAPI_poll_cq_many(long hca, long cq, int max, Pointer wcs, int[] count);
        static native int EVAPI_poll_cq_block(long hca, long cq, int timeoutUsec, Pointer wc);
        static native int EVAPI_map_cq(long hca, long cq, long[] ring);
        static native int EVAPI_wait_cq_call(long call);

        private Functions() {
        }
    }
}
