package org.aldeia.vapi;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.io.IOException;
import org.aldeia.core.AldeiaConfiguration;
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

    private volatile String unavailable;   // why the route cannot run here unconfigured; "" once it can

    @Override
    public String socketType() {
        return AldeiaConfiguration.SOCKET_VAPI;
    }

    /**
     * Whether the route can run here with no configuration: the library loads and libfabric
     * offers a hardware provider (an adapter opens and is released again, once per JVM).
     * libfabric's tcp and shm providers do not count: without fabric hardware DECK serves
     * those routes.
     */
    @Override
    public boolean isAvailable() {
        return whyUnavailable().isEmpty();
    }

    @Override
    public String whyUnavailable() {
        String reason = unavailable;
        if (reason == null) {
            reason = probe();
            unavailable = reason;
        }
        return reason;
    }

    /**
     * Opens and releases the default adapter through plain calls: binding {@link VapiDirect}
     * here would tie the JVM to this library (one VAPI library per JVM) before Aldeia has chosen.
     */
    private static String probe() {
        keepTheJvmsSignalHandlers();
        try {
            NativeLibrary library = NativeLibrary.getInstance(LIBRARY);
            long[] hca = new long[1];
            int ret = library.getFunction("EVAPI_get_hca_hndl").invokeInt(new Object[] {"fabric", hca});
            if (ret != VapiConstants.VAPI_OK) {
                return library.getFunction("EVAPI_last_error").invokeString(new Object[0], false);
            }
            library.getFunction("EVAPI_release_hca_hndl").invokeInt(new Object[] {hca[0]});
            return "";
        } catch (UnsatisfiedLinkError e) {
            return withLibfabricHint(new NativeLibraryMissing(VapiLibrary.fileName(LIBRARY), PURPOSE, e)).getMessage();
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

    private static String describe(AldeiaConfiguration c) {
        return "VAPI over libfabric " + c.fabricProvider().orElse("(first hardware provider)")
                + c.fabricDomain().map(d -> " domain " + d).orElse(" domain number " + c.infinibandPort());
    }

    private static Vapi load() throws IOException {
        keepTheJvmsSignalHandlers();
        try {
            return VapiLibrary.load(LIBRARY, PURPOSE);
        } catch (NativeLibraryMissing e) {
            throw withLibfabricHint(e);
        }
    }

    /**
     * libfabric as Debian and others build it links the PSM libraries of Intel's old
     * InfiniPath and Omni-Path adapters, and libpsm_infinipath installs a SIGSEGV handler when it
     * is loaded, unless IPATH_NO_BACKTRACE is set then. The JVM takes SIGSEGV on purpose (implicit
     * null checks, safepoint polls): with that handler in place the first null check of compiled
     * code killed the JVM (measured: a JVM that loads libfabric.so.1 and then catches
     * NullPointerExceptions in a loop dies with "terminated with signal 11" and a .btr file; with
     * the variable set it runs). So it is set, with libpsm2's equivalent, in this process's
     * environment before the library and libfabric load; a value the user set is kept.
     */
    private static void keepTheJvmsSignalHandlers() {
        Function setenv = NativeLibrary.getInstance(Platform.C_LIBRARY_NAME).getFunction("setenv");
        for (String variable : new String[] {"IPATH_NO_BACKTRACE", "HFI_NO_BACKTRACE"}) {
            setenv.invokeInt(new Object[] {variable, "1", 0});
        }
    }

    /**
     * When what is missing is libfabric itself (the library loads only with libfabric.so.1
     * beside it), the error says so, where the dynamic linker looks and what to install.
     */
    static NativeLibraryMissing withLibfabricHint(NativeLibraryMissing e) {
        Throwable cause = e.getCause();
        String said = cause == null || cause.getMessage() == null ? "" : cause.getMessage();
        if (!said.contains("libfabric.so")) {
            return e;
        }
        return new NativeLibraryMissing(e.library(), PURPOSE + "; it needs libfabric.so.1, libfabric's library, which "
                + "the dynamic linker did not find (it looks in LD_LIBRARY_PATH and the ld.so cache): install libfabric "
                + "(Debian/Ubuntu: apt-get install libfabric1; Fedora/RHEL: dnf install libfabric)", cause);
    }
}
