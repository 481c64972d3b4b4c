package org.aldeia.core.config;

/**
 * The port field of a {@code bind} or {@code connect} rule: {@code *}, {@code N}, {@code N-M} or
 * {@code N-*} (N..65535). Only {@code *} matches port 0, the ephemeral port a server socket asks
 * for when it does not care which one it gets: a rule naming ports is about those ports only.
 */
final class SocketRulePorts {

    static final int MIN_PORT = 1;
    static final int MAX_PORT = 65535;

    static final SocketRulePorts ANY = new SocketRulePorts("*", 0, MAX_PORT);

    private final String text;
    private final int first;
    private final int last;

    /** {@code text} is the field as written; validation is {@link SocketRuleParser}'s. */
    SocketRulePorts(String text, int first, int last) {
        this.text = text;
        this.first = first;
        this.last = last;
    }

    boolean matches(int port) {
        return port >= first && port <= last;
    }

    @Override
    public String toString() {
        return text;
    }
}
