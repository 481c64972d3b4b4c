package org.aldeia.vapi;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The bytes exchanged over the bootstrap connection (thesis 4.4.2 step 3), big-endian:
 * <pre>
 *   0      4        8     12       16              18                  18 + n
 *   +------+--------+-----+--------+---------------+-------------------+----------------------+
 *   | id   | qpNum  | mtu | window | addressLength | address (n bytes) | extra (to the end)   |
 *   +------+--------+-----+--------+---------------+-------------------+----------------------+
 * </pre>
 * {@code id} is information 1 (a LID, or MicroVAPI's DECK id), {@code qpNum} information 2,
 * {@code mtu} the sender's receive-buffer size, {@code window} its queue pair's receive window
 * (unsigned; 0 when the library has none: {@link QueuePair#window}); {@code address} the queue pair's address where
 * the library has one (a libfabric endpoint's name: EVAPI_query_qp_address; empty for
 * MicroVAPI), at most {@link VapiConstants#QP_ADDRESS_MAX} bytes; {@code extra} the
 * {@link PeerIntroducer}'s bytes.
 */
record ConnectionInfo(int id, int qpNum, int mtu, int window, byte[] address, byte[] extra) {

    static final int FIXED_BYTES = 18;

    ConnectionInfo {
        if (address.length > VapiConstants.QP_ADDRESS_MAX) {
            throw new IllegalArgumentException("a queue-pair address of " + address.length + " bytes; at most "
                    + VapiConstants.QP_ADDRESS_MAX);
        }
        address = address.clone();
        extra = extra.clone();
    }

    /** Without a queue-pair address (MicroVAPI). */
    ConnectionInfo(int id, int qpNum, int mtu, int window, byte[] extra) {
        this(id, qpNum, mtu, window, new byte[0], extra);
    }

    byte[] encode() {
        return ByteBuffer.allocate(FIXED_BYTES + address.length + extra.length)
                .putInt(id).putInt(qpNum).putInt(mtu).putInt(window).putShort((short) address.length).put(address)
                .put(extra).array();
    }

    /** @throws IOException if {@code bytes} is not connection information of a VAPI peer */
    static ConnectionInfo parse(byte[] bytes) throws IOException {
        if (bytes == null || bytes.length < FIXED_BYTES) {
            throw new IOException("malformed VAPI connection information from the peer: "
                    + (bytes == null ? "none" : bytes.length + " bytes") + ", expected at least "
                    + FIXED_BYTES + " (id, queue pair number, mtu, window, address length); does the peer use the same "
                    + "socket_type?");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        int id = in.getInt();
        int qpNum = in.getInt();
        int mtu = in.getInt();
        int window = in.getInt();
        int addressLength = Short.toUnsignedInt(in.getShort());
        if (mtu <= 0) {
            throw new IOException("malformed VAPI connection information from the peer: mtu " + mtu);
        }
        if (addressLength > VapiConstants.QP_ADDRESS_MAX || addressLength > in.remaining()) {
            throw new IOException("malformed VAPI connection information from the peer: a queue-pair address of "
                    + addressLength + " bytes, with " + in.remaining() + " left and at most "
                    + VapiConstants.QP_ADDRESS_MAX + " allowed");
        }
        return new ConnectionInfo(id, qpNum, mtu, window,
                Arrays.copyOfRange(bytes, FIXED_BYTES, FIXED_BYTES + addressLength),
                Arrays.copyOfRange(bytes, FIXED_BYTES + addressLength, bytes.length));
    }

    @Override
    public byte[] address() {
        return address.clone();
    }

    @Override
    public byte[] extra() {
        return extra.clone();
    }
}
