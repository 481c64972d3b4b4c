package org.aldeia.core;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.aldeia.core.bootstrap.Routes;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.core.spi.Channel;
import org.aldeia.core.spi.Transport;
import org.aldeia.core.spi.TransportProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Aldeia environment of one JVM (thesis 4.4.2): the serial socket ids and the transport
 * every socket shares. It is started once, by the first socket that needs a connection: that
 * socket reads the configuration, chooses the provider and opens it. A failed start is not
 * retried: every later socket gets an exception carrying the same cause, so a missing library
 * is reported the same way each time instead of failing differently on a half-open transport.
 */
public final class AldeiaEnvironment implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(AldeiaEnvironment.class);

    /** Reads the configuration; an interface because reading may fail with an IOException. */
    @FunctionalInterface
    interface ConfigurationSource {
        AldeiaConfiguration get() throws IOException;
    }

    /** How long the JVM's exit waits for sockets left open to deliver their data. */
    static final long EXIT_DELIVERY_MILLIS = 2_000;

    private static final Object GLOBAL_LOCK = new Object();
    private static AldeiaEnvironment global;

    private final ConfigurationSource configurationSource;
    private final Supplier<List<TransportProvider>> providers;
    private final boolean closeAtShutdown;
    private final AtomicInteger nextSocketId = new AtomicInteger();
    /** The channels of connected sockets not yet closed, which the JVM's exit closes first. */
    private final Set<ChannelRelease> openChannels = ConcurrentHashMap.newKeySet();

    private final Object startLock = new Object();
    private boolean started;
    private AldeiaConfiguration configuration;
    private Routes routes;
    private IOException startFailure;
    private boolean closed;

    AldeiaEnvironment(ConfigurationSource configurationSource, Supplier<List<TransportProvider>> providers,
            boolean closeAtShutdown) {
        this.configurationSource = configurationSource;
        this.providers = providers;
        this.closeAtShutdown = closeAtShutdown;
    }

    /**
     * The environment of this JVM, created (not yet started) on first use: configuration from
     * {@link AldeiaConfiguration#load()}, providers from {@link ServiceLoader}.
     */
    public static AldeiaEnvironment global() {
        return globalReading(AldeiaConfiguration::load);
    }

    /**
     * The environment of this JVM as {@link #global()}, but created, if it does not exist yet,
     * with {@code configuration} already read: {@link Aldeia#install()} reads the file for its
     * rules, and reading it again would resolve the rules' host names a second time.
     */
    static AldeiaEnvironment global(AldeiaConfiguration configuration) {
        return globalReading(() -> configuration);
    }

    private static AldeiaEnvironment globalReading(ConfigurationSource source) {
        synchronized (GLOBAL_LOCK) {
            if (global == null) {
                global = new AldeiaEnvironment(source, AldeiaEnvironment::installedProviders, true);
            }
            return global;
        }
    }

    /**
     * Test hook: makes {@code environment} the one that sockets created with the public
     * constructors use, or restores the lazily created default with null. The replaced
     * environment is not closed.
     */
    static void replaceGlobal(AldeiaEnvironment environment) {
        synchronized (GLOBAL_LOCK) {
            global = environment;
        }
    }

    /** The providers on the class path, in ServiceLoader order. */
    static List<TransportProvider> installedProviders() {
        List<TransportProvider> found = new ArrayList<>();
        ServiceLoader.load(TransportProvider.class).forEach(found::add);
        return found;
    }

    /** The next serial socket id, from 0 (thesis Fig. 4.4). */
    int nextSocketId() {
        return nextSocketId.getAndIncrement();
    }

    /**
     * Registers a connected socket's channel: it is closed when the socket is closed, when the
     * socket becomes unreachable, or at JVM exit before the transport.
     */
    ChannelRelease track(Object socket, Channel channel, int socketId) {
        return ChannelRelease.register(socket, channel, socketId, openChannels);
    }

    /** The configuration the environment started with; starts it if needed. */
    public AldeiaConfiguration configuration() throws IOException {
        start();
        return configuration;
    }

    /**
     * The shared transport of the first route: the only one unless routes are chosen per peer
     * ({@link #routes}); starts the environment if needed.
     */
    public Transport transport() throws IOException {
        return routes().primary();
    }

    /** The shared transports, one per route; starts the environment if needed. */
    Routes routes() throws IOException {
        start();
        return routes;
    }

    private void start() throws IOException {
        synchronized (startLock) {
            if (closed) {
                throw new IOException("the Aldeia environment is closed (the JVM is shutting down)");
            }
            if (!started) {
                started = true;
                try {
                    open();
                } catch (IOException | RuntimeException | ServiceConfigurationError e) {
                    startFailure = e instanceof IOException io ? io
                            : new IOException("Aldeia could not start: " + e.getMessage(), e);
                    LOG.error("Aldeia: the environment could not start: {}", startFailure.getMessage());
                    throw startFailure;
                }
            }
            if (startFailure != null) {
                throw new IOException("the Aldeia environment failed to start earlier: " + startFailure.getMessage(),
                        startFailure);
            }
        }
    }

    private void open() throws IOException {
        AldeiaConfiguration config = configurationSource.get();
        List<TransportProvider> candidates = providers.get();
        Choice choice = choose(config, candidates);
        Routes opened = openAll(choice.providers(), config);
        configuration = config;
        routes = opened;
        LOG.info("Aldeia: using {} ({}; {})", opened.description(),
                config.fromFile() ? "configuration " + config.source() : "no configuration file", choice.reason());
        if (closeAtShutdown) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> closeAtExit(EXIT_DELIVERY_MILLIS),
                    "aldeia-shutdown"));
        }
    }

    /** Opens each provider's transport; if one fails, those already open are closed. */
    private static Routes openAll(List<TransportProvider> providers, AldeiaConfiguration config) throws IOException {
        List<Transport> opened = new ArrayList<>();
        try {
            for (TransportProvider provider : providers) {
                opened.add(provider.open(config));
            }
            return Routes.of(opened);
        } catch (IOException | RuntimeException e) {
            for (Transport t : opened) {
                try {
                    t.close();
                } catch (IOException | RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    /** The providers of the routes, in order of preference between hosts (the last also serves this host). */
    private record Choice(List<TransportProvider> providers, String reason) {}

    /**
     * socket_type given: the provider of that type alone. Not given: SOCKET_VAPI, when its
     * provider can run here with this configuration (on fabric hardware, or on the
     * fabric_provider configured), for peers on other hosts that reach this one through the same
     * fabric, and SOCKET_DECK for this host's peers and the others; otherwise SOCKET_DECK alone,
     * and the log line says why not VAPI.
     */
    private static Choice choose(AldeiaConfiguration config, List<TransportProvider> candidates) throws IOException {
        if (config.socketType().isPresent()) {
            String type = config.socketType().get();
            TransportProvider provider = find(type, candidates);
            if (provider == null) {
                throw new IOException("socket_type " + type + " (from " + config.source()
                        + ") has no provider on the class path; providers found: " + typesOf(candidates));
            }
            return new Choice(List.of(provider), "socket_type " + type + " configured");
        }
        TransportProvider vapi = find(AldeiaConfiguration.SOCKET_VAPI, candidates);
        TransportProvider deck = find(AldeiaConfiguration.SOCKET_DECK, candidates);
        if (vapi != null && vapi.isAvailable(config)) {
            if (deck == null || !deck.isAvailable(config)) {
                return new Choice(List.of(vapi), "chosen automatically: SOCKET_VAPI can run here, SOCKET_DECK cannot");
            }
            return new Choice(List.of(vapi, deck), "chosen automatically per peer: SOCKET_VAPI can run here");
        }
        String whyNotVapi = vapi == null ? "no SOCKET_VAPI provider on the class path"
                : "SOCKET_VAPI cannot run here: " + vapi.whyUnavailable(config);
        if (deck == null) {
            throw new IOException("no socket_type is configured and Aldeia cannot choose one: " + whyNotVapi
                    + " and no SOCKET_DECK provider on the class path; providers found: " + typesOf(candidates));
        }
        return new Choice(List.of(deck), whyNotVapi);
    }

    private static TransportProvider find(String type, List<TransportProvider> candidates) {
        return candidates.stream().filter(p -> type.equals(p.socketType())).findFirst().orElse(null);
    }

    private static String typesOf(List<TransportProvider> candidates) {
        return candidates.isEmpty() ? "none"
                : candidates.stream().map(TransportProvider::socketType).collect(Collectors.joining(", "));
    }

    /** Closes the transport; sockets still open fail on their next operation. Idempotent. */
    @Override
    public void close() throws IOException {
        Routes toClose;
        synchronized (startLock) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = routes;
        }
        if (toClose != null) {
            toClose.close();
        }
    }

    /**
     * The JVM is exiting. Sockets the application left open (RMI keeps its connections, for
     * one) are closed first, so that what they were given reaches their peers followed by end
     * of stream, as the kernel does for TCP sockets at exit, and the transport is then closed
     * with nothing left on it. A peer that does not take the data within
     * {@code deliveryMillis} must not hold the JVM's exit: then the transport is left to the
     * process's end, which frees it.
     */
    void closeAtExit(long deliveryMillis) {
        List<ChannelRelease> left = List.copyOf(openChannels);
        if (!left.isEmpty()) {
            Thread closer = new Thread(() -> left.forEach(ChannelRelease::releaseAtExit), "aldeia-exit-close");
            closer.setDaemon(true);
            closer.start();
            try {
                closer.join(deliveryMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (closer.isAlive()) {
                LOG.warn("Aldeia: {} of the {} sockets open at JVM exit did not deliver their data within {} ms;"
                        + " their peers may not receive all of it", openChannels.size(), left.size(), deliveryMillis);
                return;
            }
        }
        closeQuietly();
    }

    private void closeQuietly() {
        try {
            close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("Aldeia: closing the transport at JVM shutdown failed: {}", e.toString());
        }
    }
}
