package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ServiceLoader;
import org.aldeia.core.AldeiaConfiguration;
import org.aldeia.core.spi.NativeLibraryMissing;
import org.aldeia.core.spi.TransportProvider;
import org.junit.jupiter.api.Test;

class VerbsTransportProviderTest {

    @Test
    void missingVerbsLibraryIsReportedByName() {
        VerbsTransportProvider provider = new VerbsTransportProvider();
        assertEquals("SOCKET_VAPI", provider.socketType());
        assertFalse(provider.isAvailable(), "libaldeiaverbs.so is not built yet");
        NativeLibraryMissing e = assertThrows(NativeLibraryMissing.class,
                () -> provider.open(Fixtures.configuration(1024, 1 << 20, 16)));
        assertEquals("libaldeiaverbs.so", e.library());
        assertTrue(e.getMessage().contains("libaldeiaverbs.so") && e.getMessage().contains("SOCKET_VAPI"),
                e.getMessage());
    }

    @Test
    void isFoundByServiceLoader() {
        assertTrue(ServiceLoader.load(TransportProvider.class).stream()
                .anyMatch(p -> p.type() == VerbsTransportProvider.class
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
