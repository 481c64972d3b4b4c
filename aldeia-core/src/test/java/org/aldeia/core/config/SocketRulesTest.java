package org.aldeia.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class SocketRulesTest {

    private final SocketRuleParser parser = new SocketRuleParser(Path.of("aldeia.conf"), host -> {
        throw new UnknownHostException(host);
    });

    /** Counts how often the rules ask for this host's addresses. */
    private final AtomicInteger hostAddressReads = new AtomicInteger();

    private Supplier<List<InetAddress>> host(String... literals) {
        return () -> {
            hostAddressReads.incrementAndGet();
            List<InetAddress> addresses = new ArrayList<>();
            for (String literal : literals) {
                addresses.add(address(literal));
            }
            return addresses;
        };
    }

    private static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    private static InetSocketAddress at(String literal, int port) {
        return new InetSocketAddress(address(literal), port);
    }

    /** Rules from lines 1, 2, ... of aldeia.conf. */
    private SocketRules rules(Supplier<List<InetAddress>> hostAddresses, String... lines)
            throws AldeiaConfigurationException {
        List<SocketRule> rules = new ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            rules.add(parser.parse(i + 1, lines[i]));
        }
        return new SocketRules(rules, hostAddresses);
    }

    private static String matched(Optional<SocketRule> rule) {
        return rule.map(SocketRule::toString).orElse("none");
    }

    @Test
    void defaultsAcceptAldeiaOnEveryServerSocketAndUseItForNoClient() {
        SocketRules defaults = SocketRules.defaults();
        String bindStar = "bind * * (default: no bind rule in aldeia.conf)";
        for (InetSocketAddress local : new InetSocketAddress[] {at("0.0.0.0", 0), at("::", 8080),
                at("127.0.0.1", 65535), at("fe80::1", 1)}) {
            assertEquals(bindStar, matched(defaults.matchBind(local)), local.toString());
        }
        assertEquals(Optional.empty(), defaults.matchConnect(at("127.0.0.1", 80)));
        assertEquals(Optional.empty(), defaults.matchConnect(at("::1", 5432)));
        assertEquals(bindStar + "; no connect rule", defaults.toString());
        assertSame(defaults, SocketRules.of(List.of()), "a file without rules gets the defaults");
    }

    @Test
    void theFirstMatchingRuleInFileOrderIsReturned() throws AldeiaConfigurationException {
        SocketRules rules = rules(host(), "connect 10.1.0.0/16 5000", "connect 10.0.0.0/8 *", "connect 10.1.2.3 5000",
                "bind 10.0.0.0/8 *", "bind * 80");
        assertEquals("connect 10.1.0.0/16 5000 (aldeia.conf:1)", matched(rules.matchConnect(at("10.1.2.3", 5000))));
        assertEquals("connect 10.0.0.0/8 * (aldeia.conf:2)", matched(rules.matchConnect(at("10.1.2.3", 5001))));
        assertEquals("connect 10.0.0.0/8 * (aldeia.conf:2)", matched(rules.matchConnect(at("10.200.0.1", 5000))));
        assertEquals("none", matched(rules.matchConnect(at("192.168.0.1", 5000))));
        assertEquals("bind 10.0.0.0/8 * (aldeia.conf:4)", matched(rules.matchBind(at("10.0.0.1", 80))));
        assertEquals("bind * 80 (aldeia.conf:5)", matched(rules.matchBind(at("192.168.0.1", 80))));
        assertEquals("none", matched(rules.matchBind(at("192.168.0.1", 81))));
    }

    @Test
    void bindRulesNeverMatchConnectsNorConnectRulesBinds() throws AldeiaConfigurationException {
        SocketRules connectOnly = rules(host(), "connect * *");
        assertEquals("bind * * (default: no bind rule in aldeia.conf)",
                matched(connectOnly.matchBind(at("10.0.0.1", 80))), "no bind rule: the default bind * *");
        assertEquals("connect * * (aldeia.conf:1)", matched(connectOnly.matchConnect(at("10.0.0.1", 80))));
        assertEquals("bind * * (default: no bind rule in aldeia.conf); connect * * (aldeia.conf:1)",
                connectOnly.toString());
        SocketRules bindOnly = rules(host(), "bind * *");
        assertEquals("none", matched(bindOnly.matchConnect(at("10.0.0.1", 80))));
        assertEquals("bind * * (aldeia.conf:1); no connect rule", bindOnly.toString());
    }

    @Test
    void toStringListsEveryRuleOnOneLine() throws AldeiaConfigurationException {
        SocketRules rules = rules(host(), "connect 10.0.0.0/8 1024-*", "bind 10.0.0.1 5000", "connect ::1 *");
        assertEquals("bind 10.0.0.1 5000 (aldeia.conf:2); connect 10.0.0.0/8 1024-* (aldeia.conf:1); "
                + "connect ::1 * (aldeia.conf:3)", rules.toString());
    }

    @Test
    void anEphemeralBindIsMatchedOnlyByARuleForEveryPort() throws AldeiaConfigurationException {
        SocketRules rules = rules(host(), "bind 127.0.0.1 1-*", "bind 127.0.0.0/8 *");
        assertEquals("bind 127.0.0.0/8 * (aldeia.conf:2)", matched(rules.matchBind(at("127.0.0.1", 0))));
        assertEquals("bind 127.0.0.1 1-* (aldeia.conf:1)", matched(rules.matchBind(at("127.0.0.1", 4000))));
    }

    @Test
    void aWildcardBindMatchesARuleForAnyAddressOfThisHost() throws AldeiaConfigurationException {
        String[] lines = {"bind 10.0.0.0/8 7000", "bind fd00::/8 *"};
        SocketRules onTheClusterNetwork = rules(host("127.0.0.1", "10.3.0.7"), lines);
        assertEquals("bind 10.0.0.0/8 7000 (aldeia.conf:1)", matched(onTheClusterNetwork.matchBind(at("0.0.0.0", 7000))));
        assertEquals("bind 10.0.0.0/8 7000 (aldeia.conf:1)", matched(onTheClusterNetwork.matchBind(at("::", 7000))));
        assertEquals("none", matched(onTheClusterNetwork.matchBind(at("0.0.0.0", 7001))));
        assertEquals("none", matched(onTheClusterNetwork.matchBind(at("0.0.0.0", 0))));

        SocketRules elsewhere = rules(host("127.0.0.1", "192.168.1.5", "fe80::1"), lines);
        assertEquals("none", matched(elsewhere.matchBind(at("0.0.0.0", 7000))));
        assertEquals("none", matched(elsewhere.matchBind(at("::", 7000))));

        SocketRules ipv6Host = rules(host("::1", "fd00::42"), lines);
        assertEquals("bind fd00::/8 * (aldeia.conf:2)", matched(ipv6Host.matchBind(at("0.0.0.0", 0))));
    }

    @Test
    void aWildcardAddressItselfMatchesStarAndPatternsThatCoverIt() throws AldeiaConfigurationException {
        SocketRules rules = rules(host(), "bind 0.0.0.0 *", "bind ::/0 *");
        assertEquals("bind 0.0.0.0 * (aldeia.conf:1)", matched(rules.matchBind(at("0.0.0.0", 80))));
        assertEquals("bind ::/0 * (aldeia.conf:2)", matched(rules.matchBind(at("::", 80))));
        assertEquals("none", matched(rules.matchBind(at("10.0.0.1", 80))));
    }

    @Test
    void thisHostsAddressesAreReadOnceAndOnlyForAWildcardBind() throws AldeiaConfigurationException {
        SocketRules rules = rules(host("10.0.0.1"), "bind 10.0.0.0/8 *", "bind * 9", "connect * *");
        rules.matchBind(at("10.0.0.1", 80));
        rules.matchBind(at("192.168.0.1", 9));
        rules.matchConnect(at("10.0.0.1", 80));
        assertEquals(0, hostAddressReads.get());
        assertTrue(rules.matchBind(at("0.0.0.0", 80)).isPresent());
        assertTrue(rules.matchBind(at("::", 81)).isPresent());
        rules.matchBind(at("0.0.0.0", 9));
        assertEquals(1, hostAddressReads.get());
    }

    @Test
    void theRealHostAddressesIncludeLoopback() throws AldeiaConfigurationException {
        // NetworkInterface lists loopback on every machine the tests run on.
        List<SocketRule> rules = List.of(parser.parse(1, "bind 127.0.0.0/8 *"));
        assertEquals("bind 127.0.0.0/8 * (aldeia.conf:1)", matched(SocketRules.of(rules).matchBind(at("0.0.0.0", 0))));
    }
}
