package org.aldeia.core;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.config.AldeiaConfigurationException;
import org.aldeia.core.config.SocketRules;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Zero-code adoption: installs Aldeia as this JVM's socket implementation, so that every
 * {@code new Socket(...)} and {@code new ServerSocket(...)} (of the application and of any
 * library: RMI, HTTP servers and clients, JDBC drivers) goes through Aldeia where the rules of
 * aldeia.conf say so, and stays plain TCP everywhere else (see {@link SocketRules}). The Java
 * agent of module aldeia-agent calls it before the application's main.
 *
 * <p>It uses java.net's JVM-wide factories ({@link Socket#setSocketImplFactory},
 * {@link ServerSocket#setSocketFactory}), which the JDK has marked deprecated since 17 but not
 * for removal: they are the one public way to change what {@code new Socket()} does. NIO
 * channels ({@code SocketChannel}) are not affected.
 */
public final class Aldeia {

    private static final Logger LOG = LoggerFactory.getLogger(Aldeia.class);

    private static SocketRules installed;

    private Aldeia() {}

    /**
     * Reads the configuration ({@code -Daldeia.configuration}, or none), checks its rules and
     * installs the JVM-wide socket factories. Idempotent. The transport itself starts with the
     * first connection that uses Aldeia.
     *
     * @throws AldeiaConfigurationException naming file and line of a bad rule or key
     * @throws SocketException if another socket implementation factory is already installed
     */
    @SuppressWarnings("deprecation") // the JVM-wide socket factories: see the class comment
    public static synchronized void install() throws IOException {
        if (installed != null) {
            return;
        }
        AldeiaConfiguration configuration = AldeiaConfiguration.load();
        SocketRules rules = configuration.rules();
        AldeiaEnvironment.global(configuration); // the environment starts later, from this reading
        try {
            Socket.setSocketImplFactory(() -> new InstalledSocketImpl(AldeiaEnvironment::global, rules));
        } catch (SocketException e) {
            throw (SocketException) new SocketException("Aldeia cannot be installed: another SocketImplFactory is "
                    + "installed in this JVM (Socket.setSocketImplFactory: " + e.getMessage() + ")").initCause(e);
        }
        try {
            ServerSocket.setSocketFactory(() -> new InstalledServerSocketImpl(AldeiaEnvironment::global, rules));
        } catch (SocketException e) {
            // The JDK cannot take a factory back: new Sockets are Aldeia's from now on, server sockets not.
            throw (SocketException) new SocketException("Aldeia is only half installed: new Sockets use it, but "
                    + "another server SocketImplFactory is installed in this JVM (ServerSocket.setSocketFactory: "
                    + e.getMessage() + ")").initCause(e);
        }
        installed = rules;
        LOG.info("Aldeia installed: java.net sockets use Aldeia where the rules say so ({}: {})",
                configuration.source(), rules);
    }

    /** Whether {@link #install()} has run in this JVM. */
    public static synchronized boolean isInstalled() {
        return installed != null;
    }
}
