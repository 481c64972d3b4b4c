package org.aldeia.vapi;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The bytes exchanged over the bootstrap connection (thesis 4.4.2 step 3), big-endian:
 * {@code int id} (information 1: LID, or MicroVAPI's DECK id), {@code int qpNum}
 * (information 2), {@code int mtu} (the sender's receive-buffer size), then the
 * {@link PeerIntroducer}'s extra bytes up to the end.
 */
record ConnectionInfo(int id, int qpNum, int mtu, byte[] extra) {

    static final int FIXED_BYTES = 12;

    ConnectionInfo {
        extra = extra.clone();
    }

    byte[] encode() {
        return ByteBuffer.allocate(FIXED_BYTES + extra.length)
                .putInt(id).putInt(qpNum).putInt(mtu).put(extra).array();
    }

    /** @throws IOException if {@code bytes} is not connection information of a VAPI peer */
    static ConnectionInfo parse(byte[] bytes) throws IOException {
        if (bytes == null || bytes.length < FIXED_BYTES) {
            throw new IOException("malformed VAPI connection information from the peer: "
                    + (bytes == null ? "none" : bytes.length + " bytes") + ", expected at least "
                    + FIXED_BYTES + " (id, queue pair number, mtu); does the peer use the same socket_type?");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        int id = in.getInt();
        int qpNum = in.getInt();
        int mtu = in.getInt();
        if (mtu <= 0) {
            throw new IOException("malformed VAPI connection information from the peer: mtu " + mtu);
        }
        return new ConnectionInfo(id, qpNum, mtu, Arrays.copyOfRange(bytes, FIXED_BYTES, bytes.length));
    }

    @Override
    public byte[] extra() {
        return extra.clone();
    }
}
