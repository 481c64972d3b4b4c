package org.aldeia.core.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads one {@code bind <address> <ports>} or {@code connect <address> <ports>} line of a
 * configuration file into a {@link SocketRule}. Host names are resolved here, once, so that a
 * name that does not resolve is an error naming the file and line instead of a socket quietly
 * staying plain TCP later.
 */
final class SocketRuleParser {

    /** Resolves a host name to all its addresses; {@link InetAddress#getAllByName} outside tests. */
    interface Resolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    private static final Pattern WORDS = Pattern.compile("\\s+");
    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
    /** Looks like a dotted IPv4 literal, so it must be one rather than a host name. */
    private static final Pattern DIGITS_AND_DOTS = Pattern.compile("[0-9.]+");
    /** Hex digits, colons and an embedded IPv4 tail; no zone id (a rule matches addresses by value). */
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");
    private static final Pattern HOST_NAME = Pattern.compile("[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_.])?");
    private static final Pattern DIGITS = Pattern.compile("\\d+");
    private static final Pattern PORTS = Pattern.compile("(\\d+)(?:-(\\d+|\\*))?");

    private final Path file;
    private final Resolver resolver;

    SocketRuleParser(Path file, Resolver resolver) {
        this.file = file;
        this.resolver = resolver;
    }

    SocketRuleParser(Path file) {
        this(file, InetAddress::getAllByName);
    }

    /** Whether a line (comment and outer blanks removed) is a rule: its first word is {@code bind} or {@code connect}. */
    static boolean isRule(String text) {
        String first = WORDS.split(text, 2)[0];
        return actionOf(first) != null;
    }

    /** @param text a line for which {@link #isRule} holds, comment and outer blanks removed */
    SocketRule parse(int line, String text) throws AldeiaConfigurationException {
        String[] words = WORDS.split(text);
        SocketRule.Action action = actionOf(words[0]);
        if (words.length != 3) {
            throw error(line, action, "expected '" + action.word() + " <address> <ports>' but found '" + text + "'");
        }
        SocketRuleAddress address = address(line, action, words[1]);
        SocketRulePorts ports = ports(line, action, words[2]);
        return new SocketRule(action, address, ports, file.getFileName() + ":" + line);
    }

    private static SocketRule.Action actionOf(String word) {
        for (SocketRule.Action action : SocketRule.Action.values()) {
            if (action.word().equals(word)) {
                return action;
            }
        }
        return null;
    }

    private SocketRuleAddress address(int line, SocketRule.Action action, String text)
            throws AldeiaConfigurationException {
        int slash = text.indexOf('/');
        String host = slash < 0 ? text : text.substring(0, slash);
        String prefix = slash < 0 ? null : text.substring(slash + 1);
        if (host.equals("*")) {
            if (prefix != null) {
                throw error(line, action, "'*' means every address and takes no prefix, found '" + text + "'");
            }
            return SocketRuleAddress.ANY;
        }
        InetAddress literal = literal(line, action, host);
        if (literal == null) {
            if (prefix != null) {
                throw error(line, action, "host name '" + host + "' cannot take a prefix ('" + text
                        + "'); write an address literal with the prefix, e.g. 10.0.0.0/8");
            }
            return new SocketRuleAddress(text, List.of(resolve(line, action, host)), -1);
        }
        return new SocketRuleAddress(text, List.of(literal), prefix == null ? -1 : prefix(line, action, prefix, literal));
    }

