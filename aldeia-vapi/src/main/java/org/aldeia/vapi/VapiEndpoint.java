package org.aldeia.vapi;

import java.io.IOException;
import java.net.InetAddress;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A created, not yet connected queue pair (connection steps 2–4). */
public final class VapiEndpoint implements Endpoint {
    private static final Logger LOG = LoggerFactory.getLogger(VapiEndpoint.class);

    private final QueuePair pair;
    private final int socketId;
    private final ConnectionInfo local;
    private final PeerIntroducer introducer;
    private final int serviceLevel;
    private final int port;
    private boolean done; // connected (the channel owns the queue pair) or closed

    VapiEndpoint(QueuePair pair, int socketId, int localId, PeerIntroducer introducer,
            int serviceLevel, int port) {
        this.pair = pair;
        this.socketId = socketId;
        this.local = new ConnectionInfo(localId, pair.qpNum(), pair.mtu(), introducer.localExtra());
        this.introducer = introducer;
        this.serviceLevel = serviceLevel;
        this.port = port;
    }

    @Override
    public byte[] localInfo() {
        return local.encode();
    }

    /**
     * Parses the peer's information, introduces the peer, moves the queue pair to RTS with the
     * smaller of both MTUs and posts the receive buffers before returning.
     */
    @Override
    public synchronized Channel connect(byte[] remoteInfo, InetAddress peerAddress) throws IOException {
        if (done) {
            throw new IOException("endpoint of socket " + socketId + " is already connected or closed");
        }
        ConnectionInfo remote = ConnectionInfo.parse(remoteInfo);
        int pathMtu = Math.min(local.mtu(), remote.mtu());
        try {
            introducer.introduce(remote.id(), remote.extra(), peerAddress);
            pair.connect(remote.id(), remote.qpNum(), pathMtu, serviceLevel, port);
            QueuePairChannel channel = QueuePairChannel.open(pair, pathMtu);
            done = true;
            LOG.debug("socket {}: qp {} connected to id {} qp {} ({}), path mtu {}", socketId,
                    Integer.toUnsignedString(pair.qpNum()), remote.id(),
                    Integer.toUnsignedString(remote.qpNum()), peerAddress, pathMtu);
            return channel;
        } catch (IOException | RuntimeException e) {
            done = true;
            pair.releaseQuietly(); // keep the cause, not a clean-up failure
            throw e;
        }
    }

    @Override
    public synchronized void close() throws IOException {
        if (!done) {
            done = true;
            pair.release();
        }
    }
}
