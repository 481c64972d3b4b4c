package org.aldeia.core.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The settings of one JVM's Aldeia environment (thesis 4.4.1), read from the file named by the
 * system property {@code aldeia.configuration}, or the defaults when there is none.
 *
 * <p>File format: {@code key = value} lines; {@code #} starts a comment (a whole line or the
 * rest of one); blank lines are ignored. The keys are {@link ConfigurationKey}'s. It may also
 * hold {@code bind <address> <ports>} and {@code connect <address> <ports>} rules saying which
 * server sockets and which connecting sockets use Aldeia where it is installed JVM-wide
 * ({@link #rules()}). A file Aldeia cannot use raises {@link AldeiaConfigurationException} whose
 * message names the file, the line and the key or rule. Instances are immutable.
 */
public final class AldeiaConfiguration {

    public static final String SOCKET_VAPI = "SOCKET_VAPI";
    public static final String SOCKET_DECK = "SOCKET_DECK";

    /** The system property naming the configuration file. */
    public static final String PROPERTY = "aldeia.configuration";

    /**
     * The thesis chose 1024 (4.4.1: 87% of the messages of scientific codes are shorter), for
     * an HCA that cut messages into packets of that size anyway. Here a block costs a descriptor,
     * a completion and a receive buffer on the way, whatever its size, while a small message
     * costs the same under any mtu: with 1 KiB blocks a 64 KiB write was 64 of each, and
     * streaming ran at 3.5 GB/s against 8.4 with 64 KiB blocks (and the DECK sizes below);
     * measured with both JVMs pinned and free. The memory a socket may use grows accordingly
     * (receive_buffers × mtu, touched only as data arrives). {@code --mtu} still reproduces the
     * thesis's sweeps.
     */
    public static final int DEFAULT_MTU = 65536;
    public static final int MIN_MTU = 64;
    public static final int MAX_MTU = 1 << 20;

    /** Where {@link #source()} says the settings came from when there is no file. */
    public static final String DEFAULTS_SOURCE = "defaults";

    private final String source;
    private final Map<ConfigurationKey, Object> values;
    private final SocketRules rules;

    private AldeiaConfiguration(String source, Map<ConfigurationKey, Object> values, SocketRules rules) {
        this.source = source;
        this.values = values;
        this.rules = rules;
    }

    /**
     * Every key's default, then {@code given} over them (keys without a default stay absent
     * unless given); the values must be what {@link ConfigurationKey#value()} makes.
     */
    static AldeiaConfiguration of(String source, Map<ConfigurationKey, Object> given, SocketRules rules) {
        Map<ConfigurationKey, Object> values = new EnumMap<>(ConfigurationKey.class);
        for (ConfigurationKey key : ConfigurationKey.values()) {
            if (key.defaultValue() != null) {
                values.put(key, key.defaultValue());
            }
        }
        values.putAll(given);
        return new AldeiaConfiguration(source, Collections.unmodifiableMap(values), rules);
    }

    /**
     * The configuration of this JVM: the file named by the system property
     * {@value #PROPERTY}, or {@link #defaults()} when the property is not set.
     *
     * @throws AldeiaConfigurationException if the property is set but names no readable file,
     *     or the file is not valid
     */
    public static AldeiaConfiguration load() throws AldeiaConfigurationException {
        String name = System.getProperty(PROPERTY);
        if (name == null) {
            return defaults();
        }
        String where = "system property " + PROPERTY;
        if (name.isBlank()) {
            throw new AldeiaConfigurationException(where, 0, null, "is set but empty; name a file or leave it unset");
        }
        Path file = Path.of(name);
        if (!Files.isRegularFile(file)) {
            throw new AldeiaConfigurationException(where, 0, null, "names " + file.toAbsolutePath()
                    + (Files.exists(file) ? ", which is not a regular file" : ", which does not exist"));
        }
        return parse(file);
    }

    /**
     * Reads one configuration file; paths in it are resolved against its directory.
     *
     * @throws AldeiaConfigurationException naming the file, line and key of the first error
     */
    public static AldeiaConfiguration parse(Path file) throws AldeiaConfigurationException {
        return ConfigurationFileParser.parse(Objects.requireNonNull(file, "file"));
    }

    /**
     * The settings without a file: the socket type is chosen automatically, every key's default
     * (mtu 1024, InfiniBand port 1 and service level 0: the thesis's), dynamic DECK,
     * {@link SocketRules#defaults()}.
     */
    public static AldeiaConfiguration defaults() {
        return of(DEFAULTS_SOURCE, Map.of(), SocketRules.defaults());
    }

    /** Whether the settings came from a file rather than {@link #defaults()}. */
    public boolean fromFile() {
        return !DEFAULTS_SOURCE.equals(source);
    }

    /** Where the settings came from: the file's path, or "defaults". */
    public String source() { return source; }

    /** {@code SOCKET_VAPI} or {@code SOCKET_DECK}; empty when Aldeia chooses by itself. */
    public Optional<String> socketType() { return Optional.ofNullable((String) values.get(ConfigurationKey.SOCKET_TYPE)); }

    /** Largest block one descriptor carries, bytes. */
    public int mtu() { return integer(ConfigurationKey.MTU); }

    /** Static DECK: this process's id; empty in dynamic mode. */
    public OptionalInt deckId() { return optionalInt(ConfigurationKey.DECK_ID); }

    /** Static DECK: number of processes; empty in dynamic mode. */
    public OptionalInt deckNodes() { return optionalInt(ConfigurationKey.DECK_NODES); }

    /** Static DECK: the nodes file, resolved against the configuration file's directory. */
    public Path deckFile() { return (Path) values.get(ConfigurationKey.DECK_FILE); }

    /**
     * Static DECK: the run secret file, resolved against the configuration file's directory and
     * checked (this user's, mode 0600); empty: the DECK_SECRET_FILE of the environment.
     */
    public Optional<Path> deckSecretFile() { return Optional.ofNullable((Path) values.get(ConfigurationKey.DECK_SECRET_FILE)); }

    /** DECK transport: {@code auto}, {@code tcp}, or {@code sci} (static runs on one host). */
    public String deckTransport() { return (String) values.get(ConfigurationKey.DECK_TRANSPORT); }

    /** Where a dynamic DECK process listens for peers on other hosts; empty: where each one's bootstrap came to. */
    public Optional<String> deckListenAddress() {
        return Optional.ofNullable((String) values.get(ConfigurationKey.DECK_LISTEN_ADDRESS));
    }

    /** Whether DECK tcp connections run TLS. */
    public boolean deckTcpEncryption() { return (Boolean) values.get(ConfigurationKey.DECK_TCP_ENCRYPTION); }

    /** Whether DECK is started statically (deck_id and deck_nodes given). */
    public boolean isStaticDeck() { return values.containsKey(ConfigurationKey.DECK_ID); }

    /** The libfabric provider of the VAPI route; empty: the first hardware provider. */
    public Optional<String> fabricProvider() {
        return Optional.ofNullable((String) values.get(ConfigurationKey.FABRIC_PROVIDER));
    }

    /** The provider's domain; empty: domain number {@link #infinibandPort()}. */
    public Optional<String> fabricDomain() {
        return Optional.ofNullable((String) values.get(ConfigurationKey.FABRIC_DOMAIN));
    }

    public int infinibandPort() { return integer(ConfigurationKey.INFINIBAND_PORT); }

    public int infinibandQos() { return integer(ConfigurationKey.INFINIBAND_QOS); }

    /** Bytes of the registered send ring per socket (thesis: 1 MiB). */
    public int sendRegionSize() { return integer(ConfigurationKey.SEND_REGION_SIZE); }

    /** MTU-sized receive buffers pre-posted per socket. */
    public int receiveBuffers() { return integer(ConfigurationKey.RECEIVE_BUFFERS); }

    public int receiveWindow() { return integer(ConfigurationKey.RECEIVE_WINDOW); }

    public int peerTimeout() { return integer(ConfigurationKey.PEER_TIMEOUT); }

    /** Milliseconds a client connection runs on TCP before its upgrade to its route; 0: set up on it at connect. */
    public int upgradeAfter() { return integer(ConfigurationKey.UPGRADE_AFTER); }

    /** Milliseconds a server socket gives a connecting client for each step of its bootstrap. */
    public int bootstrapTimeout() { return integer(ConfigurationKey.BOOTSTRAP_TIMEOUT); }

    /** Connections of one address a server socket waits on before their bootstrap's first message. */
    public int bootstrapPerAddress() { return integer(ConfigurationKey.BOOTSTRAP_PER_ADDRESS); }

    /** The sizes of DECK's sci protocols (deck_msg_buf_limit, deck_medbuf_size, deck_mseg_size). */
    public DeckSciThresholds sciThresholds() {
        return new DeckSciThresholds(integer(ConfigurationKey.DECK_MSG_BUF_LIMIT),
                integer(ConfigurationKey.DECK_MEDBUF_SIZE), integer(ConfigurationKey.DECK_MSEG_SIZE));
    }

    /**
     * Which sockets use Aldeia where it is installed JVM-wide: the file's {@code bind} and
     * {@code connect} rules, or {@link SocketRules#defaults()} when it has none.
     */
    public SocketRules rules() { return rules; }

    private int integer(ConfigurationKey key) {
        return (Integer) values.get(key);
    }

    private OptionalInt optionalInt(ConfigurationKey key) {
        Integer value = (Integer) values.get(key);
        return value == null ? OptionalInt.empty() : OptionalInt.of(value);
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("AldeiaConfiguration[source=").append(source);
        for (ConfigurationKey key : ConfigurationKey.values()) {
            Object value = values.get(key);
            String absent = key == ConfigurationKey.SOCKET_TYPE ? "(automatic)"
                    : key == ConfigurationKey.DECK_ID || key == ConfigurationKey.DECK_NODES ? "(dynamic)" : "(none)";
            s.append(", ").append(key.key()).append('=').append(value == null ? absent : value);
        }
        return s.append(", rules=").append(rules).append(']').toString();
    }
}
