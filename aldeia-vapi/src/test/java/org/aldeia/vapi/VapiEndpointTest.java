package org.aldeia.vapi;

import static org.aldeia.vapi.Fixtures.configuration;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.AdditionalAnswers.delegatesTo;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doReturn;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.List;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Endpoint;
import org.aldeia.core.spi.EndpointSizes;
import org.junit.jupiter.api.Test;

class VapiEndpointTest {

    /** The sizes of configuration(1024, 8192, 4), which the tests below open with. */
    private static final EndpointSizes SIZES = new EndpointSizes(8192, 4, 1 << 16);

    private final FakeVapi fake = new FakeVapi();
    private final Vapi vapi = mock(Vapi.class, delegatesTo(fake));

    /** Records introductions, adds fixed extra bytes (a server's answer the client's reversed), keys: the peer's public key reversed. */
    private static final class RecordingIntroducer implements PeerIntroducer {
        int remoteId = -1;
        byte[] remoteExtra;
        InetAddress peer;
        byte[] key;
        InetAddress answeredOn;

        @Override
        public byte[] localExtra() {
            return new byte[] {9, 8, 7};
        }

        @Override
        public byte[] localExtra(byte[] remoteExtra, InetAddress localAddress) {
            answeredOn = localAddress;
            byte[] reversed = new byte[remoteExtra.length];
            for (int i = 0; i < reversed.length; i++) {
                reversed[i] = remoteExtra[remoteExtra.length - 1 - i];
            }
            return reversed;
        }

        /** An answer that starts with 3 reaches the client by itself. */
        @Override
        public boolean connectsBeforeAnswer(byte[] answer) {
            return answer.length > 0 && answer[0] == 3;
        }

        @Override
        public byte[] publicKey() {
            return new byte[] {4, 2};
        }

        @Override
        public byte[] pairKey(int id, byte[] peerPublicKey, String peerName) throws IOException {
            if (id != 555) {
                throw new IOException(peerName + " is not peer 555");
            }
            return new byte[] {peerPublicKey[1], peerPublicKey[0]};
        }

        @Override
        public void introduce(int id, byte[] extra, InetAddress address, byte[] pairKey) {
            remoteId = id;
            remoteExtra = extra;
            peer = address;
            key = pairKey;
        }
    }

    @Test
    void localInfoCarriesIdQpNumberMtuAndExtraAndConnectUsesThem() throws IOException {
        RecordingIntroducer introducer = new RecordingIntroducer();
        VapiTransport transport = VapiTransport.open(vapi, "fake0", configuration(1024, 8192, 4),
                introducer, () -> 4242, "fake");
        assertEquals(4242, transport.localId());
        assertEquals(FakeVapi.LID, transport.lid());
        Endpoint a = transport.createEndpoint(0, SIZES);
        Endpoint b = transport.createEndpoint(1, SIZES);
        ConnectionInfo info = ConnectionInfo.parse(a.localInfo());
        assertEquals(4242, info.id());
        assertEquals(1024, info.mtu());
        assertEquals(FakeVapi.windowOf(info.qpNum()), info.window(), "the window the library gave the queue pair");
        assertArrayEquals(new byte[] {9, 8, 7}, info.extra());
        assertTrue(info.qpNum() != ConnectionInfo.parse(b.localInfo()).qpNum());

        // the peer announces a smaller MTU: the path MTU is the smaller one
        byte[] remote = new ConnectionInfo(555, ConnectionInfo.parse(b.localInfo()).qpNum(), 512, 777_777,
                new byte[] {1, 2}).encode();
        InetAddress peer = InetAddress.getLoopbackAddress();
        Channel channel = a.connect(remote, peer, Fixtures.KEY);
        assertEquals(555, introducer.remoteId);
        assertArrayEquals(new byte[] {1, 2}, introducer.remoteExtra);
        assertEquals(peer, introducer.peer);
        assertSame(Fixtures.KEY, introducer.key, "the introducer gets the pair's key for its data path");
        assertEquals(List.of(512), fake.modifiedPathMtu);
        assertEquals(List.of(555), fake.modifiedDestId);
        assertEquals(List.of(777_777), fake.modifiedDestWindow, "the peer's window goes to the library");
        assertEquals(4, fake.postedReceives(info.qpNum()), "receives posted before connect returns");
        assertThrows(IOException.class, () -> a.connect(remote, peer, Fixtures.KEY), "an endpoint connects once");
        channel.close();
        b.close();
        transport.close();
    }

