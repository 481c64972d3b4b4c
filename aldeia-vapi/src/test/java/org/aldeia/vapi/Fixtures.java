package org.aldeia.vapi;

import static org.mockito.AdditionalAnswers.delegatesTo;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.io.IOException;
import java.net.InetAddress;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.EndpointSizes;

/** Builds configurations, and pairs of channels connected through a {@link FakeVapi}. */
final class Fixtures {

    private Fixtures() {
    }

    static AldeiaConfiguration configuration(int mtu, int sendRegionSize, int receiveBuffers) {
        AldeiaConfiguration c = mock(AldeiaConfiguration.class);
        when(c.mtu()).thenReturn(mtu);
        when(c.sendRegionSize()).thenReturn(sendRegionSize);
        when(c.receiveBuffers()).thenReturn(receiveBuffers);
        when(c.infinibandPort()).thenReturn(1);
        when(c.infinibandQos()).thenReturn(3);
        when(c.source()).thenReturn("test.conf");
        return c;
    }

    /** A pair key, as the bootstrap would agree: real verbs make no use of it. */
    static final byte[] KEY = new byte[32];

    /** Two connected channels; {@link #vapi} is a Mockito mock delegating to {@link #fake}. */
    static final class ChannelPair implements AutoCloseable {
        final FakeVapi fake = new FakeVapi();
        final Vapi vapi = mock(Vapi.class, delegatesTo(fake));
        final VapiTransport transport;
        final Channel a;
        final Channel b;
        final int qpNumA;
        final int qpNumB;

        ChannelPair(int mtu, int sendRegionSize, int receiveBuffers) throws IOException {
            this(mtu, sendRegionSize, receiveBuffers, 0);
        }

        /** @param postBytes what the library says to post at a time; 0: it does not say */
        ChannelPair(int mtu, int sendRegionSize, int receiveBuffers, int postBytes) throws IOException {
            fake.postBytes = postBytes;
            transport = VapiTransport.open(vapi, "fake0", configuration(mtu, sendRegionSize, receiveBuffers),
                    PeerIntroducer.none(), "fake");
            EndpointSizes sizes = new EndpointSizes(sendRegionSize, receiveBuffers, 1 << 16);
            Endpoint ea = transport.createEndpoint(0, sizes);
            Endpoint eb = transport.createEndpoint(1, sizes);
            qpNumA = ConnectionInfo.parse(ea.localInfo()).qpNum();
            qpNumB = ConnectionInfo.parse(eb.localInfo()).qpNum();
            InetAddress loopback = InetAddress.getLoopbackAddress();
            a = ea.connect(eb.localInfo(), loopback, KEY);
            b = eb.connect(ea.localInfo(), loopback, KEY);
        }

        @Override
        public void close() throws IOException {
            fake.releaseHeldCompletions();
            a.close();
            b.close();
            transport.close();
        }
    }
}
