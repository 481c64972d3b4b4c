package org.aldeia.core.config;

import java.net.InetSocketAddress;
import java.util.Locale;

/**
 * One {@code bind} or {@code connect} line of aldeia.conf (the syntax of the JDK's old
 * sdp.conf): an action, an address pattern and a port range. Immutable.
 */
public final class SocketRule {

    /** Which sockets a rule is about: server sockets binding, or sockets connecting. */
    public enum Action {
        BIND, CONNECT;

        /** The word that starts the rule's line: {@code bind} or {@code connect}. */
        String word() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Action action;
    private final SocketRuleAddress address;
    private final SocketRulePorts ports;
    private final String location;

    /**
     * @param location where the rule comes from, shown in log lines: {@code aldeia.conf:3}, or
     *     a sentence for a built-in rule
     */
    SocketRule(Action action, SocketRuleAddress address, SocketRulePorts ports, String location) {
        this.action = action;
        this.address = address;
        this.ports = ports;
        this.location = location;
    }

    /** {@link Action#BIND} or {@link Action#CONNECT}. */
    public Action action() {
        return action;
    }

    /**
     * Whether {@code address} (resolved) matches this rule's address pattern and ports. A
     * wildcard local address matches here only patterns that match it as an address ({@code *},
     * {@code 0.0.0.0}, {@code 0.0.0.0/0}); {@link SocketRules#matchBind} also tries this host's
     * interface addresses for it.
     *
     * @throws IllegalArgumentException if {@code address} is unresolved
     */
    boolean matches(InetSocketAddress address) {
        if (address.getAddress() == null) {
            throw new IllegalArgumentException("cannot match " + address + " against '" + this
                    + "': the address is unresolved");
        }
        return ports.matches(address.getPort()) && this.address.matches(address.getAddress());
    }

    /** The rule as written and where: {@code connect 10.0.0.0/8 1024-* (aldeia.conf:3)}. */
    @Override
    public String toString() {
        return action.word() + " " + address + " " + ports + " (" + location + ")";
    }
}
