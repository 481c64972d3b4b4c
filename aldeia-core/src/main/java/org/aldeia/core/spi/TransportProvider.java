package org.aldeia.core.spi;

import java.io.IOException;
import org.aldeia.core.config.AldeiaConfiguration;

/**
 * A way for Aldeia sockets to move bytes: found with {@link java.util.ServiceLoader} by its
 * {@link #socketType()} (the {@code socket_type} configuration key). aldeia-core never imports
 * a provider; providers live in their own modules and list themselves in
 * {@code META-INF/services/org.aldeia.core.spi.TransportProvider}.
 */
public interface TransportProvider {

    /** The configuration value that selects this provider, e.g. {@code SOCKET_DECK}. */
    String socketType();

    /**
     * Whether the provider can run here with {@code configuration} (its native library is
     * present, and for a provider on hardware, the adapter the configuration names opens). Used
     * when no configuration names a socket type and Aldeia must choose by itself. Never throws.
     */
    boolean isAvailable(AldeiaConfiguration configuration);

    /**
     * Why {@link #isAvailable} says no, for the log line that names Aldeia's choice; empty when
     * it says yes.
     */
    default String whyUnavailable(AldeiaConfiguration configuration) {
        return isAvailable(configuration) ? "" : "its native library is missing";
    }

    /**
     * Brings the provider's environment up; called once, by the first Aldeia socket of the JVM.
     *
     * @throws IOException naming what is missing (library and where it was looked for) or
     *     what failed underneath
     */
    Transport open(AldeiaConfiguration configuration) throws IOException;
}
