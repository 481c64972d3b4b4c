package org.aldeia.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AldeiaConfigurationTest {

    @TempDir
    Path dir;

    private AldeiaConfiguration parse(String... lines) throws IOException {
        return AldeiaConfiguration.parse(write(lines));
    }

    /** A run secret as deckrun writes one, in the configuration's directory: "run.secret". */
    private Path secret() throws IOException {
        Path file = dir.resolve("run.secret");
        Files.deleteIfExists(file);
        Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        return Files.writeString(file, "0123456789abcdef0123456789abcdef");
    }

    private Path write(String... lines) throws IOException {
        Path file = dir.resolve("aldeia.conf");
        Files.writeString(file, String.join("\n", lines) + "\n");
        return file;
    }

    private AldeiaConfigurationException parseError(String... lines) throws IOException {
        Path file = write(lines);
        return assertThrows(AldeiaConfigurationException.class, () -> AldeiaConfiguration.parse(file));
    }

    private static void assertNames(AldeiaConfigurationException e, int line, String key, String problem) {
        String message = e.getMessage();
        assertTrue(message.contains("aldeia.conf:" + line + ": "), message);
        if (key != null) {
            assertTrue(message.contains("key '" + key + "'"), message);
        }
        assertTrue(message.contains(problem), message);
        assertEquals(line, e.line());
        assertEquals(key, e.key());
    }

    @Test
    void thesisFigure43ExampleIsRead() throws IOException {
        secret();
        AldeiaConfiguration c = parse("# Configurações do DECK", "deck_id = 0", "deck_nodes = 2",
                "deck_file = arquivo_nos", "deck_secret_file = run.secret", "# Configurações da VAPI", "infiniband_port = 1", "infiniband_qos = 0",
                "# Configurações comum", "socket_type = SOCKET_DECK", "mtu = 1024");
        assertEquals(Optional.of("SOCKET_DECK"), c.socketType());
        assertEquals(OptionalInt.of(0), c.deckId());
        assertEquals(OptionalInt.of(2), c.deckNodes());
        assertTrue(c.isStaticDeck());
        assertEquals(dir.resolve("arquivo_nos").toAbsolutePath(), c.deckFile());
        assertEquals(1, c.infinibandPort());
        assertEquals(0, c.infinibandQos());
        assertEquals(1024, c.mtu());
        assertEquals(dir.resolve("aldeia.conf").toString(), c.source());
        assertTrue(c.fromFile());
    }

    @Test
    void commentsAndBlankLinesAreIgnoredAndValuesTrimmed() throws IOException {
        AldeiaConfiguration c = parse("", "   # whole-line comment", "mtu=2048   # trailing comment", "\t",
                "  receive_buffers   =   32  ", "deck_file = my nodes.txt # spaces inside a value stay");
        assertEquals(2048, c.mtu());
        assertEquals(32, c.receiveBuffers());
        assertEquals(dir.resolve("my nodes.txt").toAbsolutePath(), c.deckFile());
    }

    @Test
    void absentKeysTakeTheirDefaults() throws IOException {
        AldeiaConfiguration c = parse("# nothing but a comment");
        AldeiaConfiguration d = AldeiaConfiguration.defaults();
        for (AldeiaConfiguration each : new AldeiaConfiguration[] {c, d}) {
            assertEquals(Optional.empty(), each.socketType());
            assertEquals(65536, each.mtu());
            assertEquals(OptionalInt.empty(), each.deckId());
            assertEquals(OptionalInt.empty(), each.deckNodes());
            assertFalse(each.isStaticDeck());
            assertEquals("auto", each.deckTransport());
            assertEquals(1, each.infinibandPort());
            assertEquals(0, each.infinibandQos());
            assertEquals(1 << 20, each.sendRegionSize());
            assertEquals(8, each.receiveBuffers());
        }
        assertEquals(dir.resolve("nodes").toAbsolutePath(), c.deckFile());
        assertEquals("defaults", d.source());
        assertFalse(d.fromFile());
        assertSame(SocketRules.defaults(), c.rules());
        assertSame(SocketRules.defaults(), d.rules());
    }

    @Test
    void relativeDeckFileIsResolvedAgainstTheConfigurationDirectoryAndAbsoluteKept() throws IOException {
        Path sub = Files.createDirectories(dir.resolve("conf"));
        Path file = sub.resolve("node0.conf");
        Files.writeString(file, "deck_file = ../cluster/nodes\n");
        assertEquals(sub.toAbsolutePath().resolve("../cluster/nodes"), AldeiaConfiguration.parse(file).deckFile());
        assertEquals(Path.of("/etc/aldeia/nodes"), parse("deck_file = /etc/aldeia/nodes").deckFile());
    }

    @Test
    void toStringListsTheValues() throws IOException {
        secret();
        String text = parse("socket_type = SOCKET_DECK", "mtu = 512", "deck_id = 1", "deck_nodes = 4",
                "deck_secret_file = run.secret").toString();
        for (String expected : new String[] {"socket_type=SOCKET_DECK", "mtu=512", "deck_id=1", "deck_nodes=4",
                "deck_transport=auto", "infiniband_port=1", "infiniband_qos=0", "send_region_size=1048576",
                "receive_buffers=8", "aldeia.conf"}) {
            assertTrue(text.contains(expected), text);
        }
        assertTrue(AldeiaConfiguration.defaults().toString().contains("socket_type=(automatic)"));
    }

    private static InetSocketAddress at(String literal, int port) throws IOException {
        return new InetSocketAddress(InetAddress.getByName(literal), port);
    }

    @Test
    void rulesAreReadAmongKeysInFileOrder() throws IOException {
        AldeiaConfiguration c = parse("mtu = 2048", "# cluster network only", "connect 10.0.0.0/8 1024-*  # workers",
                "bind 10.0.0.0/8 *", "", "connect localhost 5000", "socket_type = SOCKET_DECK");
        assertEquals(2048, c.mtu());
        assertEquals(Optional.of("SOCKET_DECK"), c.socketType());
        SocketRules rules = c.rules();
        assertEquals("connect 10.0.0.0/8 1024-* (aldeia.conf:3)", rules.matchConnect(at("10.4.0.1", 5000)).orElseThrow()
                .toString());
        assertEquals("connect localhost 5000 (aldeia.conf:6)", rules.matchConnect(at("127.0.0.1", 5000)).orElseThrow()
                .toString());
        assertEquals(Optional.empty(), rules.matchConnect(at("127.0.0.1", 5001)));
        assertEquals("bind 10.0.0.0/8 * (aldeia.conf:4)", rules.matchBind(at("10.9.9.9", 0)).orElseThrow().toString());
        assertEquals(Optional.empty(), rules.matchBind(at("127.0.0.1", 80)), "the file's rules replace bind * *");
        assertTrue(c.toString().contains("rules=bind 10.0.0.0/8 * (aldeia.conf:4); connect 10.0.0.0/8 1024-* "
                + "(aldeia.conf:3); connect localhost 5000 (aldeia.conf:6)]"), c.toString());
    }

    @Test
    void aFileWithOnlyConnectRulesGetsTheDefaultBindRule() throws IOException {
        SocketRules rules = parse("connect * 5432").rules();
        assertEquals("bind * * (default: no bind rule in aldeia.conf)",
                rules.matchBind(at("127.0.0.1", 5432)).map(SocketRule::toString).orElse("none"));
        assertEquals(Optional.empty(), parse("bind 10.0.0.1 *").rules().matchBind(at("127.0.0.1", 5432)),
                "once the file has a bind rule, only its bind rules apply");
        assertTrue(rules.matchConnect(at("127.0.0.1", 5432)).isPresent());
    }

    @Test
    void defaultRulesAreShownInToString() {
        assertTrue(AldeiaConfiguration.defaults().toString()
                .contains("rules=bind * * (default: no bind rule in aldeia.conf); no connect rule"));
    }

    @Test
    void ruleErrorsNameFileLineAndRule() throws IOException {
        assertNames(parseError("mtu = 1024", "bind * *", "connect 10.0.0.1 9-3"), 3, null,
                "connect rule: port range 9-3 is empty (first port must not exceed the last)");
        assertNames(parseError("bind 10.0.0.1   # no ports"), 1, null,
                "bind rule: expected 'bind <address> <ports>' but found 'bind 10.0.0.1'");
        assertNames(parseError("", "connect 192.168.0.0/33 *"), 2, null,
                "connect rule: prefix /33 is out of range 0..32 for an IPv4 address");
        assertNames(parseError("connect localhost/8 *"), 1, null,
                "connect rule: host name 'localhost' cannot take a prefix");
    }

    @Test
    void aRuleErrorComesBeforeTheKeysAreChecked() throws IOException {
        assertNames(parseError("mtu = abc", "bind * 0"), 2, null, "bind rule: port 0 is out of range 1..65535");
    }

    @Test
    void unknownKeyIsNamed() throws IOException {
        assertNames(parseError("mtu = 1024", "", "mut = 1024"), 3, "mut", "unknown key");
    }

    @Test
    void badNumberIsNamed() throws IOException {
        AldeiaConfigurationException e = parseError("# x", "", "mtu = abc");
        assertNames(e, 3, "mtu", "'abc' is not a number");
        assertTrue(e.getMessage().endsWith("aldeia.conf:3: key 'mtu': 'abc' is not a number"), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({"mtu, 63, 64..1048576", "mtu, 1048577, 64..1048576", "deck_id, -1, 0..",
            "deck_nodes, 0, 1..", "infiniband_port, 0, 1..255", "infiniband_port, 256, 1..255",
            "infiniband_qos, 6, 0..5", "receive_buffers, 1, 2..4096", "receive_buffers, 4097, 2..4096",
            "send_region_size, 1073741825, ..1073741824", "mtu, 99999999999999999999, 64..1048576"})
    void outOfRangeIsNamed(String key, String value, String range) throws IOException {
        String other = key.equals("deck_id") ? "deck_nodes = 2" : key.equals("deck_nodes") ? "deck_id = 0" : "# -";
        AldeiaConfigurationException e = parseError(other, key + " = " + value);
        assertNames(e, 2, key, "out of range");
        assertTrue(e.getMessage().contains(range), e.getMessage());
    }

    @Test
    void theFabricKeysAreReadAndAbsentByDefault() throws IOException {
        AldeiaConfiguration c = parse("fabric_provider = tcp", "fabric_domain = eth0.100");
        assertEquals(Optional.of("tcp"), c.fabricProvider());
        assertEquals(Optional.of("eth0.100"), c.fabricDomain());
        assertEquals(Optional.empty(), AldeiaConfiguration.defaults().fabricProvider());
        assertEquals(Optional.empty(), AldeiaConfiguration.defaults().fabricDomain());
    }

    @Test
    void aFabricNameThatCouldBreakTheInitStringIsRefused() throws IOException {
        // ',' and '=' separate the library's init string; a layered provider is named by its core
        assertNames(parseError("fabric_provider = tcp;ofi_rxm"), 1, "fabric_provider",
                "'tcp;ofi_rxm' is not a libfabric provider name (1 to 63 letters, digits, _ and -)");
        assertNames(parseError("fabric_domain = lo,port=2"), 1, "fabric_domain", "is not a libfabric domain name");
        assertNames(parseError("fabric_provider = " + "v".repeat(64)), 1, "fabric_provider",
                "is not a libfabric provider name");
        assertEquals(Optional.of("v".repeat(63)), parse("fabric_provider = " + "v".repeat(63)).fabricProvider());
    }

    @Test
    void duplicateKeyNamesBothLines() throws IOException {
        assertNames(parseError("mtu = 1024", "mtu = 2048"), 2, "mtu", "given twice (first on line 1)");
    }

    @Test
    void lineWithoutEqualsIsNamed() throws IOException {
        assertNames(parseError("mtu = 1024", "socket_type SOCKET_DECK"), 2, null,
                "expected 'key = value' but found 'socket_type SOCKET_DECK' "
                        + "(rule lines are 'bind <address> <ports>' and 'connect <address> <ports>')");
        assertNames(parseError("= 5"), 1, null, "expected 'key = value'");
    }

    @Test
    void missingValueIsNamed() throws IOException {
        assertNames(parseError("mtu =   # nothing"), 1, "mtu", "the value is missing");
    }

    @Test
    void deckIdWithoutDeckNodesAndViceVersa() throws IOException {
        assertNames(parseError("mtu = 1024", "deck_id = 0"), 2, "deck_id", "deck_id is given but deck_nodes is missing");
        assertNames(parseError("deck_nodes = 2"), 1, "deck_nodes", "deck_nodes is given but deck_id is missing");
    }

    @Test
    void deckIdMustBeBelowDeckNodes() throws IOException {
        assertNames(parseError("deck_nodes = 2", "deck_id = 2"), 2, "deck_id",
                "2 must be less than deck_nodes 2 (line 1)");
    }

    @Test
    void deckTransportAcceptsAutoTcpAndSciAndExplainsReservedNames() throws IOException {
        assertEquals("auto", parse("deck_transport = auto").deckTransport());
        assertEquals("tcp", parse("deck_transport = tcp").deckTransport());
        secret();
        assertEquals("sci", parse("deck_nodes = 2", "deck_id = 0", "deck_transport = sci",
                "deck_secret_file = run.secret").deckTransport());
        assertNames(parseError("deck_transport = gm"), 1, "deck_transport",
                "not implemented in this version (allowed: auto, tcp, sci)");
        assertNames(parseError("deck_transport = udp"), 1, "deck_transport",
                "'udp' is not a DECK transport (allowed: auto, tcp, sci)");
    }

    @Test
    void aStaticRunNeedsARunSecretOnlyThisUserMayRead() throws IOException {
        assertNames(parseError("deck_nodes = 2", "deck_id = 0"), 2, "deck_id",
                "a static DECK run needs a run secret");
        Path file = secret();
        AldeiaConfiguration c = parse("deck_nodes = 2", "deck_id = 0", "deck_secret_file = run.secret");
        assertEquals(Optional.of(file.toAbsolutePath()), c.deckSecretFile());
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"));
        assertNames(parseError("deck_nodes = 2", "deck_id = 0", "deck_secret_file = run.secret"), 3,
                "deck_secret_file", "may be read or written by others ([GROUP_READ]); it must be mode 0600");
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Files.writeString(file, "short");
        assertNames(parseError("deck_secret_file = run.secret"), 1, "deck_secret_file", "holds 5 bytes, not 16..4096");
        assertNames(parseError("deck_secret_file = absent"), 1, "deck_secret_file", "cannot be read");
        assertNames(parseError("deck_secret_file = ."), 1, "deck_secret_file", "is not a regular file");
    }

    @Test
    void encryptionIsOnOrOffAndBootstrapLimitsHaveTheirRanges() throws IOException {
        AldeiaConfiguration d = AldeiaConfiguration.defaults();
        assertFalse(d.deckTcpEncryption());
        assertEquals(3000, d.bootstrapTimeout());
        assertEquals(64, d.bootstrapPerAddress());
        AldeiaConfiguration c = parse("deck_tcp_encryption = on", "bootstrap_timeout = 500", "bootstrap_per_address = 8");
        assertTrue(c.deckTcpEncryption());
        assertEquals(500, c.bootstrapTimeout());
        assertEquals(8, c.bootstrapPerAddress());
        assertNames(parseError("deck_tcp_encryption = yes"), 1, "deck_tcp_encryption", "'yes' is neither on nor off");
        assertNames(parseError("bootstrap_timeout = 99"), 1, "bootstrap_timeout", "out of range 100..60000");
        assertNames(parseError("bootstrap_per_address = 0"), 1, "bootstrap_per_address", "out of range 1..65536");
    }

    @Test
    void theListenAddressIsAnIpv4AddressOfThisHostForDynamicRunsOnly() throws IOException {
        assertTrue(AldeiaConfiguration.defaults().deckListenAddress().isEmpty());
        assertEquals("127.0.0.2", parse("deck_listen_address = 127.0.0.2").deckListenAddress().orElseThrow());
        assertEquals("::1", parse("deck_listen_address = ::1").deckListenAddress().orElseThrow());
        assertEquals("[::1]", parse("deck_listen_address = [::1]").deckListenAddress().orElseThrow());
        assertNames(parseError("deck_listen_address = 2001:db8::7"), 1, "deck_listen_address",
                "2001:db8::7 is not an address of this host");
        assertNames(parseError("deck_listen_address = ::1::2"), 1, "deck_listen_address", "'::1::2' cannot be checked");
        assertNames(parseError("deck_listen_address = cluster.example"), 1, "deck_listen_address",
                "'cluster.example' is not an IPv4 address");
        assertNames(parseError("deck_listen_address = 10.1.0.256"), 1, "deck_listen_address", "is not an IPv4 address");
        assertNames(parseError("deck_listen_address = 192.0.2.7"), 1, "deck_listen_address",
                "192.0.2.7 is not an address of this host"); // TEST-NET-1: never a host's
        secret();
        assertNames(parseError("deck_nodes = 2", "deck_id = 0", "deck_secret_file = run.secret",
                "deck_listen_address = 127.0.0.1"), 4, "deck_listen_address", "listens on its address in the nodes file");
    }

    @Test
    void sciWithoutAStaticRunPointsToAuto() throws IOException {
        assertNames(parseError("mtu = 1024", "deck_transport = sci"), 2, "deck_transport",
                "'sci' needs a static DECK run (deck_id and deck_nodes)");
    }

    @Test
    void sciThresholdsDefaultToDecksAndAreRead() throws IOException {
        assertEquals(DeckSciThresholds.DEFAULTS, parse("mtu = 1024").sciThresholds());
        assertEquals(new DeckSciThresholds(4096, 8192, 1 << 20),
                parse("deck_msg_buf_limit = 4096", "deck_medbuf_size = 8192", "deck_mseg_size = 1048576")
                        .sciThresholds());
    }

    @Test
    void protocolTwoBufferMustHoldTheLargestProtocolTwoMessage() throws IOException {
        assertNames(parseError("deck_msg_buf_limit = 8192", "deck_medbuf_size = 8200"), 2, "deck_medbuf_size",
                "deck_medbuf_size 8200 must be at least deck_msg_buf_limit 8192 rounded up to 64, plus 64 (8256");
        assertNames(parseError("# default medbuf 532992", "deck_msg_buf_limit = 600000"), 2, "deck_msg_buf_limit",
                "deck_medbuf_size 532992 must be at least deck_msg_buf_limit 600000 rounded up to 64, plus 64 (600064");
        // DECK rounds the limit up to whole 64-byte lines: limit + 64 is too little when the
        // limit is not a multiple of 64 (deck_init refused 8264 for a limit of 8200)
        assertNames(parseError("deck_msg_buf_limit = 8200", "deck_medbuf_size = 8264"), 2, "deck_medbuf_size",
                "deck_msg_buf_limit 8200 rounded up to 64, plus 64 (8320");
        assertEquals(new DeckSciThresholds(8200, 8320, 1 << 20),
                parse("deck_msg_buf_limit = 8200", "deck_medbuf_size = 8320", "deck_mseg_size = 1048576")
                        .sciThresholds());
        assertNames(parseError("deck_mseg_size = 1000"), 1, "deck_mseg_size", "out of range");
    }

    @Test
    void socketTypeMustLookLikeOne() throws IOException {
        assertEquals(Optional.of("SOCKET_VAPI"), parse("socket_type = SOCKET_VAPI").socketType());
        assertNames(parseError("socket_type = vapi"), 1, "socket_type", "'vapi' is not a socket type");
    }

    @Test
    void sendRegionMustHoldOneBlock() throws IOException {
        assertEquals(4096, parse("mtu = 4096", "send_region_size = 4096").sendRegionSize());
        assertNames(parseError("mtu = 4096", "send_region_size = 2048"), 2, "send_region_size",
                "2048 is smaller than mtu 4096");
    }

    @Test
    void missingFileIsNamed() {
        Path missing = dir.resolve("absent.conf");
        AldeiaConfigurationException e = assertThrows(AldeiaConfigurationException.class,
                () -> AldeiaConfiguration.parse(missing));
        assertTrue(e.getMessage().contains(missing.toString()) && e.getMessage().contains("does not exist"),
                e.getMessage());
    }

    @Test
    void loadReadsTheFileNamedByThePropertyOrDefaults() throws IOException {
        String saved = System.getProperty(AldeiaConfiguration.PROPERTY);
        try {
            System.clearProperty(AldeiaConfiguration.PROPERTY);
            assertEquals("defaults", AldeiaConfiguration.load().source());

            System.setProperty(AldeiaConfiguration.PROPERTY, write("mtu = 4096").toString());
            assertEquals(4096, AldeiaConfiguration.load().mtu());

            Path missing = dir.resolve("nowhere.conf");
            System.setProperty(AldeiaConfiguration.PROPERTY, missing.toString());
            AldeiaConfigurationException e = assertThrows(AldeiaConfigurationException.class, AldeiaConfiguration::load);
            assertTrue(e.getMessage().contains("aldeia.configuration") && e.getMessage().contains(missing.toString())
                    && e.getMessage().contains("does not exist"), e.getMessage());
        } finally {
            if (saved == null) {
                System.clearProperty(AldeiaConfiguration.PROPERTY);
            } else {
                System.setProperty(AldeiaConfiguration.PROPERTY, saved);
            }
        }
    }
}
