package org.aldeia.core.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

class AddressTextTest {

    @Test
    void ipv4IsHostColonPortAndIpv6IsInBrackets() throws Exception {
        assertEquals("10.0.0.9:40112", AddressText.of(new InetSocketAddress(InetAddress.getByName("10.0.0.9"), 40112)));
        assertEquals("[0:0:0:0:0:0:0:1]:40112", AddressText.of(new InetSocketAddress(InetAddress.getByName("::1"), 40112)));
    }
}
