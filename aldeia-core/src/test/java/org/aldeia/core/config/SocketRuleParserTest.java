package org.aldeia.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SocketRuleParserTest {

    private static final Path FILE = Path.of("/etc/aldeia/aldeia.conf");

    /** Host names the tests resolve, without any name service. */
    private static final Map<String, List<String>> HOSTS = Map.of(
            "db.cluster", List.of("10.1.2.3", "fd00::5"),
            "node-7", List.of("192.168.7.7"));

    private final List<String> resolved = new ArrayList<>();

    private final SocketRuleParser parser = new SocketRuleParser(FILE, host -> {
        resolved.add(host);
        List<String> addresses = HOSTS.get(host);
        if (addresses == null) {
            throw new UnknownHostException(host);
        }
        InetAddress[] result = new InetAddress[addresses.size()];
        for (int i = 0; i < result.length; i++) {
            result[i] = InetAddress.getByName(addresses.get(i));
        }
        return result;
    });

    private static InetSocketAddress at(String literal, int port) throws UnknownHostException {
        return new InetSocketAddress(InetAddress.getByName(literal), port);
    }

    private SocketRule parse(String text) throws AldeiaConfigurationException {
        return parser.parse(3, text);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bind * *", "connect 10.0.0.0/8 1024-*", "connect 10.1.2.3 80", "bind 0.0.0.0/0 5000-5010",
            "connect ::1 7000", "connect [::1] 7000", "connect fd00::/8 *", "connect [fd00::]/8 1-65535",
            "bind ::/0 65535", "connect db.cluster 5432", "connect 127.0.0.1/32 *"})
    void everyFormIsReadAndShownAsWrittenWithItsLocation(String text) throws AldeiaConfigurationException {
        assertEquals(text + " (aldeia.conf:3)", parse(text).toString());
    }

    @Test
    void actionComesFromTheFirstWordAndBlanksBetweenFieldsAreFree() throws AldeiaConfigurationException {
        SocketRule rule = parse("connect \t 10.0.0.0/8    1024-*");
        assertEquals(SocketRule.Action.CONNECT, rule.action());
        assertEquals("connect 10.0.0.0/8 1024-* (aldeia.conf:3)", rule.toString());
        assertEquals(SocketRule.Action.BIND, parse("bind * *").action());
    }

    @Test
    void onlyLinesStartingWithTheWordBindOrConnectAreRules() {
        assertTrue(SocketRuleParser.isRule("bind * *"));
        assertTrue(SocketRuleParser.isRule("connect\t10.0.0.1 80"));
        assertTrue(SocketRuleParser.isRule("bind"));
        assertFalse(SocketRuleParser.isRule("bind=1"));
        assertFalse(SocketRuleParser.isRule("binding * *"));
        assertFalse(SocketRuleParser.isRule("BIND * *"));
        assertFalse(SocketRuleParser.isRule("mtu = 1024"));
    }

    @Test
    void ipv4LiteralWithPrefixMatchesItsNetworkOnly() throws Exception {
        SocketRule rule = parse("connect 10.0.0.0/8 *");
        assertTrue(rule.matches(at("10.0.0.0", 80)));
        assertTrue(rule.matches(at("10.255.255.255", 80)));
        assertFalse(rule.matches(at("11.0.0.0", 80)));
        assertFalse(rule.matches(at("9.255.255.255", 80)));
    }

    @Test
    void prefixesThatAreNotAWholeNumberOfBytesCompareTheirLeadingBits() throws Exception {
        SocketRule rule = parse("connect 192.168.4.0/22 *");
        assertTrue(rule.matches(at("192.168.4.1", 1)));
        assertTrue(rule.matches(at("192.168.7.254", 1)));
        assertFalse(rule.matches(at("192.168.8.0", 1)));
        assertFalse(rule.matches(at("192.168.3.255", 1)));
        SocketRule v6 = parse("connect 2001:db8:8000::/33 *");
        assertTrue(v6.matches(at("2001:db8:ffff::1", 1)));
        assertFalse(v6.matches(at("2001:db8:7fff::1", 1)));
    }

    @Test
    void slash32AndNoPrefixMatchOneAddressAndSlash0TheWholeFamily() throws Exception {
        for (String text : new String[] {"connect 10.1.2.3/32 *", "connect 10.1.2.3 *"}) {
            SocketRule rule = parse(text);
            assertTrue(rule.matches(at("10.1.2.3", 1)), text);
            assertFalse(rule.matches(at("10.1.2.2", 1)), text);
            assertFalse(rule.matches(at("10.1.2.4", 1)), text);
        }
        SocketRule all4 = parse("connect 10.1.2.3/0 *");
        assertTrue(all4.matches(at("255.255.255.255", 1)));
        assertTrue(all4.matches(at("0.0.0.0", 1)));
        assertFalse(all4.matches(at("::1", 1)));
        SocketRule all6 = parse("connect ::/0 *");
        assertTrue(all6.matches(at("fe80::1", 1)));
        assertFalse(all6.matches(at("127.0.0.1", 1)));
    }

    @Test
    void ipv6LiteralsWithAndWithoutBracketsAndPrefixes() throws Exception {
        SocketRule plain = parse("connect fd00::1 *");
        SocketRule bracketed = parse("connect [fd00::1] *");
        for (SocketRule rule : new SocketRule[] {plain, bracketed}) {
            assertTrue(rule.matches(at("fd00:0:0:0:0:0:0:1", 9)));
            assertFalse(rule.matches(at("fd00::2", 9)));
        }
        SocketRule net = parse("connect [fd00::]/8 *");
        assertTrue(net.matches(at("fdff::1", 9)));
        assertFalse(net.matches(at("fe00::1", 9)));
        SocketRule host = parse("connect ::1/128 *");
        assertTrue(host.matches(at("::1", 9)));
        assertFalse(host.matches(at("::2", 9)));
    }

    @Test
    void anIpv4PatternNeverMatchesAnIpv6AddressWithTheSameBytesAndViceVersa() throws Exception {
        assertFalse(parse("connect 0.0.0.0/0 *").matches(at("::", 1)));
        assertFalse(parse("connect ::/0 *").matches(at("0.0.0.0", 1)));
        assertFalse(parse("connect 10.1.2.3 *").matches(at("a01:203::", 1)));
    }

    @Test
    void starMatchesEveryAddressOfBothFamilies() throws Exception {
        SocketRule rule = parse("connect * 80");
        assertTrue(rule.matches(at("10.0.0.1", 80)));
        assertTrue(rule.matches(at("fe80::1", 80)));
        assertFalse(rule.matches(at("10.0.0.1", 81)));
    }

    @Test
    void hostNameMatchesEveryAddressItResolvedToWhenRead() throws Exception {
        SocketRule rule = parse("connect db.cluster 5432");
        assertEquals(List.of("db.cluster"), resolved);
        assertTrue(rule.matches(at("10.1.2.3", 5432)));
        assertTrue(rule.matches(at("fd00::5", 5432)));
        assertFalse(rule.matches(at("10.1.2.4", 5432)));
        assertFalse(rule.matches(at("10.1.2.3", 5433)));
        assertEquals(List.of("db.cluster"), resolved, "matching must not resolve again");
    }

    @Test
    void literalsAreNeverLookedUp() throws Exception {
        parse("connect 10.0.0.1 1");
        parse("connect [::1] 1");
        parse("connect fe80::1/10 1");
        assertEquals(List.of(), resolved);
    }

    @Test
    void portRangesIncludeBothEnds() throws Exception {
        SocketRule range = parse("connect * 5000-5010");
        assertFalse(range.matches(at("10.0.0.1", 4999)));
        assertTrue(range.matches(at("10.0.0.1", 5000)));
        assertTrue(range.matches(at("10.0.0.1", 5010)));
        assertFalse(range.matches(at("10.0.0.1", 5011)));
        SocketRule single = parse("connect * 7");
        assertTrue(single.matches(at("10.0.0.1", 7)));
        assertFalse(single.matches(at("10.0.0.1", 8)));
        SocketRule open = parse("connect * 1024-*");
        assertFalse(open.matches(at("10.0.0.1", 1023)));
        assertTrue(open.matches(at("10.0.0.1", 65535)));
        assertTrue(parse("connect * 9-9").matches(at("10.0.0.1", 9)));
    }

    @Test
    void portZeroOfAnEphemeralBindIsMatchedOnlyByStar() throws Exception {
        assertTrue(parse("bind * *").matches(at("0.0.0.0", 0)));
        assertFalse(parse("bind * 1-*").matches(at("0.0.0.0", 0)));
        assertFalse(parse("bind * 1-65535").matches(at("0.0.0.0", 0)));
    }

    @Test
    void anUnresolvedAddressIsRefusedWithAClearMessage() throws AldeiaConfigurationException {
        SocketRule rule = parse("connect * *");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> rule.matches(InetSocketAddress.createUnresolved("db.cluster", 80)));
        assertTrue(e.getMessage().contains("unresolved"), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "bind 10.0.0.1                 | bind rule: expected 'bind <address> <ports>' but found 'bind 10.0.0.1'",
            "connect                       | connect rule: expected 'connect <address> <ports>' but found 'connect'",
            "connect 10.0.0.1 80 90        | connect rule: expected 'connect <address> <ports>' but found 'connect 10.0.0.1 80 90'",
            "connect 10.0.0.1 9-3          | connect rule: port range 9-3 is empty (first port must not exceed the last)",
            "bind * 0                      | bind rule: port 0 is out of range 1..65535",
            "bind * 0-*                    | bind rule: port 0 is out of range 1..65535",
            "bind * 65536                  | bind rule: port 65536 is out of range 1..65535",
            "bind * 80-70000               | bind rule: port 70000 is out of range 1..65535",
            "bind * 99999999999999999999   | bind rule: port 99999999999999999999 is out of range 1..65535",
            "bind * http                   | bind rule: 'http' is not a port or port range (expected *, N, N-M or N-*)",
            "bind * 80-                    | bind rule: '80-' is not a port or port range",
            "bind * -80                    | bind rule: '-80' is not a port or port range",
            "bind * *-80                   | bind rule: '*-80' is not a port or port range",
            "connect 10.0.0.0/33 *         | connect rule: prefix /33 is out of range 0..32 for an IPv4 address",
            "connect 10.0.0.0/1000 *       | connect rule: prefix /1000 is out of range 0..32 for an IPv4 address",
            "connect fd00::/129 *          | connect rule: prefix /129 is out of range 0..128 for an IPv6 address",
            "connect 10.0.0.0/x *          | connect rule: prefix '/x' is not a number",
            "connect 10.0.0.0/ *           | connect rule: prefix '/' is not a number",
            "connect 10.0.0.0/-1 *         | connect rule: prefix '/-1' is not a number",
            "connect nosuch.example 80     | connect rule: cannot resolve host 'nosuch.example'",
            "connect db.cluster/24 80      | connect rule: host name 'db.cluster' cannot take a prefix ('db.cluster/24')",
            "connect 10.0.0.256 80         | connect rule: '10.0.0.256' is not an IPv4 address",
            "connect 10.0.0 80             | connect rule: '10.0.0' is not an IPv4 address",
            "connect 10.0.0.1. 80          | connect rule: '10.0.0.1.' is not an IPv4 address",
            "connect [10.0.0.1] 80         | connect rule: '[10.0.0.1]' is not an IPv6 address",
            "connect [::1 80               | connect rule: '[::1' is not an IPv6 address",
            "connect 1::2::3 80            | connect rule: '1::2::3' is not an IPv6 address",
            "connect fe80::1%eth0 80       | connect rule: 'fe80::1%eth0' is not an IPv6 address",
            "connect g::1 80               | connect rule: 'g::1' is not an IPv6 address",
            "connect */8 80                | connect rule: '*' means every address and takes no prefix, found '*/8'",
            "connect bad!host 80           | connect rule: 'bad!host' is not '*', an address or a host name",
    })
    void everyErrorNamesFileLineRuleAndProblem(String text, String problem) {
        AldeiaConfigurationException e = assertThrows(AldeiaConfigurationException.class, () -> parse(text));
        assertTrue(e.getMessage().startsWith(FILE + ":3: " + problem), e.getMessage());
        assertEquals(FILE.toString(), e.file());
        assertEquals(3, e.line());
        assertNull(e.key());
    }

    @Test
    void anUnresolvableHostKeepsTheResolversErrorAsCause() {
        AldeiaConfigurationException e = assertThrows(AldeiaConfigurationException.class,
                () -> parse("bind nosuch.example *"));
        assertInstanceOf(UnknownHostException.class, e.getCause());
    }
}
