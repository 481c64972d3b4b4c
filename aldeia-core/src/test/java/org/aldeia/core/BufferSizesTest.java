package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.config.ConfigurationKey;
import org.aldeia.core.spi.EndpointSizes;
import org.junit.jupiter.api.Test;

class BufferSizesTest {

    private static final AldeiaConfiguration MTU_1000 = TestEnvironments.configuration("SOCKET_TEST");

    private static BufferSizes choose(AldeiaConfiguration configuration, Integer sendBuffer, Integer receiveBuffer) {
        return BufferSizes.choose(configuration, Optional.ofNullable(sendBuffer), Optional.ofNullable(receiveBuffer));
    }

    private static final int WINDOW = AldeiaConfiguration.defaults().receiveWindow();
    private static final int BUFFERS = AldeiaConfiguration.defaults().receiveBuffers();

    @Test
    void unsetOptionsMeanTheConfigurationsSizes() {
        BufferSizes sizes = choose(MTU_1000, null, null);
        assertEquals(new EndpointSizes(TestEnvironments.SEND_REGION, BUFFERS, WINDOW), sizes.endpoint());
        assertEquals(TestEnvironments.SEND_REGION, sizes.sendBufferSize());
        assertEquals(WINDOW, sizes.receiveBufferSize());
    }

    @Test
    void sendBufferIsTheRingInBytesAndReceiveBufferIsTheWindowInBytes() {
        BufferSizes sizes = choose(MTU_1000, 4096, 300_000);
        assertEquals(new EndpointSizes(4096, BUFFERS, 300_000), sizes.endpoint());
        assertEquals(4096, sizes.sendBufferSize());
        assertEquals(300_000, sizes.receiveBufferSize());
    }

    @Test
    void smallValuesAreClampedToOneMtuRingAndTheSmallestWindow() {
        BufferSizes sizes = choose(MTU_1000, 1, 1);
        assertEquals(new EndpointSizes(1000, BUFFERS, BufferSizes.MIN_RECEIVE_WINDOW), sizes.endpoint());
        assertEquals(BufferSizes.MIN_RECEIVE_WINDOW, sizes.receiveBufferSize());
        assertEquals(1000, choose(MTU_1000, 999, null).endpoint().sendRegionSize());
    }

    @Test
    void largeValuesAreClampedToOneGib() {
        BufferSizes sizes = choose(MTU_1000, Integer.MAX_VALUE, Integer.MAX_VALUE);
        assertEquals(new EndpointSizes(1 << 30, BUFFERS, 1 << 30), sizes.endpoint());
        assertEquals(1 << 30, sizes.receiveBufferSize());
    }

    @Test
    void postedBuffersNeverExceedWhatTheWindowHoldsButAreAtLeastTwo() {
        AldeiaConfiguration hugeMtu = TestEnvironments.configuration("SOCKET_TEST", java.util.Map.of(
                ConfigurationKey.MTU, AldeiaConfiguration.MAX_MTU, ConfigurationKey.SEND_REGION_SIZE, 1 << 24));
        assertEquals(WINDOW / AldeiaConfiguration.MAX_MTU, choose(hugeMtu, null, null).endpoint().receiveBuffers());
        assertEquals(2, choose(hugeMtu, null, 1).endpoint().receiveBuffers());
    }
}
