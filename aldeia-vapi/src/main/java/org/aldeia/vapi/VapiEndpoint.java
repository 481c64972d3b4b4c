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
    private final int localId;
    private final PeerIntroducer introducer;
    private final int serviceLevel;
    private final int port;
    private boolean done; // connected (the channel owns the queue pair) or closed
    private boolean connectsBeforeAnswer; // the server side's answer needs nothing of the client

    VapiEndpoint(QueuePair pair, int socketId, int localId, PeerIntroducer introducer,
            int serviceLevel, int port) {
        this.pair = pair;
        this.socketId = socketId;
        this.localId = localId;
        this.introducer = introducer;
        this.serviceLevel = serviceLevel;
        this.port = port;
    }

    @Override
    public byte[] localInfo() {
        return info(introducer.localExtra());
    }

    @Override
    public byte[] localInfo(byte[] remoteInfo, InetAddress localAddress) throws IOException {
        byte[] answer = introducer.localExtra(ConnectionInfo.parse(remoteInfo).extra(), localAddress);
        connectsBeforeAnswer = introducer.connectsBeforeAnswer(answer);
        return info(answer);
    }

    /** The library's connect needs nothing of the client when the introducer says so of its answer. */
    @Override
    public boolean connectsBeforeAnswer() {
        return connectsBeforeAnswer;
    }

    private byte[] info(byte[] extra) {
        return new ConnectionInfo(localId, pair.qpNum(), pair.mtu(), pair.window(), pair.address(), extra).encode();
    }

    /**
     * Parses the peer's information, introduces the peer with the pair's key, gives the queue
     * pair the peer's address when it has one, moves it to RTS with the smaller of both MTUs and
     * posts the receive buffers before returning.
     */
    @Override
    public synchronized Channel connect(byte[] remoteInfo, InetAddress peerAddress, byte[] pairKey)
            throws IOException {
        if (done) {
            throw new IOException("endpoint of socket " + socketId + " is already connected or closed");
        }
        ConnectionInfo remote = ConnectionInfo.parse(remoteInfo);
        int pathMtu = Math.min(pair.mtu(), remote.mtu());
        try {
            introducer.introduce(remote.id(), remote.extra(), peerAddress, pairKey);
            byte[] destination = remote.address();
            if (destination.length > 0) {
                pair.setDestAddress(destination);
            }
            pair.connect(remote.id(), remote.qpNum(), pathMtu, serviceLevel, port, remote.window());
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
