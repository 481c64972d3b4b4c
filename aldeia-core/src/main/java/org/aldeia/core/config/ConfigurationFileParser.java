package org.aldeia.core.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Reads one Aldeia configuration file (thesis Fig. 4.3): {@code key = value} lines, the keys and
 * their values as {@link ConfigurationKey} declares them, and {@code bind}/{@code connect} rule
 * lines ({@link SocketRuleParser}); {@code #} starts a comment anywhere on a line, blank lines are
 * ignored. Every error names the file, the line and the key, because a cluster user edits one
 * file per JVM and must find the bad line without reading Aldeia's source.
 */
final class ConfigurationFileParser {

    private record Entry(int line, String value) {}

    private final String file;
    private final Map<ConfigurationKey, Entry> entries = new EnumMap<>(ConfigurationKey.class);
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
            String name = text.substring(0, equals).strip();
            String value = text.substring(equals + 1).strip();
            ConfigurationKey key = ConfigurationKey.named(name);
            if (key == null) {
                throw error(lineNumber, name, "unknown key (known keys: " + ConfigurationKey.names() + ")");
            }
            if (value.isEmpty()) {
                throw error(lineNumber, name, "the value is missing");
            }
            Entry first = entries.putIfAbsent(key, new Entry(lineNumber, value));
            if (first != null) {
                throw error(lineNumber, name, "given twice (first on line " + first.line() + ")");
            }
        }
    }

    private static String stripComment(String line) {
        int hash = line.indexOf('#');
        return hash < 0 ? line : line.substring(0, hash);
    }

    private AldeiaConfiguration build(Path directory) throws AldeiaConfigurationException {
        Map<ConfigurationKey, Object> values = new EnumMap<>(ConfigurationKey.class);
        for (Map.Entry<ConfigurationKey, Entry> given : entries.entrySet()) {
            ConfigurationKey key = given.getKey();
            try {
                values.put(key, key.value().parse(given.getValue().value(), directory));
            } catch (ConfigurationValue.Problem problem) {
                throw error(key, problem.getMessage());
            }
        }
        for (ConfigurationKey key : ConfigurationKey.values()) {
            if (!values.containsKey(key) && key.defaultValue() instanceof Path path) {
                values.put(key, directory.resolve(path)); // a default path is the file's neighbour too
            }
        }
        AldeiaConfiguration configuration = AldeiaConfiguration.of(file, values, SocketRules.of(rules));
        checkStaticDeck(configuration);
        checkSizes(configuration);
        return configuration;
    }

    /** deck_id and deck_nodes start DECK statically: both or neither, with a run secret, listening where the nodes file says. */
    private void checkStaticDeck(AldeiaConfiguration c) throws AldeiaConfigurationException {
        boolean id = entries.containsKey(ConfigurationKey.DECK_ID), nodes = entries.containsKey(ConfigurationKey.DECK_NODES);
        if (id && !nodes) {
            throw error(ConfigurationKey.DECK_ID, "deck_id is given but deck_nodes is missing");
        }
        if (nodes && !id) {
            throw error(ConfigurationKey.DECK_NODES, "deck_nodes is given but deck_id is missing");
        }
        if (id && c.deckId().getAsInt() >= c.deckNodes().getAsInt()) {
            throw error(ConfigurationKey.DECK_ID, c.deckId().getAsInt() + " must be less than deck_nodes "
                    + c.deckNodes().getAsInt() + " (line " + entries.get(ConfigurationKey.DECK_NODES).line() + ")");
        }
        if ("sci".equals(c.deckTransport()) && !id) {
            throw error(ConfigurationKey.DECK_TRANSPORT, "'sci' needs a static DECK run (deck_id and deck_nodes); "
                    + "without them leave it out or write auto, which reaches peers on this host through shared memory");
        }
        if (id && entries.containsKey(ConfigurationKey.DECK_LISTEN_ADDRESS)) {
            throw error(ConfigurationKey.DECK_LISTEN_ADDRESS, "a static DECK run listens on its address in the nodes "
                    + "file (deck_file); deck_listen_address is for dynamic runs");
        }
        if (id && c.deckSecretFile().isEmpty() && System.getenv("DECK_SECRET_FILE") == null) {
            throw error(ConfigurationKey.DECK_ID, "a static DECK run needs a run secret: name a file of random bytes, "
                    + "mode 0600, the same for every JVM of the run, with deck_secret_file (or start the JVMs with "
                    + "deckrun, which makes one)");
        }
    }

    private void checkSizes(AldeiaConfiguration c) throws AldeiaConfigurationException {
        if (c.sendRegionSize() < c.mtu()) {
            throw error(ConfigurationKey.SEND_REGION_SIZE, c.sendRegionSize() + " is smaller than mtu " + c.mtu()
                    + " (the ring must hold at least one block)");
        }
        DeckSciThresholds sci = c.sciThresholds();
        long smallest = DeckSciThresholds.smallestMedbuf(sci.msgBufLimit());
        if (sci.medbufSize() < smallest) {
            ConfigurationKey key = entries.containsKey(ConfigurationKey.DECK_MEDBUF_SIZE)
                    ? ConfigurationKey.DECK_MEDBUF_SIZE : ConfigurationKey.DECK_MSG_BUF_LIMIT;
            throw error(key, "deck_medbuf_size " + sci.medbufSize() + " must be at least deck_msg_buf_limit "
                    + sci.msgBufLimit() + " rounded up to " + DeckSciThresholds.LINE + ", plus "
                    + DeckSciThresholds.LINE + " (" + smallest + ": a protocol-2 header line and its largest body)");
        }
    }

    private AldeiaConfigurationException error(ConfigurationKey key, String problem) {
        return error(entries.get(key).line(), key.key(), problem);
    }

    private AldeiaConfigurationException error(int line, String key, String problem) {
        return new AldeiaConfigurationException(file, line, key, problem);
    }
}