    /** The address {@code host} is a literal of, or null when it is a host name. */
    private InetAddress literal(int line, SocketRule.Action action, String host) throws AldeiaConfigurationException {
        boolean bracketed = host.startsWith("[");
        if (bracketed || host.contains(":")) {
            boolean closed = host.length() > 1 && host.endsWith("]");
            String inner = bracketed && closed ? host.substring(1, host.length() - 1) : host;
            if (bracketed != closed || !IPV6.matcher(inner).matches()) {
                throw error(line, action, "'" + host + "' is not an IPv6 address");
            }
            try {
                // The brackets make InetAddress accept only an IPv6 literal and never look a name up.
                return InetAddress.getByName("[" + inner + "]");
            } catch (UnknownHostException e) {
                throw error(line, action, "'" + host + "' is not an IPv6 address");
            }
        }
        if (DIGITS_AND_DOTS.matcher(host).matches()) {
            return ipv4(line, action, host);
        }
        if (!HOST_NAME.matcher(host).matches()) {
            throw error(line, action, "'" + host + "' is not '*', an address or a host name");
        }
        return null;
    }

    /** Four decimal parts only: InetAddress would also take "10.1" or "10", which nobody writes on purpose. */
    private InetAddress ipv4(int line, SocketRule.Action action, String host) throws AldeiaConfigurationException {
        Matcher parts = IPV4.matcher(host);
        byte[] bytes = new byte[4];
        boolean valid = parts.matches();
        for (int i = 0; valid && i < bytes.length; i++) {
            int part = Integer.parseInt(parts.group(i + 1));
            valid = part <= 255;
            bytes[i] = (byte) part;
        }
        if (!valid) {
            throw error(line, action, "'" + host + "' is not an IPv4 address");
        }
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new AssertionError("four bytes are always an IPv4 address", e);
        }
    }

    private int prefix(int line, SocketRule.Action action, String text, InetAddress address)
            throws AldeiaConfigurationException {
        if (!DIGITS.matcher(text).matches()) {
            throw error(line, action, "prefix '/" + text + "' is not a number");
        }
        int bits = address.getAddress().length * Byte.SIZE;
        if (text.length() > 3 || Integer.parseInt(text) > bits) {
            throw error(line, action, "prefix /" + text + " is out of range 0.." + bits + " for an "
                    + (bits == 32 ? "IPv4" : "IPv6") + " address");
        }
        return Integer.parseInt(text);
    }

    private InetAddress[] resolve(int line, SocketRule.Action action, String host) throws AldeiaConfigurationException {
        try {
            return resolver.resolve(host);
        } catch (UnknownHostException e) {
            throw error(line, action, "cannot resolve host '" + host + "'", e);
        }
    }

    private SocketRulePorts ports(int line, SocketRule.Action action, String text) throws AldeiaConfigurationException {
        if (text.equals("*")) {
            return SocketRulePorts.ANY;
        }
        Matcher range = PORTS.matcher(text);
        if (!range.matches()) {
            throw error(line, action, "'" + text + "' is not a port or port range (expected *, N, N-M or N-*)");
        }
        int first = port(line, action, range.group(1));
        String lastText = range.group(2);
        int last = lastText == null ? first
                : lastText.equals("*") ? SocketRulePorts.MAX_PORT : port(line, action, lastText);
        if (first > last) {
            throw error(line, action, "port range " + text + " is empty (first port must not exceed the last)");
        }
        return new SocketRulePorts(text, first, last);
    }

    private int port(int line, SocketRule.Action action, String digits) throws AldeiaConfigurationException {
        int port = digits.length() > 5 ? Integer.MAX_VALUE : Integer.parseInt(digits);
        if (port < SocketRulePorts.MIN_PORT || port > SocketRulePorts.MAX_PORT) {
            throw error(line, action, "port " + digits + " is out of range " + SocketRulePorts.MIN_PORT + ".."
                    + SocketRulePorts.MAX_PORT);
        }
        return port;
    }

    private AldeiaConfigurationException error(int line, SocketRule.Action action, String problem) {
        return error(line, action, problem, null);
    }

    private AldeiaConfigurationException error(int line, SocketRule.Action action, String problem, Throwable cause) {
        return new AldeiaConfigurationException(file.toString(), line, null, action.word() + " rule: " + problem, cause);
    }
}
