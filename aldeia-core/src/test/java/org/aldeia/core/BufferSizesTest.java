package org.aldeia.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import org.aldeia.core.spi.EndpointSizes;
import org.junit.jupiter.api.Test;

class BufferSizesTest {

    private static final AldeiaConfiguration MTU_1000 = TestEnvironments.configuration("SOCKET_TEST");

    private static BufferSizes choose(AldeiaConfiguration configuration, Integer sendBuffer, Integer receiveBuffer) {
        return BufferSizes.choose(configuration, Optional.ofNullable(sendBuffer), Optional.ofNullable(receiveBuffer));
    }

    @Test
    void unsetOptionsMeanTheConfigurationsSizes() {
        BufferSizes sizes = choose(MTU_1000, null, null);
        assertEquals(new EndpointSizes(TestEnvironments.SEND_REGION, 16), sizes.endpoint());
        assertEquals(TestEnvironments.SEND_REGION, sizes.sendBufferSize());
        assertEquals(16 * 1000, sizes.receiveBufferSize());
    }

    @Test
    void sendBufferIsTheRingInBytesAndReceiveBufferIsRoundedUpToWholeBuffers() {
        BufferSizes sizes = choose(MTU_1000, 4096, 3000);
        assertEquals(new EndpointSizes(4096, 3), sizes.endpoint());
        assertEquals(4096, sizes.sendBufferSize());
        assertEquals(3000, sizes.receiveBufferSize());
        assertEquals(3, choose(MTU_1000, null, 2001).endpoint().receiveBuffers());
        assertEquals(4, choose(MTU_1000, null, 3001).endpoint().receiveBuffers());
    }

    @Test
    void smallValuesAreClampedToOneMtuRingAndTwoBuffers() {
        BufferSizes sizes = choose(MTU_1000, 1, 1);
        assertEquals(new EndpointSizes(1000, 2), sizes.endpoint());
        assertEquals(2000, sizes.receiveBufferSize());
        assertEquals(1000, choose(MTU_1000, 999, null).endpoint().sendRegionSize());
    }

    @Test
    void largeValuesAreClampedToOneGibRingAnd4096Buffers() {
        BufferSizes sizes = choose(MTU_1000, Integer.MAX_VALUE, Integer.MAX_VALUE);
        assertEquals(new EndpointSizes(1 << 30, 4096), sizes.endpoint());
        assertEquals(4096 * 1000, sizes.receiveBufferSize());
    }

    @Test
    void receiveBuffersOfTheLargestMtuStayWithinOneGib() {
        AldeiaConfiguration hugeMtu = TestEnvironments.configuration("SOCKET_TEST", java.util.Map.of(
                ConfigurationKey.MTU, AldeiaConfiguration.MAX_MTU, ConfigurationKey.SEND_REGION_SIZE, 1 << 24));
        BufferSizes sizes = choose(hugeMtu, null, Integer.MAX_VALUE);
        assertEquals((1 << 30) / AldeiaConfiguration.MAX_MTU, sizes.endpoint().receiveBuffers());
        assertEquals(1 << 30, sizes.receiveBufferSize());
    }

    @Test
    void reportedReceiveSizeSaturatesInsteadOfOverflowing() {
        BufferSizes sizes = new BufferSizes(new EndpointSizes(1 << 20, 8192), AldeiaConfiguration.MAX_MTU);
        assertEquals(Integer.MAX_VALUE, sizes.receiveBufferSize());
    }
}
