package org.aldeia.vapi;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The fixed layouts of vapi.h's structures (offsets in bytes, native byte order).
 *
 * <p>Set-up structures (port, QP attributes) are written once through {@link Pointer}. Work
 * requests and completions are handled per block, so they are read and written through a
 * direct {@link ByteBuffer} view of their native memory ({@link #view}): ByteBuffer accessors
 * are JIT intrinsics, whereas every {@code Pointer.setInt} is a JNI crossing.
 */
public final class VapiStructs {

    private VapiStructs() {
    }

    /** A native-order direct view of all of {@code memory}. */
    public static ByteBuffer view(Memory memory) {
        return memory.getByteBuffer(0, memory.size()).order(ByteOrder.nativeOrder());
    }

    /** {@code VAPI_hca_port_t}, 8 bytes. */
    public static final class HcaPort {
        public static final int SIZE = 8;
        public static final int LID = 0;       // uint16_t
        public static final int STATE = 2;     // uint8_t
        public static final int MAX_MTU = 4;   // uint32_t

        private HcaPort() {
        }

        public static int lid(Pointer p) {
            return p.getShort(LID) & 0xFFFF;
        }

        public static int state(Pointer p) {
            return p.getByte(STATE) & 0xFF;
        }

        public static int maxMtu(Pointer p) {
            return p.getInt(MAX_MTU);
        }
    }

    /** {@code VAPI_qp_init_attr_t}, 24 bytes. */
    public static final class QpInitAttr {
        public static final int SIZE = 24;
        public static final int SQ_CQ_HNDL = 0;
        public static final int RQ_CQ_HNDL = 8;
        public static final int MAX_SEND_WR = 16;
        public static final int MAX_RECV_WR = 20;

        private QpInitAttr() {
        }

        public static void write(Pointer p, long sendCq, long receiveCq, int maxSendWr, int maxRecvWr) {
            p.setLong(SQ_CQ_HNDL, sendCq);
            p.setLong(RQ_CQ_HNDL, receiveCq);
            p.setInt(MAX_SEND_WR, maxSendWr);
            p.setInt(MAX_RECV_WR, maxRecvWr);
        }
    }

    /** {@code VAPI_qp_prop_t}, 16 bytes. */
    public static final class QpProp {
        public static final int SIZE = 16;
        public static final int QP_NUM = 0;
        public static final int MAX_SEND_WR = 4;
        public static final int MAX_RECV_WR = 8;
        public static final int WINDOW = 12;

        private QpProp() {
        }

        public static int qpNum(Pointer p) {
            return p.getInt(QP_NUM);
        }

        /** The receive window the peer is told in the connection information; 0: none. */
        public static int window(Pointer p) {
            return p.getInt(WINDOW);
        }
    }

    /** {@code VAPI_qp_attr_t}, 24 bytes. */
    public static final class QpAttr {
        public static final int SIZE = 24;
        public static final int QP_STATE = 0;
        public static final int DEST_QP_NUM = 4;
        public static final int DEST_ID = 8;
        public static final int PATH_MTU = 12;
        public static final int SL = 16;    // uint8_t
        public static final int PORT = 17;  // uint8_t, then 2 reserved bytes
        public static final int DEST_WINDOW = 20;

        private QpAttr() {
        }

        /** Writes every field, zeroing the reserved bytes. */
        public static void write(Pointer p, int qpState, int destQpNum, int destId, int pathMtu,
                int serviceLevel, int port, int destWindow) {
            p.setMemory(0, SIZE, (byte) 0);
            p.setInt(QP_STATE, qpState);
            p.setInt(DEST_QP_NUM, destQpNum);
            p.setInt(DEST_ID, destId);
            p.setInt(PATH_MTU, pathMtu);
            p.setByte(SL, (byte) serviceLevel);
            p.setByte(PORT, (byte) port);
            p.setInt(DEST_WINDOW, destWindow);
        }
    }

    /** {@code VAPI_sr_desc_t} = {@code VAPI_rr_desc_t}, 32 bytes. */
    public static final class Desc {
        public static final int SIZE = 32;
        public static final int ID = 0;          // uint64_t
        public static final int OPCODE = 8;      // uint32_t
        public static final int COMP_TYPE = 12;  // uint32_t
        public static final int ADDR = 16;       // uint64_t
        public static final int LEN = 24;        // uint32_t
        public static final int LKEY = 28;       // uint32_t

        private Desc() {
        }

        /** Writes descriptor {@code index} of the array {@code descs} views. */
        public static void write(ByteBuffer descs, int index, long id, int opcode, int compType,
                long addr, int len, int lkey) {
            int at = index * SIZE;
            descs.putLong(at + ID, id);
            descs.putInt(at + OPCODE, opcode);
            descs.putInt(at + COMP_TYPE, compType);
            descs.putLong(at + ADDR, addr);
            descs.putInt(at + LEN, len);
            descs.putInt(at + LKEY, lkey);
        }

        public static void setCompType(ByteBuffer descs, int index, int compType) {
            descs.putInt(index * SIZE + COMP_TYPE, compType);
        }
    }

    /** {@code VAPI_wc_desc_t}, 24 bytes. */
    public static final class Wc {
        public static final int SIZE = 24;
        public static final int ID = 0;          // uint64_t
        public static final int STATUS = 8;      // uint32_t
        public static final int OPCODE = 12;     // uint32_t
        public static final int BYTE_LEN = 16;   // uint32_t
        public static final int RESERVED = 20;

        private Wc() {
        }

        public static long id(ByteBuffer wcs, int index) {
            return wcs.getLong(index * SIZE + ID);
        }

        public static int status(ByteBuffer wcs, int index) {
            return wcs.getInt(index * SIZE + STATUS);
        }

        public static int opcode(ByteBuffer wcs, int index) {
            return wcs.getInt(index * SIZE + OPCODE);
        }

        public static int byteLen(ByteBuffer wcs, int index) {
            return wcs.getInt(index * SIZE + BYTE_LEN);
        }

        /** Writes completion {@code index}; for libraries written in Java and for tests. */
        public static void write(Pointer wcs, int index, long id, int status, int opcode, int byteLen) {
            long at = (long) index * SIZE;
            wcs.setLong(at + ID, id);
            wcs.setInt(at + STATUS, status);
            wcs.setInt(at + OPCODE, opcode);
            wcs.setInt(at + BYTE_LEN, byteLen);
            wcs.setInt(at + RESERVED, 0);
        }
    }

    /**
     * {@code EVAPI_call_t}, 32 bytes (vapi.h draws it): the arguments of a post or a wait, in
     * the block a thread binds for the calls without arguments (VapiDirect's call blocks).
     */
    public static final class Call {
        public static final int SIZE = 32;
        public static final int HCA = 0;       // uint64_t
        public static final int HANDLE = 8;    // uint64_t: the queue pair (posts) or the CQ (wait)
        public static final int LIST = 16;     // uint64_t: the requests' address (posts)
        public static final int COUNT = 24;    // uint32_t: requests (posts) or timeout_usec (wait)

        private Call() {
        }
    }

    /**
     * {@code EVAPI_cq_ring_t}: a mapped completion queue (vapi.h draws it). The library writes
     * an entry, then {@code tail} with release; the one consumer reads entries up to
     * {@code tail} (acquire), then stores {@code head} with release. Counters run mod 2^32;
     * completion k is entry {@code k % cap}.
     */
    public static final class CqRing {
        public static final int TAIL = 0;       // uint32_t, on its own cache line
        public static final int HEAD = 64;      // uint32_t, on its own cache line
        public static final int CAP = 128;      // uint32_t, a power of two
        public static final int ENTRIES = 192;  // Wc[cap]

        private CqRing() {
        }
    }
}
