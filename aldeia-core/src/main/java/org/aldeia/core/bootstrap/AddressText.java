package org.aldeia.core.bootstrap;

import java.net.Inet6Address;
import java.net.InetSocketAddress;

/** An address and port as logs and errors print it: 10.0.0.9:40112, or [::1]:40112 for IPv6 (whose colons would run into the port). */
public final class AddressText {

    private AddressText() {
    }

    public static String of(InetSocketAddress address) {
        String host = address.getAddress().getHostAddress();
        return (address.getAddress() instanceof Inet6Address ? "[" + host + "]" : host) + ":" + address.getPort();
    }
}
