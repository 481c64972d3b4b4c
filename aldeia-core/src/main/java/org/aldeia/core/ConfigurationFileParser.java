package org.aldeia.core;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads one Aldeia configuration file (thesis Fig. 4.3): {@code key = value} lines and
 * {@code bind}/{@code connect} rule lines ({@link SocketRuleParser}), {@code #} starts a comment
 * anywhere on a line, blank lines are ignored. Every error names the file,
 * the line and the key, because a cluster user edits one file per JVM and must find the bad
 * line without reading Aldeia's source.
 */
final class ConfigurationFileParser {

    static final List<String> KEYS = List.of("socket_type", "mtu", "deck_id", "deck_nodes", "deck_file",
            "deck_transport", "infiniband_port", "infiniband_qos", "send_region_size", "receive_buffers",
            "deck_msg_buf_limit", "deck_medbuf_size", "deck_mseg_size");

    /** Any provider's type name has this shape; which ones exist is decided at environment start. */
    private static final Pattern SOCKET_TYPE = Pattern.compile("SOCKET_[A-Z0-9_]+");

    /** DECK transports this version implements. */
    private static final List<String> DECK_TRANSPORTS = List.of("auto", "tcp", "sci");
    /** DECK transports of the thesis that a later version implements. */
    private static final List<String> RESERVED_DECK_TRANSPORTS = List.of("gm");

    private static final long GIB = 1L << 30;

    private record Entry(int line, String value) {}

    private final String file;
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    private final SocketRuleParser ruleParser;
    /** In file order: the first matching rule decides. */
    private final List<SocketRule> rules = new ArrayList<>();

    private ConfigurationFileParser(Path path) {
        this.file = path.toString();
        this.ruleParser = new SocketRuleParser(path);
    }

    static AldeiaConfiguration parse(Path path) throws AldeiaConfigurationException {
        ConfigurationFileParser parser = new ConfigurationFileParser(path);
        parser.readEntries(readLines(path));
        return parser.build(path.toAbsolutePath().getParent());
    }

    private static List<String> readLines(Path path) throws AldeiaConfigurationException {
        try {
            return Files.readAllLines(path, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new AldeiaConfigurationException(path.toString(), 0, null, "the configuration file does not exist", e);
        } catch (IOException e) {
            throw new AldeiaConfigurationException(path.toString(), 0, null,
                    "the configuration file cannot be read (" + e + ")", e);
        }
    }

    private void readEntries(List<String> lines) throws AldeiaConfigurationException {
        for (int i = 0; i < lines.size(); i++) {
            int lineNumber = i + 1;
            String text = stripComment(lines.get(i)).strip();
            if (text.isEmpty()) {
                continue;
            }
            if (SocketRuleParser.isRule(text)) {
                rules.add(ruleParser.parse(lineNumber, text));
                continue;
            }
            int equals = text.indexOf('=');
            if (equals <= 0) {
                throw error(lineNumber, null, "expected 'key = value' but found '" + text
                        + "' (rule lines are 'bind <address> <ports>' and 'connect <address> <ports>')");
            }
            String key = text.substring(0, equals).strip();
            String value = text.substring(equals + 1).strip();
            if (!KEYS.contains(key)) {
                throw error(lineNumber, key, "unknown key (known keys: " + String.join(", ", KEYS) + ")");
            }
            if (value.isEmpty()) {
                throw error(lineNumber, key, "the value is missing");
            }
            Entry first = entries.putIfAbsent(key, new Entry(lineNumber, value));
            if (first != null) {
                throw error(lineNumber, key, "given twice (first on line " + first.line() + ")");
            }
        }
    }

    private static String stripComment(String line) {
        int hash = line.indexOf('#');
        return hash < 0 ? line : line.substring(0, hash);
    }

    private AldeiaConfiguration build(Path directory) throws AldeiaConfigurationException {
        String socketType = socketType();
        int mtu = number("mtu", AldeiaConfiguration.DEFAULT_MTU, AldeiaConfiguration.MIN_MTU,
                AldeiaConfiguration.MAX_MTU);
        Integer deckId = optionalNumber("deck_id", 0, Integer.MAX_VALUE);
        Integer deckNodes = optionalNumber("deck_nodes", 1, Integer.MAX_VALUE);
        checkStaticDeck(deckId, deckNodes);
        Path deckFile = directory.resolve(text("deck_file", AldeiaConfiguration.DEFAULT_DECK_FILE));
        String deckTransport = deckTransport(deckId != null);
        int port = number("infiniband_port", AldeiaConfiguration.DEFAULT_INFINIBAND_PORT, 1, 255);
        int qos = number("infiniband_qos", AldeiaConfiguration.DEFAULT_INFINIBAND_QOS, 0, 15);
        int sendRegion = sendRegionSize(mtu);
        int receiveBuffers = number("receive_buffers", AldeiaConfiguration.DEFAULT_RECEIVE_BUFFERS, 2, 4096);
        return new AldeiaConfiguration(file, socketType, mtu, deckId, deckNodes, deckFile, deckTransport,
                port, qos, sendRegion, receiveBuffers, sciThresholds(), SocketRules.of(rules));
    }

    private String socketType() throws AldeiaConfigurationException {
        String value = text("socket_type", null);
        if (value != null && !SOCKET_TYPE.matcher(value).matches()) {
            throw error("socket_type", "'" + value + "' is not a socket type (" + AldeiaConfiguration.SOCKET_VAPI
                    + ", " + AldeiaConfiguration.SOCKET_DECK + " or another installed provider's SOCKET_* name)");
        }
        return value;
    }

    /** deck_id and deck_nodes start DECK statically; one without the other is a mistake. */
    private void checkStaticDeck(Integer deckId, Integer deckNodes) throws AldeiaConfigurationException {
        if (deckId != null && deckNodes == null) {
            throw error("deck_id", "deck_id is given but deck_nodes is missing");
        }
        if (deckNodes != null && deckId == null) {
            throw error("deck_nodes", "deck_nodes is given but deck_id is missing");
        }
        if (deckId != null && deckId >= deckNodes) {
            throw error("deck_id", deckId + " must be less than deck_nodes " + deckNodes
                    + " (line " + entries.get("deck_nodes").line() + ")");
        }
    }

    private String deckTransport(boolean staticDeck) throws AldeiaConfigurationException {
        String value = text("deck_transport", AldeiaConfiguration.DEFAULT_DECK_TRANSPORT);
        if ("sci".equals(value) && !staticDeck) {
            throw error("deck_transport", "'sci' needs a static DECK run (deck_id and deck_nodes); without them "
                    + "leave it out or write auto, which reaches peers on this host through shared memory");
        }
        if (DECK_TRANSPORTS.contains(value)) {
            return value;
        }
        String allowed = "allowed: " + String.join(", ", DECK_TRANSPORTS);
        if (RESERVED_DECK_TRANSPORTS.contains(value)) {
            throw error("deck_transport", "'" + value + "' is not implemented in this version (" + allowed + ")");
        }
        throw error("deck_transport", "'" + value + "' is not a DECK transport (" + allowed + ")");
    }

    /** Protocol 2 must fit its largest message, header included, in the per-sender buffer. */
    private DeckSciThresholds sciThresholds() throws AldeiaConfigurationException {
        int limit = number("deck_msg_buf_limit", DeckSciThresholds.DEFAULT_MSG_BUF_LIMIT, 63, 1 << 24);
        int medbuf = number("deck_medbuf_size", DeckSciThresholds.DEFAULT_MEDBUF_SIZE, 128, GIB);
        int mseg = number("deck_mseg_size", DeckSciThresholds.DEFAULT_MSEG_SIZE, 1 << 16, GIB);
        if (medbuf < limit + DeckSciThresholds.PROTOCOL2_HEADER) {
            String key = entries.containsKey("deck_medbuf_size") ? "deck_medbuf_size" : "deck_msg_buf_limit";
            throw error(key, "deck_medbuf_size " + medbuf + " must be at least deck_msg_buf_limit " + limit
                    + " + " + DeckSciThresholds.PROTOCOL2_HEADER + " (a protocol-2 header and its largest body)");
        }
        return new DeckSciThresholds(limit, medbuf, mseg);
    }

    private int sendRegionSize(int mtu) throws AldeiaConfigurationException {
        int size = number("send_region_size", AldeiaConfiguration.DEFAULT_SEND_REGION_SIZE, 1, GIB);
        if (size < mtu) {
            throw error("send_region_size", size + " is smaller than mtu " + mtu
                    + " (the ring must hold at least one block)");
        }
        return size;
    }

    private String text(String key, String fallback) {
        Entry entry = entries.get(key);
        return entry == null ? fallback : entry.value();
    }

    private int number(String key, int fallback, long min, long max) throws AldeiaConfigurationException {
        Integer value = optionalNumber(key, min, max);
        return value == null ? fallback : value;
    }

    private Integer optionalNumber(String key, long min, long max) throws AldeiaConfigurationException {
        Entry entry = entries.get(key);
        if (entry == null) {
            return null;
        }
        BigInteger value;
        try {
            value = new BigInteger(entry.value());
        } catch (NumberFormatException e) {
            throw error(key, "'" + entry.value() + "' is not a number");
        }
        if (value.compareTo(BigInteger.valueOf(min)) < 0 || value.compareTo(BigInteger.valueOf(max)) > 0) {
            throw error(key, value + " is out of range " + min + ".." + max);
        }
        return value.intValueExact();
    }

    private AldeiaConfigurationException error(String key, String problem) {
        return error(entries.get(key).line(), key, problem);
    }

    private AldeiaConfigurationException error(int line, String key, String problem) {
        return new AldeiaConfigurationException(file, line, key, problem);
    }
}
