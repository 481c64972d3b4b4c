package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.when;

import java.util.Optional;
import java.util.ServiceLoader;
import org.aldeia.core.AldeiaConfiguration;
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
        assertEquals("SOCKET_VAPI", provider.socketType());
        assertFalse(provider.isAvailable(), "libaldeiafabric.so is not on this module's class path");
        assertTrue(provider.whyUnavailable().contains("libaldeiafabric.so"), provider.whyUnavailable());
        NativeLibraryMissing e = assertThrows(NativeLibraryMissing.class,
                () -> provider.open(Fixtures.configuration(1024, 1 << 20, 16)));
        assertEquals("libaldeiafabric.so", e.library());
        assertTrue(e.getMessage().contains("libaldeiafabric.so") && e.getMessage().contains("SOCKET_VAPI"),
                e.getMessage());
    }

    @Test
    void aMissingLibfabricIsNamedWithWhereItWasLookedForAndItsPackage() {
        NativeLibraryMissing linker = new NativeLibraryMissing("libaldeiafabric.so", "socket_type = SOCKET_VAPI",
                new UnsatisfiedLinkError("libfabric.so.1: cannot open shared object file: No such file or directory"));
        NativeLibraryMissing e = FabricTransportProvider.withLibfabricHint(linker);
        assertTrue(e.getMessage().contains("it needs libfabric.so.1") && e.getMessage().contains("LD_LIBRARY_PATH")
                && e.getMessage().contains("apt-get install libfabric1") && e.getMessage().contains("dnf install libfabric")
                && e.getMessage().contains("cannot open shared object file"), e.getMessage());
        NativeLibraryMissing other = new NativeLibraryMissing("libaldeiafabric.so", "x",
                new UnsatisfiedLinkError("libaldeiafabric.so: cannot open shared object file"));
        assertSame(other, FabricTransportProvider.withLibfabricHint(other), "only libfabric's absence gets the hint");
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
