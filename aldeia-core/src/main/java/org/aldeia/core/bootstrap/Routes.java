package org.aldeia.core.bootstrap;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.aldeia.core.spi.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transports of one JVM, one per route ({@link Transport#route}), and the choice of one per
 * peer (issue 13: each peer gets the fastest route both ends have). In order of preference
 * between hosts; the last is also the one for peers on this host (DECK, whose shared memory
 * beats any fabric there) and the fallback for a server that has none of the others.
 *
 * <p>A client cannot know which routes a server has before it asks: it offers the first route
 * the server has not refused, and a server without it answers with its own routes
 * ({@link BootstrapProtocol#UNROUTED}); the client takes the first of its routes the server
 * has, on the same bootstrap connection, and remembers the refusal for that server. That
 * answer is not authenticated (nothing is agreed yet): a man in the middle can make the two
 * ends take the fallback route, which is as authenticated as the other, only slower.
 */
public final class Routes implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(Routes.class);
    /** Servers whose refusals are remembered, and peers whose route was logged: bounded, oldest out. */
    static final int REMEMBERED = 4096;

    private final List<Transport> transports;
    /** Server address -> the route it refused. */
    private final Map<InetSocketAddress, String> refused = lru();
    /** Peer host and route already logged. */
    private final Set<String> logged = Collections.newSetFromMap(lru());

    private Routes(List<Transport> transports) {
        if (transports.isEmpty()) {
            throw new IllegalArgumentException("no transport");
        }
        this.transports = List.copyOf(transports);
    }

    /** The routes of {@code transports}, in order of preference between hosts; the last serves this host. */
    public static Routes of(List<Transport> transports) {
        return new Routes(transports);
    }

    public static Routes of(Transport transport) {
        return new Routes(List.of(transport));
    }

    private static <K, V> Map<K, V> lru() {
        return Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > REMEMBERED;
            }
        });
    }

    /** The most preferred transport (the only one unless routes are chosen per peer). */
    public Transport primary() {
        return transports.get(0);
    }

    /** The routes' names, in order of preference. */
    public List<String> names() {
        return transports.stream().map(Transport::route).toList();
    }

    /** One line for the log: the transports and, when there are several, which peers each serves. */
    public String description() {
        if (transports.size() == 1) {
            return primary().description();
        }
        List<String> between = new ArrayList<>();
        for (Transport t : transports.subList(0, transports.size() - 1)) {
            between.add(t.description() + " (route \"" + t.route() + "\")");
        }
        return String.join(", then ", between) + " to peers on other hosts that have that route; "
                + local().description() + " to this host's peers and the rest";
    }

    private Transport local() {
        return transports.get(transports.size() - 1);
    }

    /** The transport a client offers {@code server} first. */
    public Transport toward(InetSocketAddress server) {
        if (transports.size() == 1) {
            return primary();
        }
        InetAddress host = server.getAddress();
        if (onThisHost(host)) {
            return logged(host, local(), "a peer on this host");
        }
        String refusedRoute = refused.get(server);
        for (Transport t : transports) {
            if (!t.route().equals(refusedRoute)) {
                return logged(host, t, t == local() ? "the fallback route" : "a peer on another host");
            }
        }
        return local();
    }

    /**
     * {@code server} has not {@code route}: it listed {@code serverRoutes}. The refusal is
     * remembered, and the first of this process's routes the server has is returned.
     *
     * @throws IOException if the two processes have no route in common
     */
    public Transport afterRefusal(InetSocketAddress server, String route, List<String> serverRoutes) throws IOException {
        refused.put(server, route);
        for (Transport t : transports) {
            if (!t.route().equals(route) && serverRoutes.contains(t.route())) {
                return logged(server.getAddress(), t, "its server has not route \"" + route + "\"");
            }
        }
        throw new IOException("the server at " + AddressText.of(server) + " has no route this process has: it has "
                + serverRoutes + ", this process " + names());
    }

    /** The transport of the route a client's HELLO names; null if this process has not that route. */
    public Transport named(String route, InetAddress client) {
        for (Transport t : transports) {
            if (t.route().equals(route)) {
                return transports.size() == 1 ? t : logged(client, t, "the route the client offered");
            }
        }
        return null;
    }

    /** One INFO line per peer host and route, as DECK's automatic transport logs its choice. */
    private Transport logged(InetAddress peer, Transport transport, String why) {
        if (logged.add(peer.getHostAddress() + " " + transport.route())) {
            LOG.info("Aldeia: peer {} over {} ({})", peer.getHostAddress(), transport.description(), why);
        }
        return transport;
    }

    /** Whether {@code address} is one of this machine's (loopback, or an interface's here). */
    static boolean onThisHost(InetAddress address) {
        if (address.isLoopbackAddress() || address.isAnyLocalAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(address) != null;
        } catch (SocketException e) {
            return false;
        }
    }

    /** Closes every transport; the first failure is thrown, with the others suppressed. */
    @Override
    public void close() throws IOException {
        IOException failure = null;
        for (Transport t : transports) {
            try {
                t.close();
            } catch (IOException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