    @Test
    void serverAnswerIsMadeForTheClientAndPairKeysComeFromTheIntroducer() throws IOException {
        RecordingIntroducer introducer = new RecordingIntroducer();
        VapiTransport transport = VapiTransport.open(vapi, "fake0", configuration(1024, 8192, 4),
                introducer, () -> 4242, "fake");
        Endpoint server = transport.createEndpoint(0, SIZES);
        byte[] client = new ConnectionInfo(555, 77, 1024, 0, new byte[] {1, 2, 3}).encode();
        InetAddress local = InetAddress.getLoopbackAddress();
        ConnectionInfo answer = ConnectionInfo.parse(server.localInfo(client, local));
        assertArrayEquals(new byte[] {3, 2, 1}, answer.extra(), "the answer is made for this client");
        assertTrue(server.connectsBeforeAnswer(), "the introducer reaches that client without the answer");
        Endpoint other = transport.createEndpoint(1, SIZES);
        other.localInfo(new ConnectionInfo(555, 78, 1024, 0, new byte[] {1, 2, 4}).encode(), local);
        assertFalse(other.connectsBeforeAnswer(), "an answer the client must act on goes first");
        other.close();
        Endpoint clientSide = transport.createEndpoint(2, SIZES);
        assertFalse(clientSide.connectsBeforeAnswer(), "a client side never answers");
        clientSide.close();
        assertEquals(local, introducer.answeredOn);
        assertEquals(4242, answer.id());
        assertArrayEquals(new byte[] {4, 2}, transport.publicKey());
        assertArrayEquals(new byte[] {0, 0, 0x10, (byte) 0x92}, transport.identity(), "information 1, 4242");
        byte[] clientIdentity = transport.identityOf(client);
        assertArrayEquals(new byte[] {0, 0, 2, 0x2b}, clientIdentity, "the client's information 1, 555");
        assertArrayEquals(new byte[] {2, 1}, transport.pairKey(clientIdentity, new byte[] {1, 2}), "the introducer's key");
        byte[] stranger = transport.identityOf(new ConnectionInfo(556, 77, 1024, 0, new byte[0]).encode());
        IOException refused = assertThrows(IOException.class, () -> transport.pairKey(stranger, new byte[] {1, 2}));
        assertTrue(refused.getMessage().contains("VAPI peer 556"), refused.getMessage());
        assertThrows(IOException.class, () -> transport.identityOf(new byte[5]), "not connection information");
        IOException malformed = assertThrows(IOException.class, () -> transport.pairKey(new byte[5], new byte[] {1, 2}));
        assertTrue(malformed.getMessage().contains("5 bytes, expected 4"), malformed.getMessage());
        server.close();
        transport.close();
    }

    @Test
    void endpointGetsTheRequestedRingAndReceiveBuffersNotTheConfigurations() throws IOException {
        VapiTransport transport = VapiTransport.open(vapi, "fake0", configuration(1024, 8192, 4),
                PeerIntroducer.none(), "fake");
        Endpoint a = transport.createEndpoint(0, new EndpointSizes(4096, 3, 1 << 16));
        Endpoint b = transport.createEndpoint(1, new EndpointSizes(8192, 5, 1 << 16)); // no region or CQ size like a's
        verify(vapi).VAPI_register_mr(anyLong(), anyLong(), anyLong(), eq(4096L), any(), any());
        verify(vapi).VAPI_register_mr(anyLong(), anyLong(), anyLong(), eq(3L * 1024), any(), any());
        verify(vapi).VAPI_create_cq(anyLong(), eq(3), any(), any());
        int qpNum = ConnectionInfo.parse(a.localInfo()).qpNum();
        Channel channel = a.connect(b.localInfo(), InetAddress.getLoopbackAddress(), Fixtures.KEY);
        assertEquals(3, fake.postedReceives(qpNum), "one posted receive per requested buffer");
        channel.close();
        b.close();
        transport.close();
    }

