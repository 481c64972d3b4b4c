package org.aldeia.vapi;

import com.sun.jna.NativeLibrary;
import java.io.IOException;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.NativeLibraryMissing;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.spi.TransportProvider;

/**
 * {@code socket_type = SOCKET_VAPI}: queue pairs on a fabric through {@code libaldeiafabric.so},
 * vapi.h over libfabric (native-c/fabric): InfiniBand and RoCE (verbs), AWS EFA, Slingshot,
 * Omni-Path, and libfabric's tcp and shm anywhere. The provider, domain, traffic class and
 * peer timeout go to the library in its init string ({@link #initString}); each queue pair's
 * address travels in the bootstrap's connection information.
 */
public final class FabricTransportProvider implements TransportProvider {

    /** The library's name, without {@code lib} and {@code .so}. */
    static final String LIBRARY = "aldeiafabric";
    private static final String PURPOSE = "socket_type = " + AldeiaConfiguration.SOCKET_VAPI;

    /** What the probe of one init string found: "" when its adapter opened. */
    private record Probe(String initString, String unavailable) {}

    private volatile Probe probe;

    @Override
    public String socketType() {
        return AldeiaConfiguration.SOCKET_VAPI;
    }

    /**
     * Whether the route can run here with {@code configuration}: the library loads and the
     * adapter the init string names opens (without fabric_provider, a hardware provider's:
     * libfabric's tcp and shm do not count then, as DECK serves those routes). The adapter is
     * opened and released once; the answer is kept.
     */
    @Override
    public boolean isAvailable(AldeiaConfiguration configuration) {
        return whyUnavailable(configuration).isEmpty();
    }

    @Override
    public String whyUnavailable(AldeiaConfiguration configuration) {
        String initString = initString(configuration);
        Probe known = probe;
        if (known == null || !known.initString().equals(initString)) {
            known = new Probe(initString, probe(initString));
            probe = known;
        }
        return known.unavailable();
    }

    /**
     * Opens and releases the adapter through plain calls: a JVM that does not take the route
     * binds nothing of the library ({@link VapiLibrary} binds for good). Never throws: whatever
     * goes wrong is the reason the route is unavailable.
     */
    private static String probe(String initString) {
        try {
            Libfabric.keepTheJvmsSignalHandlers();
            NativeLibrary library = NativeLibrary.getInstance(LIBRARY);
            long[] hca = new long[1];
            int ret = library.getFunction("EVAPI_get_hca_hndl").invokeInt(new Object[] {initString, hca});
            if (ret != VapiConstants.VAPI_OK) {
                return library.getFunction("EVAPI_last_error").invokeString(new Object[0], false);
            }
            library.getFunction("EVAPI_release_hca_hndl").invokeInt(new Object[] {hca[0]});
            return "";
        } catch (UnsatisfiedLinkError e) {
            return Libfabric.explainMissing(new NativeLibraryMissing(VapiLibrary.fileName(LIBRARY), PURPOSE, e),
                    System.getenv("LD_LIBRARY_PATH")).getMessage();
        } catch (RuntimeException e) {
            return "probing " + VapiLibrary.fileName(LIBRARY) + " failed: " + e;
        }
    }

    @Override
    public Transport open(AldeiaConfiguration configuration) throws IOException {
        return VapiTransport.open(load(), initString(configuration), configuration, PeerIntroducer.none(),
                describe(configuration));
    }

    /** The library's init string for this configuration (native-c/fabric/fab_config.c). */
    static String initString(AldeiaConfiguration c) {
        StringBuilder s = new StringBuilder("fabric:");
        c.fabricProvider().ifPresent(p -> s.append("provider=").append(p).append(','));
        c.fabricDomain().ifPresent(d -> s.append("domain=").append(d).append(','));
        return s.append("port=").append(c.infinibandPort()).append(",mtu=").append(c.mtu())
                .append(",tc=").append(c.infinibandQos()).append(",peer_timeout=").append(c.peerTimeout())
                .toString();
    }

    /**
     * For the INFO line: "VAPI over libfabric tcp (domain lo)", "VAPI over libfabric (first
     * hardware provider, domain number 1)"; {@link VapiTransport} appends the LID and MTU.
     */
    static String describe(AldeiaConfiguration c) {
        String domain = c.fabricDomain().map(d -> "domain " + d).orElse("domain number " + c.infinibandPort());
        return "VAPI over libfabric " + c.fabricProvider().map(p -> p + " (" + domain + ")")
                .orElse("(first hardware provider, " + domain + ")");
    }

    private static Vapi load() throws IOException {
        Libfabric.keepTheJvmsSignalHandlers();
        try {
            return VapiLibrary.load(LIBRARY, PURPOSE);
        } catch (NativeLibraryMissing e) {
            throw Libfabric.explainMissing(e, System.getenv("LD_LIBRARY_PATH"));
        }
    }
}
