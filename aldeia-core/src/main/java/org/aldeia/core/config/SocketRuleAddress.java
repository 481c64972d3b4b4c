package org.aldeia.core.config;

import java.net.InetAddress;
import java.util.List;

/**
 * The address field of a {@code bind} or {@code connect} rule: {@code *}, the addresses a host
 * name resolved to when the file was read, or one literal with an optional prefix length. An
 * address matches a pattern only within its own family: an IPv4 pattern (even {@code 0.0.0.0/0})
 * never matches an IPv6 address and vice versa.
 */
final class SocketRuleAddress {

    static final SocketRuleAddress ANY = new SocketRuleAddress("*", List.of(), -1);

    private final String text;
    private final List<InetAddress> addresses;
    /** Leading bits that must be equal; -1 means the whole address (a host or a literal without prefix). */
    private final int prefix;

    /** {@code text} is the field as written; validation is {@link SocketRuleParser}'s. */
    SocketRuleAddress(String text, List<InetAddress> addresses, int prefix) {
        this.text = text;
        this.addresses = List.copyOf(addresses);
        this.prefix = prefix;
    }

    boolean matches(InetAddress candidate) {
        if (this == ANY) {
            return true;
        }
        byte[] bytes = candidate.getAddress();
        for (InetAddress address : addresses) {
            byte[] pattern = address.getAddress();
            if (pattern.length == bytes.length
                    && sameLeadingBits(pattern, bytes, prefix < 0 ? pattern.length * Byte.SIZE : prefix)) {
                return true;
            }
        }
        return false;
    }

    private static boolean sameLeadingBits(byte[] a, byte[] b, int bits) {
        int whole = bits / Byte.SIZE;
        for (int i = 0; i < whole; i++) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        int rest = bits % Byte.SIZE;
        if (rest == 0) {
            return true;
        }
        int mask = 0xff << (Byte.SIZE - rest);
        return ((a[whole] ^ b[whole]) & mask) == 0;
    }

    @Override
    public String toString() {
        return text;
    }
}
