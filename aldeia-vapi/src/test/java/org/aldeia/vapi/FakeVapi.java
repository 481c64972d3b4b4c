package org.aldeia.vapi;

import static org.aldeia.vapi.VapiConstants.*;

import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.aldeia.vapi.VapiStructs.Desc;

/**
 * An in-memory VAPI library for tests: queue pairs of one JVM connected back to back. A send
 * copies its bytes out of the sender's registered memory into the peer's oldest posted
 * receive (or keeps them until one is posted, as RNR retry would); signalled sends complete at
 * once unless {@link #holdSendCompletions} is set. Destroying a queue pair flushes its posted
 * receives; sends to a destroyed peer complete with VAPI_REM_ABORT_ERR.
 */
final class FakeVapi implements Vapi {
    static final int LID = 0x1234;

    /** One posted send, as the library saw it. */
    record Posted(long id, int len, boolean signalled) {
    }

    private final class Qp {
        final long sendCq;
        final long receiveCq;
        final int num;
        Qp peer;
        boolean destroyed;
        String error = "";                                          // EVAPI_query_qp_error's text
        byte[] destAddress;                                         // EVAPI_set_qp_dest_address's
        final ArrayDeque<long[]> receives = new ArrayDeque<>();   // {id, addr, len}
        final ArrayDeque<byte[]> arrived = new ArrayDeque<>();    // sends waiting for a receive

        Qp(long sendCq, long receiveCq, int num) {
            this.sendCq = sendCq;
            this.receiveCq = receiveCq;
            this.num = num;
        }
    }

    private final Map<Long, LinkedBlockingDeque<long[]>> cqs = new HashMap<>(); // {id, status, opcode, len}
    private final Map<Long, Qp> qps = new HashMap<>();
    private final Map<Integer, Qp> byNum = new HashMap<>();
    private final List<long[]> heldCompletions = new ArrayList<>(); // {cq, id}
    private long nextHandle = 100;
    private int nextQpNum = 7;

    volatile boolean holdSendCompletions;
    /** Whether queue pairs have addresses (addressOf); false: VAPI_ENOSYS, as from MicroVAPI. */
    volatile boolean addresses;
    /** What EVAPI_query_qp_post_bytes says; 0: VAPI_ENOSYS, as from a library with no preference. */
    volatile int postBytes;
    final List<Posted> posted = new ArrayList<>();
    final List<Integer> modifiedPathMtu = new ArrayList<>();
    final List<Integer> modifiedDestId = new ArrayList<>();
    final List<Integer> modifiedDestWindow = new ArrayList<>();

    @Override
    public String VAPI_strerror(int ret) {
        return "fake text of " + codeName(ret);
    }

    @Override
    public String EVAPI_last_error() {
        return "fake last error";
    }

    @Override
    public synchronized int EVAPI_get_hca_hndl(String hcaId, long[] hca) {
        hca[0] = nextHandle++;
        return VAPI_OK;
    }

    @Override
    public int EVAPI_release_hca_hndl(long hca) {
        return VAPI_OK;
    }

    @Override
    public int VAPI_query_hca_port_prop(long hca, byte port, Pointer prop) {
        prop.setShort(VapiStructs.HcaPort.LID, (short) LID);
        prop.setByte(VapiStructs.HcaPort.STATE, (byte) PORT_ACTIVE);
        prop.setInt(VapiStructs.HcaPort.MAX_MTU, 4096);
        return VAPI_OK;
    }

    @Override
    public synchronized int VAPI_alloc_pd(long hca, long[] pd) {
        pd[0] = nextHandle++;
        return VAPI_OK;
    }

    @Override
    public int VAPI_dealloc_pd(long hca, long pd) {
        return VAPI_OK;
    }

    @Override
    public synchronized int VAPI_create_cq(long hca, int minEntries, long[] cq, int[] numEntries) {
        cq[0] = nextHandle++;
        numEntries[0] = minEntries;
        cqs.put(cq[0], new LinkedBlockingDeque<>());
        return VAPI_OK;
    }

    @Override
    public synchronized int VAPI_destroy_cq(long hca, long cq) {
        return cqs.remove(cq) == null ? VAPI_EINVAL_CQ_HNDL : VAPI_OK;
    }

    @Override
    public synchronized int VAPI_create_qp(long hca, Pointer attr, long[] qp, Pointer prop) {
        Qp q = new Qp(attr.getLong(VapiStructs.QpInitAttr.SQ_CQ_HNDL),
                attr.getLong(VapiStructs.QpInitAttr.RQ_CQ_HNDL), nextQpNum++);
        qp[0] = nextHandle++;
        qps.put(qp[0], q);
        byNum.put(q.num, q);
        prop.setInt(VapiStructs.QpProp.QP_NUM, q.num);
        prop.setInt(VapiStructs.QpProp.WINDOW, windowOf(q.num));
        return VAPI_OK;
    }

    /** The receive window the queue pair numbered {@code qpNum} was created with. */
    static int windowOf(int qpNum) {
        return 0x10000 + qpNum;
    }

