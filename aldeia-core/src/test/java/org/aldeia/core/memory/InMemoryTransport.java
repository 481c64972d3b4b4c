package org.aldeia.core.memory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.EndpointSizes;
import org.aldeia.core.spi.PeerKeys;
import org.aldeia.core.spi.Transport;

/**
 * Creates in-memory endpoints whose send queue holds the requested send ring's bytes, and
 * remembers the sizes each socket's endpoint was created with, for tests of SO_SNDBUF and
 * SO_RCVBUF. Like MicroVAPI over DECK, it stands for a process with an id and a key pair of its
 * own and keeps the key it shares with each peer process, so the bootstrap's keys can be tested
 * in one JVM: a process that claims a known peer's id with another key pair, or this process's
 * own id, is refused.
 */
public final class InMemoryTransport implements Transport {

    private static final AtomicLong NEXT_ID = new AtomicLong(1);

    private final long id = NEXT_ID.getAndIncrement();
    private final PeerKeys keys;
    private final AldeiaConfiguration configuration;
    private final Map<Integer, EndpointSizes> sizesBySocket = new ConcurrentHashMap<>();
    private final Map<Long, byte[]> peerKeys = new ConcurrentHashMap<>();
    private final List<String> connects = Collections.synchronizedList(new ArrayList<>());
    private volatile boolean connectsBeforeAnswer;
    private volatile long answeringConnectMillis;
    private volatile boolean closed;

    InMemoryTransport(AldeiaConfiguration configuration) throws IOException {
        this.configuration = configuration;
        this.keys = new PeerKeys();
    }

    /** The id this transport ("process") gives in its connection information. */
    public long id() {
        return id;
    }

    @Override
    public String description() {
        return "in-memory test transport " + id + ", mtu " + configuration.mtu();
    }

    @Override
    public Endpoint createEndpoint(int socketId, EndpointSizes sizes) throws IOException {
        if (closed) {
            throw new IOException("in-memory transport is closed");
        }
        sizesBySocket.put(socketId, sizes);
        return new InMemoryEndpoint(this, configuration.mtu(), sizes.sendRegionSize());
    }

    @Override
    public byte[] publicKey() {
        return keys.publicKey();
    }

    /** The transport's id, 8 bytes. */
    @Override
    public byte[] identity() {
        return ByteBuffer.allocate(Long.BYTES).putLong(id).array();
    }

    @Override
    public byte[] identityOf(byte[] remoteInfo) throws IOException {
        return ByteBuffer.allocate(Long.BYTES).putLong(InMemoryEndpoint.transportOf(remoteInfo)).array();
    }

    @Override
    public boolean knowsPairKey(byte[] peerPublicKey) {
        return keys.knows(peerPublicKey);
    }

    @Override
    public byte[] pairKey(byte[] remoteIdentity, byte[] peerPublicKey) throws IOException {
        if (remoteIdentity == null || remoteIdentity.length != Long.BYTES) {
            throw new IOException("an in-memory identity is 8 bytes, not " + (remoteIdentity == null ? 0 : remoteIdentity.length));
        }
        long peer = ByteBuffer.wrap(remoteIdentity).getLong();
        String name = "in-memory transport " + peer;
        if ((peer == id) != keys.isOwn(peerPublicKey)) {
            throw new IOException(name + (peer == id ? " claims to be this process with another key pair"
                    : " has this process's key pair"));
        }
        byte[] key = keys.agree(peerPublicKey, name);
        byte[] known = peerKeys.get(peer);
        if (known != null && !MessageDigest.isEqual(known, key)) {
            throw new IOException(name + " is known here with another key pair: another process claims its identity");
        }
        return key;
    }

    /** As deck_add_peer: one key per peer for the life of the transport. */
    void bindPeerKey(long peer, byte[] key) throws IOException {
        if (peer == id) {
            return;
        }
        byte[] first = peerKeys.putIfAbsent(peer, key.clone());
        if (first != null && !MessageDigest.isEqual(first, key)) {
            throw new IOException("in-memory transport " + peer + " is already known under another key");
        }
    }

    /**
     * Its server-side endpoints say they connect before they answer ({@link
     * Endpoint#connectsBeforeAnswer}), and each of their connects takes {@code connectMillis}.
     */
    public void answerAfterConnecting(boolean before, long connectMillis) {
        connectsBeforeAnswer = before;
        answeringConnectMillis = connectMillis;
    }

    boolean connectsBeforeAnswer() {
        return connectsBeforeAnswer;
    }

    /** An answering (server-side) endpoint's connect: logged as it begins and ends, and slowed. */
    void answeringConnect() throws IOException {
        connects.add("server connect begins");
        try {
            Thread.sleep(answeringConnectMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        connects.add("server connect ends");
    }

    /** A client-side endpoint's connect: logged. */
    void clientConnect() {
        connects.add("client connect");
    }

    /** The connects of this transport's endpoints, in the order they happened. */
    public List<String> connects() {
        return List.copyOf(connects);
    }

    /** The sizes the endpoint of socket {@code socketId} was created with; null if none was. */
    public EndpointSizes sizesOf(int socketId) {
        return sizesBySocket.get(socketId);
    }

    @Override
    public void close() {
        closed = true;
    }
}
