package org.aldeia.core.memory;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;

/** Its connection information is the key of its inbox in a JVM-wide registry. */
final class InMemoryEndpoint implements Endpoint {

    private static final AtomicLong NEXT_KEY = new AtomicLong(1);
    private static final Map<Long, ByteInbox> INBOXES = new ConcurrentHashMap<>();

    private final long key = NEXT_KEY.getAndIncrement();
    private final ByteInbox inbox = new ByteInbox();
    private final int mtu;
    private final int sendCapacity;

    InMemoryEndpoint(int mtu, int sendCapacity) {
        this.mtu = mtu;
        this.sendCapacity = sendCapacity;
        INBOXES.put(key, inbox);
    }

    /** Endpoints and channels not yet closed; a test checks that none leaks. */
    static int open() {
        return INBOXES.size();
    }

    @Override
    public byte[] localInfo() {
        return ByteBuffer.allocate(Long.BYTES).putLong(key).array();
    }

    @Override
    public Channel connect(byte[] remoteInfo, InetAddress peerAddress) throws IOException {
        if (remoteInfo.length != Long.BYTES) {
            throw new IOException("in-memory connection information must be 8 bytes, got " + remoteInfo.length);
        }
        long peerKey = ByteBuffer.wrap(remoteInfo).getLong();
        ByteInbox peer = INBOXES.get(peerKey);
        if (peer == null) {
            throw new IOException("no in-memory endpoint " + peerKey + " (from " + peerAddress + ")");
        }
        return new InMemoryChannel(inbox, peer, mtu, sendCapacity, () -> INBOXES.remove(key));
    }

    @Override
    public void close() {
        INBOXES.remove(key);
    }
}
