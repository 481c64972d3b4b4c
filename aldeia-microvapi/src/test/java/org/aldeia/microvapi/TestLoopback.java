package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;

/**
 * The loopback address the tests of a run connect over: {@value #PROPERTY} names it (the build
 * runs the contract suite once more with {@code ::1}); by default the JDK's loopback address.
 * Child JVMs get the same through {@link #jvmOptions}, so both ends of a connection use one family.
 */
public final class TestLoopback {

    public static final String PROPERTY = "aldeia.test.loopback";

    private TestLoopback() {
    }

    /** The run's loopback address (what a child JVM uses; tests call {@link #assumeUsable} first). */
    public static InetAddress address() {
        String name = System.getProperty(PROPERTY);
        try {
            return name == null ? InetAddress.getLoopbackAddress() : InetAddress.getByName(name);
        } catch (IOException e) {
            throw new UncheckedIOException(PROPERTY + " = " + name + " is not an address", e);
        }
    }

    /** IPv6 loopback, for the tests that run over IPv6 whatever the run's address; skipped without it. */
    public static InetAddress ipv6() throws IOException {
        InetAddress v6 = InetAddress.getByName("::1");
        assumeUsable(v6);
        return v6;
    }

    /** Skips the test, saying so, when {@code address} is IPv6 and this host has no IPv6 on loopback. */
    public static void assumeUsable(InetAddress address) {
        if (address instanceof Inet6Address) {
            assumeTrue(bindable(address), "this host has no IPv6 on loopback (" + address.getHostAddress()
                    + " cannot be bound): the IPv6 run is skipped");
        }
    }

    /** The JVM options that give a child JVM this run's loopback address. */
    public static List<String> jvmOptions() {
        String name = System.getProperty(PROPERTY);
        return name == null ? List.of() : List.of("-D" + PROPERTY + "=" + name);
    }

    private static boolean bindable(InetAddress address) {
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(new InetSocketAddress(address, 0));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
