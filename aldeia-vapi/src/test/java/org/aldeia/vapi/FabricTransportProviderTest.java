package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.when;

import java.util.Optional;
import java.util.ServiceLoader;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.NativeLibraryMissing;
import org.aldeia.core.spi.TransportProvider;
import org.junit.jupiter.api.Test;

/**
 * The fabric route's provider where its library is not on the class path (this module's tests
 * run without the native jar; aldeia-microvapi's FabricStreamTest runs it for real).
 */
class FabricTransportProviderTest {

    @Test
    void missingFabricLibraryIsReportedByNameAndIsWhyTheRouteIsUnavailable() {
        FabricTransportProvider provider = new FabricTransportProvider();
        AldeiaConfiguration c = Fixtures.configuration(1024, 1 << 20, 16);
        assertEquals("SOCKET_VAPI", provider.socketType());
        assertFalse(provider.isAvailable(c), "libaldeiafabric.so is not on this module's class path");
        assertTrue(provider.whyUnavailable(c).contains("libaldeiafabric.so"), provider.whyUnavailable(c));
        NativeLibraryMissing e = assertThrows(NativeLibraryMissing.class, () -> provider.open(c));
        assertEquals("libaldeiafabric.so", e.library());
        assertTrue(e.getMessage().contains("libaldeiafabric.so") && e.getMessage().contains("SOCKET_VAPI"),
                e.getMessage());
    }

    @Test
    void theInfoLineNamesProviderAndDomain() {
        AldeiaConfiguration c = Fixtures.configuration(2048, 1 << 20, 16);
        assertEquals("VAPI over libfabric (first hardware provider, domain number 1)",
                FabricTransportProvider.describe(c));
        when(c.fabricProvider()).thenReturn(Optional.of("shm"));
        assertEquals("VAPI over libfabric shm (domain number 1)", FabricTransportProvider.describe(c));
        when(c.fabricDomain()).thenReturn(Optional.of("lo"));
        assertEquals("VAPI over libfabric shm (domain lo)", FabricTransportProvider.describe(c));
    }

    @Test
    void theInitStringCarriesProviderDomainPortMtuTrafficClassAndPeerTimeout() {
        AldeiaConfiguration c = Fixtures.configuration(2048, 1 << 20, 16);
        when(c.fabricProvider()).thenReturn(Optional.of("tcp"));
        when(c.fabricDomain()).thenReturn(Optional.of("lo"));
        when(c.peerTimeout()).thenReturn(5000);
        assertEquals("fabric:provider=tcp,domain=lo,port=1,mtu=2048,tc=3,peer_timeout=5000",
                FabricTransportProvider.initString(c));
        when(c.fabricProvider()).thenReturn(Optional.empty());
        when(c.fabricDomain()).thenReturn(Optional.empty());
        assertEquals("fabric:port=1,mtu=2048,tc=3,peer_timeout=5000", FabricTransportProvider.initString(c));
    }

    @Test
    void isFoundByServiceLoader() {
        assertTrue(ServiceLoader.load(TransportProvider.class).stream()
                .anyMatch(p -> p.type() == FabricTransportProvider.class
                        && AldeiaConfiguration.SOCKET_VAPI.equals(p.get().socketType())));
    }

    @Test
    void loadOfAMissingLibraryIsNativeLibraryMissing() {
        assertFalse(VapiLibrary.isLoadable("no-such-vapi"));
        NativeLibraryMissing e = assertThrows(NativeLibraryMissing.class,
                () -> VapiLibrary.load("no-such-vapi", "a test"));
        assertTrue(e.getMessage().startsWith("libno-such-vapi.so (needed for a test)"), e.getMessage());
    }

    @Test
    void aLibraryWithoutTheVapiFunctionsIsRefusedByName() {
        NativeLibraryMissing e = assertThrows(NativeLibraryMissing.class, () -> VapiLibrary.load("c", "a test"));
        assertTrue(e.getMessage().contains("does not implement vapi.h"), e.getMessage());
    }
}
