package org.aldeia.vapi;

import com.sun.jna.Memory;
import java.io.IOException;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The VAPI objects of one socket (thesis 4.4.2 step 2): a send and a receive completion queue,
 * a reliable-connection queue pair and the two registered regions (send ring, receive
 * buffers). Creation undoes itself on failure; {@link #release} frees everything, in the
 * reverse order of creation.
 */
final class QueuePair {
    private static final Logger LOG = LoggerFactory.getLogger(QueuePair.class);

    /**
     * Send-ring bytes per descriptor. Descriptors are counted in the ring's bytes, not in
     * blocks of mtu: with 64 KiB blocks a 1 MiB ring would hold only 16 small writes in flight,
     * and a writer of small messages would block long before the ring's bytes (SO_SNDBUF) are
     * used, where TCP goes on absorbing.
     */
    static final int SLOT_BYTES = 1024;

    private final Vapi vapi;
    private final long hca;
    private final int mtu;
    private final int sendSlots;
    private final int receiveBuffers;
    private final int receiveBlocks;
    private boolean trimmable;

    private long sendCq;
    private long receiveCq;
    private CompletionRing sendCqRing;      // null: the library does not map CQs
    private CompletionRing receiveCqRing;
    private long qp;
    private int qpNum;
    private int window;
    private byte[] address;
    private boolean hasSendCq;
    private boolean hasReceiveCq;
    private boolean hasQp;
    private RegisteredRegion sendRegion;
    private RegisteredRegion receiveRegion;

    private QueuePair(Vapi vapi, long hca, int mtu, int sendSlots, int receiveBuffers, int receiveWindow) {
        this.vapi = vapi;
        this.hca = hca;
        this.mtu = mtu;
        this.sendSlots = sendSlots;
        this.receiveBuffers = receiveBuffers;
        // VAPI's receive queue depth (max_recv_wr): the window in blocks, posted or arrived
        this.receiveBlocks = Math.max(receiveBuffers, (int) ((receiveWindow + (long) mtu - 1) / mtu));
    }

    /**
     * @param mtu the local MTU: size of each receive buffer
     * @param sendRegionSize bytes of the send ring; it has a descriptor per
     *     {@link #SLOT_BYTES} of it (at least one per mtu)
     * @param receiveBuffers MTU-sized receive buffers
     * @param receiveWindow bytes the queue pair holds for the reader, posted or not: its
     *     receive queue is that many mtu-sized blocks deep (max_recv_wr)
     * @param trimmable the library copies each send when it is posted (see {@link RingTrimmer})
     */
    static QueuePair create(Vapi vapi, long hca, long pd, int mtu, int sendRegionSize,
            int receiveBuffers, int receiveWindow, boolean trimmable) throws IOException {
        QueuePair pair = new QueuePair(vapi, hca, mtu, sendRegionSize / Math.min(mtu, SLOT_BYTES), receiveBuffers,
                receiveWindow);
        pair.trimmable = trimmable;
        try {
            // +1: the zero-length end-of-stream request may follow a full ring
            pair.sendCq = pair.createCq(pair.sendSlots + 1);
            pair.hasSendCq = true;
            pair.receiveCq = pair.createCq(receiveBuffers);
            pair.hasReceiveCq = true;
            pair.sendCqRing = CompletionRing.map(vapi, hca, pair.sendCq);
            pair.receiveCqRing = CompletionRing.map(vapi, hca, pair.receiveCq);
            pair.createQp();
            pair.sendRegion = RegisteredRegion.register(vapi, hca, pd, sendRegionSize);
            pair.receiveRegion = RegisteredRegion.register(vapi, hca, pd, Math.multiplyExact(mtu, receiveBuffers));
            return pair;
        } catch (IOException | RuntimeException e) {
            pair.releaseQuietly();
            throw e;
        }
    }

    private long createCq(int minEntries) throws VapiException {
        long[] cq = new long[1];
        int[] entries = new int[1];
        VapiException.check(vapi, "VAPI_create_cq", vapi.VAPI_create_cq(hca, minEntries, cq, entries));
        return cq[0];
    }

    private void createQp() throws VapiException {
        try (Memory attr = new Memory(VapiStructs.QpInitAttr.SIZE);
                Memory prop = new Memory(VapiStructs.QpProp.SIZE)) {
            VapiStructs.QpInitAttr.write(attr, sendCq, receiveCq, sendSlots + 1, receiveBlocks);
            long[] handle = new long[1];
            VapiException.check(vapi, "VAPI_create_qp", vapi.VAPI_create_qp(hca, attr, handle, prop));
            qp = handle[0];
            hasQp = true;
            qpNum = VapiStructs.QpProp.qpNum(prop);
            window = VapiStructs.QpProp.window(prop);
            address = queryAddress();
        }
    }

    /**
     * The queue pair's address for the peer, as the library gave it at creation
     * (EVAPI_query_qp_address); empty when its queue pairs are reached by LID and number alone.
     */
    byte[] address() {
        return address.clone();
    }

    private byte[] queryAddress() throws VapiException {
        byte[] buf = new byte[VapiConstants.QP_ADDRESS_MAX];
        int[] len = {buf.length};
        int ret = vapi.EVAPI_query_qp_address(hca, qp, buf, len);
        if (ret == VapiConstants.VAPI_ENOSYS) {
            return new byte[0];
        }
        VapiException.check(vapi, "EVAPI_query_qp_address", ret);
        if (len[0] < 0 || len[0] > buf.length) {
            throw new VapiException("EVAPI_query_qp_address", VapiConstants.VAPI_EGEN, null,
                    "the library gave an address of " + Integer.toUnsignedString(len[0]) + " bytes");
        }
        return Arrays.copyOf(buf, len[0]);
    }

    /** The peer's address, before {@link #connect} (EVAPI_set_qp_dest_address). */
    void setDestAddress(byte[] address) throws VapiException {
        VapiException.check(vapi, "EVAPI_set_qp_dest_address",
                vapi.EVAPI_set_qp_dest_address(hca, qp, address, address.length));
    }

    /**
     * The receive window the library gave the queue pair (MicroVAPI: bytes the peer may send
     * before it hears more), for the peer's {@link #connect}; 0 when the library has none to tell.
     */
    int window() {
        return window;
    }

    /**
     * Moves the queue pair to RTS towards the peer (thesis 4.4.2 step 4).
     *
     * @param destWindow the peer's {@link #window}, from its connection information: given on
     *     both sides, the library sends nothing to connect (vapi.h, VAPI_qp_attr_t)
     */
    void connect(int destId, int destQpNum, int pathMtu, int serviceLevel, int port, int destWindow)
            throws VapiException {
        try (Memory attr = new Memory(VapiStructs.QpAttr.SIZE)) {
            VapiStructs.QpAttr.write(attr, VapiConstants.VAPI_RTS, destQpNum, destId, pathMtu, serviceLevel, port,
                    destWindow);
            VapiException.check(vapi, "VAPI_modify_qp", vapi.VAPI_modify_qp(hca, qp, attr));
        }
    }

    /**
     * What one post list should carry for the library to move it as one transfer, once
     * connected ({@code EVAPI_query_qp_post_bytes}); {@code otherwise} when the library has no
     * preference.
     */
    int postBytes(int otherwise) throws VapiException {
        int[] bytes = new int[1];
        int ret = vapi.EVAPI_query_qp_post_bytes(hca, qp, bytes);
        if (ret == VapiConstants.VAPI_ENOSYS) {
            return otherwise;
        }
        VapiException.check(vapi, "EVAPI_query_qp_post_bytes", ret);
        if (bytes[0] <= 0) {
            throw new VapiException("EVAPI_query_qp_post_bytes", VapiConstants.VAPI_EGEN, null,
                    "the library said to post " + Integer.toUnsignedString(bytes[0]) + " bytes at a time");
        }
        return bytes[0];
    }

    Vapi vapi() {
        return vapi;
    }

    long hca() {
        return hca;
    }

    long qp() {
        return qp;
    }

    int qpNum() {
        return qpNum;
    }

    int mtu() {
        return mtu;
    }

    long sendCq() {
        return sendCq;
    }

    long receiveCq() {
        return receiveCq;
    }

    /** The send CQ as a ring read without calls; null when the library does not map CQs. */
    CompletionRing sendCqRing() {
        return sendCqRing;
    }

    CompletionRing receiveCqRing() {
        return receiveCqRing;
    }

    int sendSlots() {
        return sendSlots;
    }

    /** Whether the library copies a send when it is posted, so idle send-ring pages may go back. */
    boolean trimmable() {
        return trimmable;
    }

    int receiveBuffers() {
        return receiveBuffers;
    }

    RegisteredRegion sendRegion() {
        return sendRegion;
    }

    RegisteredRegion receiveRegion() {
        return receiveRegion;
    }

    /**
     * Destroys the queue pair only: outstanding requests complete with a flush error and
     * threads blocked polling wake up. Idempotent.
     */
    synchronized void destroyQp() throws VapiException {
        if (hasQp) {
            hasQp = false;
            VapiException.check(vapi, "VAPI_destroy_qp", vapi.VAPI_destroy_qp(hca, qp));
        }
    }

    /**
     * Releases everything; the caller guarantees no thread polls or copies any more.
     * Idempotent; throws the first failure after releasing all it could.
     */
    synchronized void release() throws IOException {
        IOException first = null;
        try {
            destroyQp();
        } catch (VapiException e) {
            first = e;
        }
        first = attempt(first, hasSendCq, () -> vapi.VAPI_destroy_cq(hca, sendCq), "VAPI_destroy_cq");
        hasSendCq = false;
        first = attempt(first, hasReceiveCq, () -> vapi.VAPI_destroy_cq(hca, receiveCq), "VAPI_destroy_cq");
        hasReceiveCq = false;
        for (RegisteredRegion region : new RegisteredRegion[] {sendRegion, receiveRegion}) {
            if (region != null) {
                try {
                    region.release(vapi, hca);
                } catch (VapiException e) {
                    first = first == null ? e : first;
                }
            }
        }
        sendRegion = null;
        receiveRegion = null;
        if (first != null) {
            throw first;
        }
    }

    /** {@link #release}, logging instead of throwing: for paths that already fail. */
    void releaseQuietly() {
        try {
            release();
        } catch (IOException e) {
            LOG.warn("releasing a queue pair failed: {}", e.getMessage());
        }
    }

    private IOException attempt(IOException first, boolean needed, VapiCall call, String function) {
        if (!needed) {
            return first;
        }
        int ret = call.invoke();
        if (ret == VapiConstants.VAPI_OK || first != null) {
            return first;
        }
        return VapiException.of(vapi, function, ret);
    }

    @FunctionalInterface
    private interface VapiCall {
        int invoke();
    }
}
