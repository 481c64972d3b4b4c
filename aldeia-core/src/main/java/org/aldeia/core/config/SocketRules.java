package org.aldeia.core.config;

import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.aldeia.core.Aldeia;

/**
 * Which sockets of a JVM where Aldeia is installed ({@link Aldeia#install()}) use Aldeia and
 * which stay plain TCP: the {@code bind} and {@code connect} rules of aldeia.conf. The first
 * matching rule in file order decides. Immutable.
 */
public final class SocketRules {

    /**
     * Without a bind rule every server socket accepts Aldeia clients (and still plain TCP ones,
     * told apart by the bootstrap), so that a file listing only the cluster's connect rules
     * works on its servers too. Without a connect rule no client uses Aldeia, because a client
     * cannot tell an Aldeia server from, say, a database before the server speaks.
     */
    private static final SocketRule DEFAULT_BIND = new SocketRule(SocketRule.Action.BIND, SocketRuleAddress.ANY,
            SocketRulePorts.ANY, "default: no bind rule in aldeia.conf");

    private static final SocketRules DEFAULTS = new SocketRules(List.of(),
            SocketRules::interfaceAddresses);

    private final List<SocketRule> bindRules;
    private final List<SocketRule> connectRules;
    private final Supplier<List<InetAddress>> hostAddressSource;
    /** Read on the first wildcard bind only; null until then (or after a failed read, so it is retried). */
    private volatile List<InetAddress> hostAddresses;

    /**
     * @param rules in file order
     * @param hostAddressSource this host's addresses, asked at most once (successfully), on the
     *     first bind to the wildcard address
     */
    SocketRules(List<SocketRule> rules, Supplier<List<InetAddress>> hostAddressSource) {
        List<SocketRule> binds = rules.stream().filter(r -> r.action() == SocketRule.Action.BIND).toList();
        this.bindRules = binds.isEmpty() ? List.of(DEFAULT_BIND) : binds;
        this.connectRules = rules.stream().filter(r -> r.action() == SocketRule.Action.CONNECT).toList();
        this.hostAddressSource = hostAddressSource;
    }

    /** No rule in the configuration: every server socket accepts Aldeia (and plain TCP) clients, no connect uses Aldeia. */
    public static SocketRules defaults() {
        return DEFAULTS;
    }

    /** The rules of a file, in file order; a file without any gets {@link #defaults()}. */
    static SocketRules of(List<SocketRule> rules) {
        return rules.isEmpty() ? DEFAULTS : new SocketRules(rules, SocketRules::interfaceAddresses);
    }

    /**
     * The first bind rule matching a server socket's local address (possibly the wildcard
     * address, port possibly 0). A wildcard address listens on every interface, so it matches a
     * rule whose pattern matches any of this host's interface addresses.
     *
     * @throws UncheckedIOException if the wildcard address must be matched and this host's
     *     network interfaces cannot be listed
     */
    public Optional<SocketRule> matchBind(InetSocketAddress local) {
        boolean wildcard = local.getAddress() != null && local.getAddress().isAnyLocalAddress();
        return bindRules.stream()
                .filter(rule -> rule.matches(local) || wildcard && matchesAHostAddress(rule, local.getPort()))
                .findFirst();
    }

    /**
     * The first connect rule matching the resolved remote address of a connecting socket.
     *
     * @throws IllegalArgumentException if {@code remote} is unresolved
     */
    public Optional<SocketRule> matchConnect(InetSocketAddress remote) {
        return connectRules.stream().filter(rule -> rule.matches(remote)).findFirst();
    }

    private boolean matchesAHostAddress(SocketRule rule, int port) {
        return hostAddresses().stream().anyMatch(address -> rule.matches(new InetSocketAddress(address, port)));
    }

    private List<InetAddress> hostAddresses() {
        List<InetAddress> known = hostAddresses;
        if (known == null) {
            synchronized (this) {
                if (hostAddresses == null) {
                    hostAddresses = List.copyOf(hostAddressSource.get());
                }
                known = hostAddresses;
            }
        }
        return known;
    }

    /** Every address of every network interface of this host, up or down. */
    private static List<InetAddress> interfaceAddresses() {
        try {
            return NetworkInterface.networkInterfaces().flatMap(NetworkInterface::inetAddresses).toList();
        } catch (SocketException e) {
            throw new UncheckedIOException("cannot list this host's network interfaces to match a wildcard bind "
                    + "against the bind rules of aldeia.conf", e);
        }
    }

    /** All rules on one line, for the log: {@code bind * * (default: no bind rule in aldeia.conf); no connect rule}. */
    @Override
    public String toString() {
        return summary(bindRules, "bind") + "; " + summary(connectRules, "connect");
    }

    private static String summary(List<SocketRule> rules, String word) {
        return rules.isEmpty() ? "no " + word + " rule"
                : rules.stream().map(SocketRule::toString).collect(Collectors.joining("; "));
    }
}
