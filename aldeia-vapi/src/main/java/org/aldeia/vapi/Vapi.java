package org.aldeia.vapi;

import com.sun.jna.Pointer;

/**
 * vapi.h, one method per C function with the C names, so the queue-pair channel can run over
 * any library implementing the header (MicroVAPI, a verbs-backed library) and be unit-tested
 * against a mock.
 *
 * <p>Mapping: every handle is a {@code long}; {@code uint32_t} counts, keys and numbers are
 * {@code int} (read them with {@link Integer#toUnsignedLong} where it matters); an out-parameter
 * is a one-element {@code long[]} or {@code int[]}; a structure is a {@link Pointer} to native
 * memory the caller owns, laid out as {@link VapiStructs} describes. Every function returns a
 * {@code VAPI_ret_t} (see {@link VapiConstants}); {@link VapiException#check} turns failures
 * into exceptions.
 */
public interface Vapi {

    /** Text of a return code. */
    String VAPI_strerror(int ret);

    /** Text of the calling thread's last failure (function, cause, layer below). */
    String EVAPI_last_error();

    int EVAPI_get_hca_hndl(String hcaId, long[] hca);

    int EVAPI_release_hca_hndl(long hca);

    /** @param prop a {@link VapiStructs.HcaPort} */
    int VAPI_query_hca_port_prop(long hca, byte port, Pointer prop);

    int VAPI_alloc_pd(long hca, long[] pd);

    int VAPI_dealloc_pd(long hca, long pd);

    int VAPI_create_cq(long hca, int minEntries, long[] cq, int[] numEntries);

    int VAPI_destroy_cq(long hca, long cq);

    /**
     * @param attr a {@link VapiStructs.QpInitAttr}
     * @param prop a {@link VapiStructs.QpProp}, filled in
     */
    int VAPI_create_qp(long hca, Pointer attr, long[] qp, Pointer prop);

    /** @param attr a {@link VapiStructs.QpAttr} */
    int VAPI_modify_qp(long hca, long qp, Pointer attr);

    /** Outstanding requests complete with {@code VAPI_WR_FLUSH_ERR}; waiting pollers wake. */
    int VAPI_destroy_qp(long hca, long qp);

    /**
     * Why the queue pair is in VAPI_ERR, as NUL-terminated text into {@code buf} (cut to
     * {@code len} bytes); empty when it is not. Set before its first error completion shows.
     */
    int EVAPI_query_qp_error(long hca, long qp, byte[] buf, int len);

    /**
     * Once connected: how many bytes of consecutive sends one post list should carry for the
     * library to move them as one transfer, into bytes[0] (read it unsigned). {@code VAPI_ENOSYS}
     * from a library that has no preference.
     */
    int EVAPI_query_qp_post_bytes(long hca, long qp, int[] bytes);

    /**
     * The queue pair's address on a fabric that does not reach it by LID and number alone (a
     * libfabric endpoint's name), into {@code buf}; len[0] in: the buffer's size, out: the
     * address's length ({@code VAPI_EINVAL_PARAM} when the buffer is too small). At most
     * {@link VapiConstants#QP_ADDRESS_MAX} bytes. {@code VAPI_ENOSYS} from a library whose queue
     * pairs have no such address (MicroVAPI).
     */
    int EVAPI_query_qp_address(long hca, long qp, byte[] buf, int[] len);

    /**
     * The fabric the HCA is on, "provider;fabric name", NUL-terminated into {@code buf}: two
     * processes naming the same fabric reach each other's queue pairs. {@code VAPI_EINVAL_PARAM}
     * when the buffer is too small; {@code VAPI_ENOSYS} from a library on no fabric (MicroVAPI).
     */
    int EVAPI_query_hca_fabric(long hca, byte[] buf, int len);

    /** The peer's {@link #EVAPI_query_qp_address address}, before {@link #VAPI_modify_qp} connects. */
    int EVAPI_set_qp_dest_address(long hca, long qp, byte[] addr, int len);

    int VAPI_register_mr(long hca, long pd, long addr, long size, long[] mr, int[] lkey);

    int VAPI_deregister_mr(long hca, long mr);

    /** @param sr one {@link VapiStructs.Desc} */
    int VAPI_post_sr(long hca, long qp, Pointer sr);

    /** @param list {@code num} consecutive {@link VapiStructs.Desc} */
    int EVAPI_post_sr_list(long hca, long qp, int num, Pointer list);

    /** @param rr one {@link VapiStructs.Desc} */
    int VAPI_post_rr(long hca, long qp, Pointer rr);

    /** @param list {@code num} consecutive {@link VapiStructs.Desc} */
    int EVAPI_post_rr_list(long hca, long qp, int num, Pointer list);

    /** Non-blocking: {@code VAPI_OK} with one {@link VapiStructs.Wc}, or {@code VAPI_CQ_EMPTY}. */
    int VAPI_poll_cq(long hca, long cq, Pointer wc);

    /** Non-blocking: up to {@code max} completions into {@code wcs}, their number in count[0]. */
    int EVAPI_poll_cq_many(long hca, long cq, int max, Pointer wcs, int[] count);

    /**
     * Blocks until a completion arrives ({@code VAPI_OK}) or {@code timeoutUsec} passes
     * ({@code VAPI_ETIMEDOUT}); 0 waits for ever.
     */
    int EVAPI_poll_cq_block(long hca, long cq, int timeoutUsec, Pointer wc);

    /**
     * The CQ's completions as a ring in memory the caller reads without a call
     * ({@link VapiStructs.CqRing}): the address into ring[0]. {@code VAPI_ENOSYS} from a
     * library that cannot; the caller then polls with the calls above.
     */
    int EVAPI_map_cq(long hca, long cq, long[] ring);

    /**
     * Blocks until the CQ holds a completion ({@code VAPI_OK}) or {@code timeoutUsec} passes
     * ({@code VAPI_ETIMEDOUT}; 0 waits for ever); takes none (they are read from the mapped ring).
     */
    int EVAPI_wait_cq(long hca, long cq, int timeoutUsec);
}