    /** The address of the queue pair numbered {@code qpNum} when {@link #addresses} is on. */
    static byte[] addressOf(int qpNum) {
        return ("fake-endpoint-" + qpNum).getBytes(StandardCharsets.US_ASCII);
    }

    /** The destination address the queue pair numbered {@code qpNum} was given; null: none. */
    synchronized byte[] destAddressOf(int qpNum) {
        return byNum.get(qpNum).destAddress;
    }

    /** Queue pairs with addresses are on a fabric: "fake;fake". */
    @Override
    public synchronized int EVAPI_query_hca_fabric(long hca, byte[] buf, int len) {
        if (!addresses) {
            return VAPI_ENOSYS;
        }
        byte[] name = "fake;fake\0".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        if (len < name.length) {
            return VAPI_EINVAL_PARAM;
        }
        System.arraycopy(name, 0, buf, 0, name.length);
        return VAPI_OK;
    }

    @Override
    public synchronized int EVAPI_query_qp_address(long hca, long qp, byte[] buf, int[] len) {
        if (!addresses) {
            return VAPI_ENOSYS;
        }
        byte[] address = addressOf(qps.get(qp).num);
        if (len[0] < address.length) {
            len[0] = address.length;
            return VAPI_EINVAL_PARAM;
        }
        System.arraycopy(address, 0, buf, 0, address.length);
        len[0] = address.length;
        return VAPI_OK;
    }

    @Override
    public synchronized int EVAPI_set_qp_dest_address(long hca, long qp, byte[] addr, int len) {
        if (!addresses) {
            return VAPI_ENOSYS;
        }
        qps.get(qp).destAddress = Arrays.copyOf(addr, len);
        return VAPI_OK;
    }

    @Override
    public synchronized int VAPI_modify_qp(long hca, long qp, Pointer attr) {
        Qp q = qps.get(qp);
        q.peer = byNum.get(attr.getInt(VapiStructs.QpAttr.DEST_QP_NUM));
        modifiedPathMtu.add(attr.getInt(VapiStructs.QpAttr.PATH_MTU));
        modifiedDestId.add(attr.getInt(VapiStructs.QpAttr.DEST_ID));
        modifiedDestWindow.add(attr.getInt(VapiStructs.QpAttr.DEST_WINDOW));
        return q.peer == null ? VAPI_EINVAL_PARAM : VAPI_OK;
    }

    @Override
    public synchronized int VAPI_destroy_qp(long hca, long qp) {
        Qp q = qps.remove(qp);
        if (q == null) {
            return VAPI_EINVAL_QP_HNDL;
        }
        q.destroyed = true;
        for (long[] r : q.receives) {
            cqs.get(q.receiveCq).add(new long[] {r[0], VAPI_WR_FLUSH_ERR, VAPI_RECEIVE, 0});
        }
        q.receives.clear();
        return VAPI_OK;
    }

    @Override
    public int VAPI_register_mr(long hca, long pd, long addr, long size, long[] mr, int[] lkey) {
        mr[0] = addr;
        lkey[0] = 77;
        return VAPI_OK;
    }

    @Override
    public int VAPI_deregister_mr(long hca, long mr) {
        return VAPI_OK;
    }

    @Override
    public int VAPI_post_sr(long hca, long qp, Pointer sr) {
        return EVAPI_post_sr_list(hca, qp, 1, sr);
    }

    @Override
    public synchronized int EVAPI_post_sr_list(long hca, long qp, int num, Pointer list) {
        Qp q = qps.get(qp);
        if (q == null) {
            return VAPI_EINVAL_QP_HNDL;
        }
        for (int i = 0; i < num; i++) {
            long at = (long) i * Desc.SIZE;
            long id = list.getLong(at + Desc.ID);
            boolean signalled = list.getInt(at + Desc.COMP_TYPE) == VAPI_SIGNALED;
            int len = list.getInt(at + Desc.LEN);
            posted.add(new Posted(id, len, signalled));
            byte[] data = new Pointer(list.getLong(at + Desc.ADDR)).getByteArray(0, len);
            boolean delivered = !q.peer.destroyed;
            if (delivered) {
                q.peer.arrived.add(data);
                match(q.peer);
            }
            if (signalled || !delivered) {
                long[] wc = {id, delivered ? VAPI_SUCCESS : VAPI_REM_ABORT_ERR, VAPI_SEND, len};
                if (holdSendCompletions && delivered) {
                    heldCompletions.add(new long[] {q.sendCq, id, len});
                } else {
                    cqs.get(q.sendCq).add(wc);
                }
            }
        }
        return VAPI_OK;
    }

    /** Completes the sends held while {@link #holdSendCompletions} was set. */
    synchronized void releaseHeldCompletions() {
        holdSendCompletions = false;
        for (long[] h : heldCompletions) {
            cqs.get(h[0]).add(new long[] {h[1], VAPI_SUCCESS, VAPI_SEND, h[2]});
        }
        heldCompletions.clear();
    }

