package org.aldeia.core.memory;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;

/**
 * Its connection information is {@code [transport id][inbox key]}: the transport it belongs to
 * (a "process", for the pair keys) and the key of its inbox in a JVM-wide registry.
 */
final class InMemoryEndpoint implements Endpoint {

    static final int INFO_BYTES = 2 * Long.BYTES;
    private static final AtomicLong NEXT_KEY = new AtomicLong(1);
    private static final Map<Long, ByteInbox> INBOXES = new ConcurrentHashMap<>();

    private final InMemoryTransport transport;
    private final long key = NEXT_KEY.getAndIncrement();
    private final ByteInbox inbox = new ByteInbox();
    private final int mtu;
    private final int sendCapacity;
    private boolean answered; // the server side's: localInfo(remoteInfo, ...) made its answer

    InMemoryEndpoint(InMemoryTransport transport, int mtu, int sendCapacity) {
        this.transport = transport;
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
        return ByteBuffer.allocate(INFO_BYTES).putLong(transport.id()).putLong(key).array();
    }

    @Override
    public byte[] localInfo(byte[] remoteInfo, InetAddress localAddress) {
        answered = true;
        return localInfo();
    }

    @Override
    public boolean connectsBeforeAnswer() {
        return answered && transport.connectsBeforeAnswer();
    }

    /** The transport id in connection information, checked for length. */
    static long transportOf(byte[] remoteInfo) throws IOException {
        if (remoteInfo == null || remoteInfo.length != INFO_BYTES) {
            throw new IOException("in-memory connection information must be " + INFO_BYTES + " bytes, got "
                    + (remoteInfo == null ? "none" : Integer.toString(remoteInfo.length)));
        }
        return ByteBuffer.wrap(remoteInfo).getLong();
    }

    @Override
    public Channel connect(byte[] remoteInfo, InetAddress peerAddress, byte[] pairKey) throws IOException {
        long peerTransport = transportOf(remoteInfo);
        long peerKey = ByteBuffer.wrap(remoteInfo).getLong(Long.BYTES);
        ByteInbox peer = INBOXES.get(peerKey);
        if (peer == null) {
            throw new IOException("no in-memory endpoint " + peerKey + " (from " + peerAddress + ")");
        }
        transport.bindPeerKey(peerTransport, pairKey);
        if (answered) {
            transport.answeringConnect();
        } else {
            transport.clientConnect();
        }
        return new InMemoryChannel(inbox, peer, mtu, sendCapacity, () -> INBOXES.remove(key));
    }

    @Override
    public void close() {
        INBOXES.remove(key);
    }
}