    @Test
    void ringSmallerThanOneMtuIsRejectedBeforeAnythingIsCreated() throws IOException {
        VapiTransport transport = VapiTransport.open(vapi, "fake0", configuration(1024, 8192, 4),
                PeerIntroducer.none(), "fake");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> transport.createEndpoint(7, new EndpointSizes(1023, 4, 1 << 16)));
        assertTrue(e.getMessage().contains("1023 bytes") && e.getMessage().contains("mtu 1024"), e.getMessage());
        verify(vapi, never()).VAPI_create_cq(anyLong(), anyInt(), any(), any());
        transport.close();
    }

    @Test
    void encodingIsBigEndianIdQpMtuWindowAddressThenExtra() throws IOException {
        byte[] bytes = new ConnectionInfo(1, 2, 3, -7, new byte[] {5, 6}, new byte[] {4}).encode();
        assertArrayEquals(ByteBuffer.allocate(21).putInt(1).putInt(2).putInt(3).putInt(-7).putShort((short) 2)
                .put(new byte[] {5, 6}).put((byte) 4).array(), bytes);
        ConnectionInfo back = ConnectionInfo.parse(bytes);
        assertEquals(List.of(1, 2, 3, -7), List.of(back.id(), back.qpNum(), back.mtu(), back.window()),
                "a window is unsigned: it travels as it is");
        assertArrayEquals(new byte[] {5, 6}, back.address());
        assertArrayEquals(new byte[] {4}, back.extra());
        assertArrayEquals(new byte[0],
                ConnectionInfo.parse(new ConnectionInfo(1, 2, 3, 0, new byte[0]).encode()).address());
    }

    @Test
    void anAddressLongerThanAllowedOrThanTheBytesIsRefusedBeforeAnythingIsCopied() {
        byte[] tooLong = ByteBuffer.allocate(18 + 300).putInt(1).putInt(2).putInt(3).putInt(4).putShort((short) 300)
                .array();
        IOException e = assertThrows(IOException.class, () -> ConnectionInfo.parse(tooLong));
        assertTrue(e.getMessage().contains("address of 300 bytes"), e.getMessage());
        byte[] cut = ByteBuffer.allocate(18 + 10).putInt(1).putInt(2).putInt(3).putInt(4).putShort((short) 20).array();
        e = assertThrows(IOException.class, () -> ConnectionInfo.parse(cut));
        assertTrue(e.getMessage().contains("with 10 left"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new ConnectionInfo(1, 2, 3, 0, new byte[257], new byte[0]));
    }

    @Test
    void aQueuePairWithAnAddressSendsItAndIsGivenThePeersBeforeConnecting() throws IOException {
        fake.addresses = true;
        VapiTransport transport = VapiTransport.open(vapi, "fake0", configuration(1024, 8192, 4),
                PeerIntroducer.none(), "fake");
        Endpoint a = transport.createEndpoint(0, SIZES);
        Endpoint b = transport.createEndpoint(1, SIZES);
        ConnectionInfo infoA = ConnectionInfo.parse(a.localInfo());
        ConnectionInfo infoB = ConnectionInfo.parse(b.localInfo());
        assertArrayEquals(FakeVapi.addressOf(infoA.qpNum()), infoA.address());
        Channel channel = a.connect(b.localInfo(), InetAddress.getLoopbackAddress(), Fixtures.KEY);
        assertArrayEquals(infoB.address(), fake.destAddressOf(infoA.qpNum()), "set before VAPI_modify_qp");
        channel.close();
        b.close();
        transport.close();
    }

    @Test
    void malformedRemoteInfoIsAnIOExceptionAndTheEndpointCanStillClose() throws IOException {
        VapiTransport transport = VapiTransport.open(vapi, "fake0", configuration(1024, 8192, 4),
                PeerIntroducer.none(), "fake");
        Endpoint e = transport.createEndpoint(0, SIZES);
        InetAddress peer = InetAddress.getLoopbackAddress();
        IOException shortInfo = assertThrows(IOException.class, () -> e.connect(new byte[5], peer, Fixtures.KEY));
        assertTrue(shortInfo.getMessage().contains("5 bytes"), shortInfo.getMessage());
        byte[] badMtu = new ConnectionInfo(1, 2, -4, 0, new byte[0]).encode();
        assertThrows(IOException.class, () -> e.connect(badMtu, peer, Fixtures.KEY));
        assertThrows(IOException.class, () -> e.connect(null, peer, Fixtures.KEY));
        assertThrows(IOException.class, () -> transport.pairKey(new byte[5], new byte[32]), "not a VAPI peer's information");
        e.close();
        verify(vapi).VAPI_destroy_qp(anyLong(), anyLong());
        verify(vapi, times(2)).VAPI_destroy_cq(anyLong(), anyLong());
        transport.close();
        verify(vapi).VAPI_dealloc_pd(anyLong(), anyLong());
        verify(vapi).EVAPI_release_hca_hndl(anyLong());
    }

    @Test
    void failedRegistrationUndoesTheQueuePairAndNamesTheFunction() throws IOException {
        VapiTransport transport = VapiTransport.open(vapi, "fake0", configuration(1024, 8192, 4),
                PeerIntroducer.none(), "fake");
        doReturn(VapiConstants.VAPI_ENOMEM).when(vapi)
                .VAPI_register_mr(anyLong(), anyLong(), anyLong(), anyLong(), any(), any());
        VapiException e = assertThrows(VapiException.class, () -> transport.createEndpoint(0, SIZES));
        assertEquals("VAPI_register_mr", e.function());
        assertTrue(e.getMessage().contains("VAPI_ENOMEM") && e.getMessage().contains("fake last error"),
                e.getMessage());
        verify(vapi).VAPI_destroy_qp(anyLong(), anyLong());
        verify(vapi, times(2)).VAPI_destroy_cq(anyLong(), anyLong());
        transport.close();
    }

    @Test
    void invalidConfigurationIsRejectedNamingTheSource() {
        IOException e = assertThrows(IOException.class, () -> VapiTransport.open(vapi, "fake0",
                configuration(1024, 512, 4), PeerIntroducer.none(), "fake"));
        assertTrue(e.getMessage().startsWith("configuration test.conf:"), e.getMessage());
    }
}