    @Override
    public synchronized int EVAPI_query_qp_error(long hca, long qp, byte[] buf, int len) {
        Qp q = qps.get(qp);
        if (q == null) {
            return VAPI_EINVAL_QP_HNDL;
        }
        byte[] text = q.error.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, len - 1);
        System.arraycopy(text, 0, buf, 0, n);
        buf[n] = 0;
        return VAPI_OK;
    }

    /** What EVAPI_query_qp_error says of the queue pair numbered {@code qpNum} from now on. */
    synchronized void failQueuePair(int qpNum, String why) {
        byNum.get(qpNum).error = why;
    }

    /** Puts a completion on queue {@code cq} as if the library had produced it. */
    synchronized void inject(long cq, long id, int status, int opcode, int byteLen) {
        cqs.get(cq).add(new long[] {id, status, opcode, byteLen});
    }

    /** The receive completion queue of the queue pair numbered {@code qpNum}. */
    synchronized long receiveCqOf(int qpNum) {
        return byNum.get(qpNum).receiveCq;
    }

    /** Whether the queue pair numbered {@code qpNum} has been destroyed (VAPI_destroy_qp returned). */
    synchronized boolean destroyed(int qpNum) {
        return byNum.get(qpNum).destroyed;
    }

    synchronized int postedReceives(int qpNum) {
        return byNum.get(qpNum).receives.size();
    }

    private void match(Qp q) {
        while (!q.arrived.isEmpty() && !q.receives.isEmpty()) {
            byte[] data = q.arrived.poll();
            long[] r = q.receives.poll();
            long status = data.length > r[2] ? VAPI_LOC_LEN_ERR : VAPI_SUCCESS;
            if (status == VAPI_SUCCESS) {
                new Pointer(r[1]).write(0, data, 0, data.length);
            }
            cqs.get(q.receiveCq).add(new long[] {r[0], status, VAPI_RECEIVE, data.length});
        }
    }

    @Override
    public int VAPI_post_rr(long hca, long qp, Pointer rr) {
        return EVAPI_post_rr_list(hca, qp, 1, rr);
    }

    @Override
    public synchronized int EVAPI_post_rr_list(long hca, long qp, int num, Pointer list) {
        Qp q = qps.get(qp);
        if (q == null) {
            return VAPI_EINVAL_QP_HNDL;
        }
        for (int i = 0; i < num; i++) {
            long at = (long) i * Desc.SIZE;
            q.receives.add(new long[] {list.getLong(at + Desc.ID), list.getLong(at + Desc.ADDR),
                list.getInt(at + Desc.LEN)});
        }
        match(q);
        return VAPI_OK;
    }

    @Override
    public int VAPI_poll_cq(long hca, long cq, Pointer wc) {
        int[] count = new int[1];
        int ret = EVAPI_poll_cq_many(hca, cq, 1, wc, count);
        return ret == VAPI_OK && count[0] == 0 ? VAPI_CQ_EMPTY : ret;
    }

    @Override
    public int EVAPI_poll_cq_many(long hca, long cq, int max, Pointer wcs, int[] count) {
        LinkedBlockingDeque<long[]> queue = queue(cq);
        if (queue == null) {
            return VAPI_EINVAL_CQ_HNDL;
        }
        int n = 0;
        for (long[] wc; n < max && (wc = queue.poll()) != null; n++) {
            write(wcs, n, wc);
        }
        count[0] = n;
        return VAPI_OK;
    }

    @Override
    public int EVAPI_poll_cq_block(long hca, long cq, int timeoutUsec, Pointer wc) {
        return awaitEntry(cq, timeoutUsec, (queue, entry) -> write(wc, 0, entry));
    }

    @Override
    public int EVAPI_query_qp_post_bytes(long hca, long qp, int[] bytes) {
        if (postBytes == 0) {
            return VAPI_ENOSYS;
        }
        bytes[0] = postBytes;
        return VAPI_OK;
    }

    /** Not offered: the channel then polls through the calls, which these tests exercise. */
    @Override
    public int EVAPI_map_cq(long hca, long cq, long[] ring) {
        return VAPI_ENOSYS;
    }

    @Override
    public int EVAPI_wait_cq(long hca, long cq, int timeoutUsec) {
        return awaitEntry(cq, timeoutUsec, LinkedBlockingDeque::addFirst); // looked at, not taken
    }

    /** Waits up to {@code timeoutUsec} for a completion of {@code cq} and hands it to {@code then}. */
    private int awaitEntry(long cq, int timeoutUsec, BiConsumer<LinkedBlockingDeque<long[]>, long[]> then) {
        LinkedBlockingDeque<long[]> queue = queue(cq);
        if (queue == null) {
            return VAPI_EINVAL_CQ_HNDL;
        }
        try {
            long[] entry = queue.poll(timeoutUsec, TimeUnit.MICROSECONDS);
            if (entry == null) {
                return VAPI_ETIMEDOUT;
            }
            then.accept(queue, entry);
            return VAPI_OK;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return VAPI_EGEN;
        }
    }

    private synchronized LinkedBlockingDeque<long[]> queue(long cq) {
        return cqs.get(cq);
    }

    private static void write(Pointer wcs, int index, long[] wc) {
        VapiStructs.Wc.write(wcs, index, wc[0], (int) wc[1], (int) wc[2], (int) wc[3]);
    }
}
